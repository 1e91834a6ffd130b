package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/textkit"
)

// stageWriteAndReview drafts the report, then loops: review, human gate,
// targeted research, revision; bounded by --max-revisions and the budgets.
// Every step is checkpointed by round, so a resume walks the finished
// rounds from the store and continues where it stopped.
func (o *orchestrator) stageWriteAndReview(ctx context.Context) error {
	start := o.stageStart(StageWrite, "writing the report")
	var draft string
	if ok, err := o.loadCheckpoint("write/0", &draft); err != nil {
		return err
	} else if !ok {
		if draft, err = o.write(ctx, 0, "", nil, ""); err != nil {
			return err
		}
		if err := o.checkpoint("write/0", draft); err != nil {
			return err
		}
	}
	if err := o.stageDone(StageWrite, start, "draft ready"); err != nil {
		return err
	}
	if o.opt.Verify != runopts.VerifyOff {
		verifyStart := o.stageStart(StageVerify, "checking every cited sentence against its sources")
		var err error
		if draft, err = o.verifyDraft(ctx, 0, draft); err != nil {
			return err
		}
		if err := o.stageDone(StageVerify, verifyStart, o.verifiedText()); err != nil {
			return err
		}
	}
	o.st.Drafts = append(o.st.Drafts, draft)
	o.emit(Event{Type: DraftReady, Stage: StageWrite, Text: draft, Count: 0})
	if !o.plan.Review {
		return nil
	}
	reviewStart := o.stageStart(StageReview, "reviewing the draft")
	for round := 1; ; round++ {
		if o.cut.passed() {
			o.warn(StageReview, "", "%s: the draft is finalised without further review", o.cut.reason())
			break
		}
		var rv ReviewRequest
		if ok, err := o.loadCheckpoint(fmt.Sprintf("review/%d", round), &rv); err != nil {
			return err
		} else if !ok {
			if o.meter.exhausted() {
				o.budgetWarn(StageReview, fmt.Errorf("%w", errBudget))
				break
			}
			if rv, err = o.review(ctx, round, draft); err != nil {
				return err
			}
			if err := o.checkpoint(fmt.Sprintf("review/%d", round), rv); err != nil {
				return err
			}
		}
		o.st.Reviews = append(o.st.Reviews, rv)
		if rv.Approved {
			break
		}
		if round > o.opt.MaxRevisions {
			o.warn(StageReview, "", "the reviewer still asks for changes after %d revisions (--max-revisions); finalising the last draft", o.opt.MaxRevisions)
			break
		}
		var d Decision
		if ok, err := o.loadCheckpoint(fmt.Sprintf("decision/%d", round), &d); err != nil {
			return err
		} else if !ok {
			if d, err = o.gate(ctx, rv); err != nil {
				return err
			}
			if err := o.checkpoint(fmt.Sprintf("decision/%d", round), d); err != nil {
				return err
			}
			o.emit(Event{Type: ReviewDecided, Stage: StageReview, Decision: &d, Message: decisionText(rv, d)})
		}
		o.st.Decisions = append(o.st.Decisions, d)
		accepted := acceptedRequests(rv, d)
		if !d.Approve || (len(accepted) == 0 && d.Note == "") {
			break
		}
		if err := o.gatherEvidence(ctx, round, accepted); err != nil {
			return err
		}
		name := fmt.Sprintf("write/%d", round)
		if ok, err := o.loadCheckpoint(name, &draft); err != nil {
			return err
		} else if !ok {
			if draft, err = o.write(ctx, round, draft, accepted, d.Note); err != nil {
				return err
			}
			if err := o.checkpoint(name, draft); err != nil {
				return err
			}
		}
		verified, err := o.verifyDraft(ctx, round, draft)
		if err != nil {
			return err
		}
		draft = verified
		o.st.Drafts = append(o.st.Drafts, draft)
		o.emit(Event{Type: DraftReady, Stage: StageWrite, Text: draft, Count: round})
	}
	return o.stageDone(StageReview, reviewStart, textkit.Plural(len(o.st.Reviews), "review round", "review rounds"))
}

