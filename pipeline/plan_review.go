package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/textkit"
)

// The plan review (--review-plan ask): after planning, before anything is
// searched, the run stops at the review gate the reviewer uses (gate in
// review.go: the session awaits review, a resume asks again) with the plan
// as a ReviewRequest. The person answers with the plan as they left it:
// sub-questions edited, deleted or added, queries rewritten, sources
// toggled. Queries for an added sub-question come from the planner, in one
// small call for all of them.

// CheckpointPlanReview holds what became of the plan at its review (read
// by sessions show before the run has a report).
const CheckpointPlanReview = "plan_review"

// MaxPlanSubQuestions bounds a plan a person edited (the planner's own is
// bounded by the depth).
const MaxPlanSubQuestions = 8

// PlanEdit is a plan as the person left it at its review.
type PlanEdit struct {
	SubQuestions []PlanItem `json:"sub_questions"`
	Sources      []string   `json:"sources"`
}

// PlanItem is one sub-question of an edited plan. ID names the planner's
// sub-question it was (empty: added by the person); Queries nil keeps the
// planner's queries, or asks the planner for an added one's.
type PlanItem struct {
	ID       string   `json:"id,omitempty"`
	Question string   `json:"question"`
	Queries  []string `json:"queries,omitempty"`
}

// PlanReview is what became of the plan at its review, for sessions show.
type PlanReview struct {
	AsWritten bool     `json:"as_written"` // approved without a change
	Edited    []string `json:"edited,omitempty"`
	Deleted   []string `json:"deleted,omitempty"`
	Added     []string `json:"added,omitempty"`
	Sources   []string `json:"sources"` // searched after the review
	Dropped   []string `json:"sources_dropped,omitempty"`
}