func decisionText(rv ReviewRequest, d Decision) string {
	if !d.Approve {
		return "revisions rejected; the draft is finalised as it is"
	}
	return fmt.Sprintf("%d of %d revision requests accepted", len(acceptedRequests(rv, d)), len(rv.Requests))
}

const reviewSchema = `{
  "type": "object",
  "properties": {
    "approved": {"type": "boolean"},
    "summary": {"type": "string"},
    "requests": {"type": "array", "maxItems": 6, "items": {"type": "object",
      "properties": {
        "kind": {"type": "string", "enum": ["missing_evidence", "unsupported_claim", "structure", "clarity"]},
        "section": {"type": "string"},
        "text": {"type": "string"}
      },
      "required": ["kind", "section", "text"]}}
  },
  "required": ["approved", "summary", "requests"]
}`

const reviewerSystem = `You are the reviewer agent of a research assistant. Criticise the draft report against the question, the sub-questions and the numbered sources. Check: every sub-question is covered; every cited claim is supported by the cited source; contradictions between sources are reported; the structure is clear. Answer with JSON only: "approved" (true when the draft is good enough to publish), "summary" (one or two sentences), "requests" (at most 6 concrete revision requests, each with "kind": missing_evidence | unsupported_claim | structure | clarity, the target "section", and the "text" of what to change). An approved draft has no requests.`

// review asks the reviewer about a draft, with the problems code can find
// on its own (uncovered sub-questions, weakly supported citations) spelled
// out so a small model doesn't have to find them.
func (o *orchestrator) review(ctx context.Context, round int, draft string) (ReviewRequest, error) {
	a := o.startAgent(StageReview, fmt.Sprintf("reviewer (round %d)", round), "checking coverage, grounding and structure")
	var user strings.Builder
	fmt.Fprintf(&user, "%s\n\nDraft:\n<<<\n%s\n>>>\n", reviewerSystem+o.reviewLanguage(), draft)
	if issues := o.draftIssues(draft); len(issues) > 0 {
		user.WriteString("\nAutomatic checks found:\n")
		for _, s := range issues {
			fmt.Fprintf(&user, "- %s\n", s)
		}
	}
	req := llm.ChatRequest{
		Messages:    []llm.Message{{Role: "system", Content: o.reportContext()}, {Role: "user", Content: user.String()}},
		Schema:      json.RawMessage(reviewSchema),
		Temperature: ptr(0.1),
	}
	type verdict struct {
		Approved bool              `json:"approved"`
		Summary  string            `json:"summary"`
		Requests []RevisionRequest `json:"requests"`
	}
	validate := func(v *verdict) error {
		for i, r := range v.Requests {
			if strings.TrimSpace(r.Text) == "" {
				return fmt.Errorf("requests[%d].text is empty", i)
			}
		}
		return nil
	}
	fallback := func() verdict {
		return verdict{Approved: true, Summary: "The reviewer's answer was unusable; the draft is accepted as it is."}
	}
	v, info, err := structured(ctx, a, req, validate, fallback)
	if fatal(ctx, err) {
		a.fail()
		return ReviewRequest{}, err
	}
	o.budgetWarn(StageReview, err)
	if info.Fallback {
		a.warnUnusable("the reviewer's answer was unusable; the draft is accepted without review")
	}
	rv := ReviewRequest{Round: round, Approved: v.Approved || len(v.Requests) == 0, Summary: textkit.CleanLine(v.Summary)}
	if !rv.Approved {
		for i, r := range v.Requests {
			kind := r.Kind
			switch kind {
			case KindMissingEvidence, KindUnsupportedClaim, KindStructure, KindClarity:
			default:
				kind = KindClarity
			}
			rv.Requests = append(rv.Requests, RevisionRequest{
				ID: fmt.Sprintf("r%d.%d", round, i+1), Kind: kind,
				Section: textkit.CleanLine(r.Section), Text: textkit.CleanLine(r.Text),
			})
		}
	}
	verdictText := "approved"
	if !rv.Approved {
		verdictText = fmt.Sprintf("%d revision requests", len(rv.Requests))
	}
	a.finish(verdictText)
	return rv, nil
}

// reviewLanguage tells the reviewer the report's language, so it does not
// ask for a translation.
func (o *orchestrator) reviewLanguage() string {
	if o.opt.Language == "" {
		return ""
	}
	n := runopts.LanguageName(o.opt.Language)
	return fmt.Sprintf(" The report is written in %s on purpose: do not ask for another language; write your requests in %s or English.", n, n)
}

// draftIssues are problems found by code: sub-questions with no section,
// citations that resolve to nothing, cited sentences the source doesn't
// seem to support.
func (o *orchestrator) draftIssues(draft string) []string {
	var out []string
	var headings []string
	for _, line := range strings.Split(draft, "\n") {
		if strings.HasPrefix(line, "## ") {
			headings = append(headings, line[3:])
		}
	}
	for _, sq := range o.st.Plan.SubQuestions {
		covered := false
		for _, h := range headings {
			if textkit.Overlap(sq.Question, textkit.WordSet(h)) >= 0.5 {
				covered = true
				break
			}
		}
		if !covered && !o.plan.Concise && !o.plan.LitReview { // a review is by theme
			out = append(out, fmt.Sprintf("no section covers the sub-question %q", sq.Question))
		}
	}
	checked := report.CheckCitations(draft, len(o.st.Analyses))
	if checked.Removed > 0 {
		out = append(out, textkit.Plural(checked.Removed, "citation points", "citations point")+" to source numbers that do not exist")
	}
	var unsupported []string
	if o.opt.Language == "" { // word overlap says nothing across languages
		unsupported = o.unsupportedSentences(draft)
	}
	for i, s := range unsupported {
		if i == 5 {
			break
		}
		out = append(out, fmt.Sprintf("weakly supported by its citation: %q", textkit.Clip(s, 200)))
	}
	return out
}

// gate puts a review to the person (or to the headless policy) and waits.
// The pending review is saved first, so quitting leaves the session
// awaiting review and a resume asks again.
func (o *orchestrator) gate(ctx context.Context, rv ReviewRequest) (Decision, error) {
	if o.decision != nil {
		d := *o.decision
		o.decision = nil
		return d, nil
	}
	raw, err := json.Marshal(rv)
	if err != nil {
		return Decision{}, err
	}
	if _, err := o.engine.Store.UpdateSession(o.session.ID, func(s *store.Session) error {
		s.Status = store.StatusAwaitingReview
		s.PendingReview = raw
		return nil
	}); err != nil {
		return Decision{}, err
	}
	r := o.run
	r.mu.Lock()
	r.pending = &rv
	r.mu.Unlock()
	stage, agent := StageReview, "reviewer"
	if rv.Plan != nil {
		stage, agent = StagePlan, "planner"
	}
	o.emit(Event{Type: ReviewRequested, Stage: stage, Agent: agent, Review: &rv, Message: rv.Summary})
	o.run.em.flush()
	select {
	case d := <-r.decision:
		if _, err := o.engine.Store.UpdateSession(o.session.ID, func(s *store.Session) error {
			s.Status = store.StatusRunning
			s.PendingReview = nil
			return nil
		}); err != nil {
			return Decision{}, err
		}
		return d, nil
	case <-ctx.Done():
		r.mu.Lock()
		r.pending = nil
		r.mu.Unlock()
		if errors.Is(context.Cause(ctx), errCancelledByPerson) {
			return Decision{}, ctx.Err() // the person cancelled the run, not the program its wait
		}
		return Decision{}, errSuspended
	}
}

// acceptedRequests are the requests a decision accepts: all of them when
// it names none.
func acceptedRequests(rv ReviewRequest, d Decision) []RevisionRequest {
	if !d.Approve {
		return nil
	}
	if len(d.Accepted) == 0 {
		return rv.Requests
	}
	ok := map[string]bool{}
	for _, id := range d.Accepted {
		ok[id] = true
	}
	var out []RevisionRequest
	for _, r := range rv.Requests {
		if ok[r.ID] {
			out = append(out, r)
		}
	}
	return out
}