// Text is the review in one line ("approved as written"; "1 edited, 1
// deleted, 1 added; sources arxiv, openalex").
func (pr PlanReview) Text() string {
	if pr.AsWritten {
		return "approved as written"
	}
	var parts []string
	for _, c := range []struct {
		n    int
		what string
	}{{len(pr.Edited), "edited"}, {len(pr.Deleted), "deleted"}, {len(pr.Added), "added"}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	s := strings.Join(parts, ", ")
	if s == "" {
		s = "sub-questions unchanged"
	}
	return s + "; sources " + strings.Join(pr.Sources, ", ")
}

// reviewPlan puts the plan to the person when the run asks for it, and
// applies their edits. A plan reviewed before (a resume) is not asked
// again; a follow-up's plan is not reviewed.
func (o *orchestrator) reviewPlan(ctx context.Context) error {
	if o.opt.ReviewPlan != runopts.ReviewAsk || o.follow != nil {
		return nil
	}
	var pr PlanReview
	if ok, err := o.loadCheckpoint(CheckpointPlanReview, &pr); err != nil || ok {
		if ok {
			o.st.PlanReview = &pr
		}
		return err
	}
	p := o.st.Plan
	rv := ReviewRequest{Plan: p, Summary: textkit.Plural(len(p.SubQuestions), "sub-question", "sub-questions") + ", searching " + strings.Join(p.Sources, ", ")}
	d, err := o.gate(ctx, rv)
	if err != nil {
		return err
	}
	edited, pr, err := o.applyPlanEdit(ctx, *p, d.Plan)
	if err != nil {
		return err
	}
	if err := o.checkpoint("plan", edited); err != nil {
		return err
	}
	if err := o.checkpoint(CheckpointPlanReview, pr); err != nil {
		return err
	}
	o.st.Plan, o.st.PlanReview = &edited, &pr
	o.emit(Event{Type: ReviewDecided, Stage: StagePlan, Decision: &d, Message: "plan " + pr.Text()})
	return nil
}

// applyPlanEdit makes the edited plan. What the person wrote is cleaned
// like the planner's answer; an edit that leaves no sub-question, or no
// source this process can search, keeps the planner's (with a warning).
func (o *orchestrator) applyPlanEdit(ctx context.Context, p Plan, e *PlanEdit) (Plan, PlanReview, error) {
	if e == nil {
		return p, PlanReview{AsWritten: true, Sources: p.Sources}, nil
	}
	var pr PlanReview
	byID := map[string]SubQuestion{}
	for _, sq := range p.SubQuestions {
		byID[sq.ID] = sq
	}
	kept := map[string]bool{}
	var out []SubQuestion
	var needQueries []int
	for _, it := range e.SubQuestions {
		q := textkit.CleanLine(textkit.Clip(it.Question, 300))
		if !textkit.Plausible(q, 2) || len(out) == MaxPlanSubQuestions {
			continue
		}
		sq, ok := byID[it.ID]
		switch {
		case ok && !kept[it.ID]:
			kept[it.ID] = true
			// Compared as cleaned alike: a planner's long sub-question (the
			// whole question, when its answer was unusable) is no edit.
			if q != textkit.CleanLine(textkit.Clip(sq.Question, 300)) || (it.Queries != nil && !slices.Equal(personQueries(it.Queries), personQueries(sq.Queries.tiers()))) {
				pr.Edited = append(pr.Edited, q)
				sq.Question = q
			} else {
				it.Queries = nil // as written: the planner's queries stay
			}
		default:
			sq = SubQuestion{Question: q, Slots: append([]string(nil), defaultSlots...)}
			pr.Added = append(pr.Added, q)
			if len(personQueries(it.Queries)) == 0 {
				needQueries = append(needQueries, len(out))
			}
		}
		if qs := personQueries(it.Queries); len(qs) > 0 {
			sq.Queries = Queries{Strict: qs[0], Broad: p.CanonicalTerm}
			if len(qs) > 1 {
				sq.Queries.Moderate = qs[1]
			}
			if len(qs) > 2 {
				sq.Queries.Broad = qs[2]
			}
		}
		out = append(out, sq)
	}
	for _, sq := range p.SubQuestions {
		if !kept[sq.ID] {
			pr.Deleted = append(pr.Deleted, sq.Question)
		}
	}
	if len(out) == 0 {
		o.warn(StagePlan, "planner", "the edited plan has no sub-question left; the planner's plan is kept")
		return p, PlanReview{AsWritten: true, Sources: p.Sources}, nil
	}
	if len(needQueries) > 0 {
		if err := o.queriesFor(ctx, out, needQueries, p.CanonicalTerm); err != nil {
			return p, pr, err
		}
	}
	for i := range out {
		out[i].ID = fmt.Sprintf("q%d", i+1)
	}
	p.SubQuestions = out

	var sources []string
	seen := map[string]bool{}
	for _, s := range e.Sources {
		s = strings.ToLower(strings.TrimSpace(s))
		if _, ok := o.engine.Sources[s]; ok && !seen[s] {
			seen[s] = true
			sources = append(sources, s)
		}
	}
	if off := o.engine.SourcesNotSearched(e.Sources); len(off) > 0 {
		o.warn(StagePlan, "planner", "not searched: %s", strings.Join(off, "; "))
	}
	if len(sources) == 0 {
		o.warn(StagePlan, "planner", "the edited plan searches no source this researchtui has; the planner's sources are kept")
		sources = p.Sources
	}
	for _, s := range p.Sources {
		if !seen[s] && len(e.Sources) > 0 {
			pr.Dropped = append(pr.Dropped, s)
		}
	}
	p.Sources, pr.Sources = sources, sources
	return p, pr, nil
}

// personQueries are a person's queries, cleaned like the planner's (at
// most three: strict, moderate, broad).
func personQueries(qs []string) []string {
	out := cleanQueries(qs)
	return out[:min(len(out), 3)]
}

const addedQueriesSchema = `{
  "type": "object",
  "properties": {
    "sub_questions": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "queries": {
            "type": "object",
            "properties": {"strict": {"type": "string"}, "moderate": {"type": "string"}},
            "required": ["strict", "moderate"]
          },
          "slots": {"type": "array", "minItems": 1, "maxItems": 4, "items": {"type": "string"}}
        },
        "required": ["queries", "slots"]
      }
    }
  },
  "required": ["sub_questions"]
}`

const addedQueriesSystem = `You are the planning agent of a research assistant that searches scholarly databases and the web. A person added sub-questions to a research plan. For each numbered sub-question, in order, answer with JSON only: "queries" with two search strings for a scholarly search engine, "strict" (precise technical phrase, 3-6 words) and "moderate" (key terms, 2-4 words), no boolean operators, no quotes; and "slots": the 2-4 pieces of information a good answer needs, 1-4 words each.`

// queriesFor asks the planner for the queries and slots of the added
// sub-questions at idx; a failed call leaves them their keywords.
func (o *orchestrator) queriesFor(ctx context.Context, sqs []SubQuestion, idx []int, canonical string) error {
	var user strings.Builder
	fmt.Fprintf(&user, "Research question: %s\nAdded sub-questions:\n", o.opt.Question)
	for n, i := range idx {
		fmt.Fprintf(&user, "%d. %s\n", n+1, sqs[i].Question)
	}
	type answer struct {
		SubQuestions []struct {
			Queries Queries  `json:"queries"`
			Slots   []string `json:"slots"`
		} `json:"sub_questions"`
	}
	a := o.startAgent(StagePlan, "planner", fmt.Sprintf("queries for %d added sub-questions", len(idx)))
	req := llm.ChatRequest{
		Messages:    []llm.Message{{Role: "system", Content: addedQueriesSystem}, {Role: "user", Content: user.String()}},
		Schema:      json.RawMessage(addedQueriesSchema),
		Temperature: ptr(0.2),
	}
	valid := func(ans *answer) error {
		if len(ans.SubQuestions) != len(idx) {
			return fmt.Errorf("%d answers for %d sub-questions", len(ans.SubQuestions), len(idx))
		}
		return nil
	}
	ans, info, err := structured(ctx, a, req, valid, func() answer { return answer{} })
	if fatal(ctx, err) {
		a.fail()
		return err
	}
	for n, i := range idx {
		sq := &sqs[i]
		if !info.Fallback && n < len(ans.SubQuestions) {
			got := ans.SubQuestions[n]
			sq.Queries = Queries{Strict: cleanQuery(got.Queries.Strict), Moderate: cleanQuery(got.Queries.Moderate)}
			sq.Slots = cleanSlots(got.Slots)
		}
		if len(sq.Queries.tiers()) == 0 {
			sq.Queries.Moderate = keywords(sq.Question, 5)
		}
		if sq.Queries.Broad == "" {
			sq.Queries.Broad = canonical
		}
	}
	if info.Fallback {
		a.warnUnusable("the planner's queries for the added sub-questions were unusable; they are searched by their keywords")
	}
	a.finish(fmt.Sprintf("queries for %d sub-questions", len(idx)))
	return nil
}
