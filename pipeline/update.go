package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/textkit"
)

// An update keeps a finished report up to date (a living review): it runs
// the session's searches again (the plan as the person left it, every
// round's queries, the works citing the cited sources), keeps only works
// the session never met, screens and reads them by the same rules and
// floors, and, when some pass, writes a new version with a "What's new
// since DATE" section at the top, cited and verified like every sentence,
// and the sentences the executive summary gains from it (update_summary.go).
// Nothing met before is read or analysed again, and the earlier citation
// numbers stay. When nothing new passes, no version is written and the
// check is recorded (UpdateCheck). An update is a follow-up (followup.go)
// whose checkpoints live under "up<check>/".

// VersionUpdate is the kind of a version an update wrote.
const VersionUpdate = "update"

// checkpointUpdates holds the session's []UpdateCheck.
const checkpointUpdates = "updates"

// UpdateCheck is one check of a living review for new work (`sessions show
// --json` "updates", the timeline).
type UpdateCheck struct {
	N       int       `json:"n"` // 1 for the first check
	At      time.Time `json:"at"`
	Since   time.Time `json:"since"` // the date of the version checked against
	Queries int       `json:"queries"`
	Chased  int       `json:"chased"`            // cited sources whose citations were followed
	Seen    int       `json:"seen"`              // distinct works the searches returned
	New     int       `json:"new"`               // of them, never met by the session before
	Read    int       `json:"read"`              // new works screened in and read
	Kept    int       `json:"kept"`              // read and analysed as relevant: what the new version cites from
	Merged  []string  `json:"merged,omitempty"`  // cited sources whose published version appeared (their metadata merged)
	Version int       `json:"version,omitempty"` // the version written, 0 when none
	Reason  string    `json:"reason,omitempty"`  // why no version was written
	// Warnings are what went wrong on the way (a source that failed: its
	// works were not seen, so "nothing new" is not the whole truth).
	Warnings []string `json:"warnings,omitempty"`
	// Tokens are what the check's model calls generated and read.
	GeneratedTokens int           `json:"generated_tokens"`
	PromptTokens    int           `json:"prompt_tokens"`
	Elapsed         time.Duration `json:"elapsed"`
}

// LoadUpdateChecks lists a session's update checks, oldest first.
func LoadUpdateChecks(st store.Reader, id string) ([]UpdateCheck, error) {
	raw, ok, err := st.Checkpoint(id, checkpointUpdates)
	if err != nil || !ok {
		return nil, err
	}
	var cs []UpdateCheck
	if err := json.Unmarshal(raw, &cs); err != nil {
		return nil, fmt.Errorf("session %s has unreadable update checks: %w", id, err)
	}
	return cs, nil
}

// Update checks a finished session for new work (see the top of this
// file). A session whose last update was interrupted continues it.
func (e *Engine) Update(ctx context.Context, id string) (*Run, error) {
	if fu, err := e.pendingFollowUp(id); err != nil {
		return nil, err
	} else if fu != nil && fu.Update > 0 {
		return e.Resume(ctx, id, nil)
	}
	sess, versions, opt, err := e.finishedSession(id, nil)
	if err != nil {
		return nil, err
	}
	checks, err := LoadUpdateChecks(e.Store, id)
	if err != nil {
		return nil, err
	}
	usage0 := usageFromStore(sess.Usage)
	fu := followUp{N: len(versions) + 1, Question: sess.Question, Update: len(checks) + 1, Since: versions[len(versions)-1].CreatedAt, Usage0: &usage0}
	return e.startFollowUp(ctx, sess, opt, fu)
}

// updateStages is an update's run: research for new work, and, when some
// is kept, the "What's new" section, its verification and the version.
func (o *orchestrator) updateStages(ctx context.Context) error {
	t0 := time.Now()
	tok0 := o.meter.totals()
	if o.follow.Usage0 != nil {
		tok0 = *o.follow.Usage0 // a resumed check counts the killed attempt's tokens too
	}
	parent, prev, plan, err := o.loadFinished()
	if err != nil {
		return err
	}
	pinned := len(o.st.Analyses)
	o.st.Plan = &plan // the plan as the person last left it: no planner call
	start := o.stageStart(StageResearch, "searching again for work since "+o.follow.Since.Format("2 Jan 2006"))
	// The session's own searches were answered hours or days ago and
	// cached: an update asks the network again.
	found, err := o.updateResearch(search.WithFreshAnswers(ctx), parent)
	if err != nil {
		return err
	}
	o.st.Analyses = append(o.st.Analyses, found.added...)
	check := found.check
	check.N, check.At, check.Since = o.follow.Update, o.engine.now(), o.follow.Since
	check.Warnings = dedupe(o.warningList())
	o.emit(Event{Type: StageFinished, Stage: StageResearch, Count: len(found.added), Elapsed: time.Since(start),
		Message: fmt.Sprintf("%s seen, %d new, %d kept", textkit.Plural(check.Seen, "work", "works"), check.New, check.Kept)})
	check.Merged = found.merged
	if len(found.added) == 0 {
		check.Reason = noneKept(check)
		o.doneMsg, o.outcome = OutcomeNothingNew+": "+check.Reason, OutcomeNothingNew
		return o.recordCheck(check, tok0, t0)
	}
	section, err := o.whatsNew(ctx, pinned)
	if err != nil {
		return err
	}
	body := report.StripReferences(prev.Report)
	for _, h := range report.MethodHeadings() {
		body = stripSection(body, h)
	}
	body = stripSection(body, report.StudiesHeading)
	head := "## " + report.WhatsNewHeading(o.opt.Language, o.follow.Since)
	heading := summaryHeading(body)
	summary, err := o.updatedSummary(ctx, body, heading, section)
	if err != nil {
		return err
	}
	if o.opt.Verify != runopts.VerifyOff {
		// One check of what this update wrote: the new section and, when
		// it changed, the summary (its old sentences were checked before).
		what, text := "checking the new section's cited sentences against their sources", head+"\n\n"+strings.TrimSpace(section)+"\n"
		if summary != "" {
			what, text = "checking the new section's and the revised summary's cited sentences against their sources", text+"\n"+heading+"\n\n"+summary+"\n"
		}
		verifyStart := o.stageStart(StageVerify, what)
		checked, err := o.verifyDraft(ctx, 0, text)
		if err != nil {
			return err
		}
		section = sectionBody(checked, head)
		if summary != "" {
			summary = sectionBody(checked, heading)
		}
		if err := o.stageDone(StageVerify, verifyStart, o.verifiedText()); err != nil {
			return err
		}
	}
	draft := atTop(body, head+"\n\n"+strings.TrimSpace(section))
	if summary != "" {
		if spliced, ok := report.SpliceSections(draft, heading+"\n\n"+summary); ok {
			draft = spliced
		}
	}
	o.st.Drafts = append(o.st.Drafts, draft)
	o.emit(Event{Type: DraftReady, Stage: StageWrite, Text: o.lastDraft()})
	o.updated = &check
	if err := o.finaliseFollowUp(ctx, VersionUpdate, pinned, parent); err != nil {
		return err
	}
	check.Version = o.follow.N
	o.doneMsg = fmt.Sprintf("version %d: %s", o.follow.N, textkit.Plural(check.Kept, "new source", "new sources"))
	return o.recordCheck(check, tok0, t0)
}

// noneKept says why an update wrote no version.
func noneKept(c UpdateCheck) string {
	failed := ""
	if len(c.Warnings) > 0 {
		failed = " (" + textkit.Plural(len(c.Warnings), "warning", "warnings") + ": " + textkit.Clip(c.Warnings[0], 120) + ")"
	}
	switch {
	case c.Seen == 0 && failed != "":
		return "the searches failed" + failed
	case c.Seen == 0:
		return "the searches returned nothing"
	case c.New == 0:
		return fmt.Sprintf("all %s the searches returned were met before", textkit.Plural(c.Seen, "work", "works")) + failed
	case c.Read == 0 && c.New == 1:
		return "the 1 new work was not relevant enough to read"
	case c.Read == 0:
		return fmt.Sprintf("none of the %d new works was relevant enough to read", c.New)
	case c.Read == 1:
		return "the 1 new work read was not relevant to the question"
	}
	return fmt.Sprintf("none of the %d new works read was relevant to the question", c.Read)
}

// atTop puts a section right under the report's title (above any earlier
// update's section, so the newest comes first).
func atTop(body, section string) string {
	body = strings.TrimSpace(body)
	if strings.HasPrefix(body, "# ") {
		title, rest, _ := strings.Cut(body, "\n")
		return title + "\n\n" + section + "\n\n" + strings.TrimSpace(rest) + "\n"
	}
	return section + "\n\n" + body + "\n"
}

// recordCheck stores the check with the session (once, also when a
// resumed update records it again) and ends the update.
func (o *orchestrator) recordCheck(c UpdateCheck, tok0 UsageTotals, t0 time.Time) error {
	tot := o.meter.totals()
	c.GeneratedTokens = tot.CompletionTokens - tok0.CompletionTokens
	c.PromptTokens = tot.PromptTokens - tok0.PromptTokens
	c.Elapsed = time.Since(t0)
	checks, err := LoadUpdateChecks(o.engine.Store, o.session.ID)
	if err != nil {
		return err
	}
	if len(checks) == 0 || checks[len(checks)-1].N < c.N {
		checks = append(checks, c)
	}
	raw, err := json.Marshal(checks)
	if err != nil {
		return err
	}
	if _, err := o.engine.Store.CheckpointAndUpdate(o.session.ID, checkpointUpdates, raw, func(s *store.Session) error {
		if s.Living == nil {
			s.Living = &store.Living{}
		}
		s.Living.LastChecked, s.Living.LastNew, s.Living.Checks = c.At, c.Kept, len(checks)
		if c.Version > 0 {
			s.Living.Unread = c.Version
		}
		return nil
	}); err != nil {
		return err
	}
	done := *o.follow
	done.Done = true
	raw, _ = json.Marshal(done)
	return o.engine.Store.PutCheckpoint(o.session.ID, checkpointFollowUp, raw)
}

// updateFound is what an update's research found.
type updateFound struct {
	added  []Analysis // new works analysed and kept, in citation order
	merged []string   // cited sources whose published version appeared
	check  UpdateCheck
}

// updateResearch runs the session's searches once more and takes only new
// works through the flow.
func (o *orchestrator) updateResearch(ctx context.Context, parent Report) (updateFound, error) {
	var out updateFound
	known, err := o.knownWorks()
	if err != nil {
		return out, err
	}
	var parentCands []Candidate
	if _, err := o.loadRaw(CheckpointCandidates, &parentCands); err != nil {
		return out, err
	}
	if err := o.seedVerdicts(); err != nil {
		return out, err
	}
	nsq := len(o.st.Plan.SubQuestions)
	f := &gather{
		o: o, reg: newRegistry(), share: firstShare(o.plan.Include, nsq), runCap: o.plan.Include,
		calibrate: floorCalibration(o.opt.DepthRow(), nsq),
		claimed:   map[string]bool{}, bySubQ: map[string][]string{}, candidates: map[string][]Candidate{},
		distinct: map[string]bool{}, analyses: map[string]Analysis{}, ran: map[string]bool{}, chased: map[string]bool{},
		reading: map[string]*inflight{}, skipped: map[string]bool{},
		known: known, cited: map[string]bool{}, seen: workSet{},
	}
	// The first round's floors hold: an update reads what would have been
	// read then, no more.
	for _, c := range parentCands {
		f.candidates[c.SubQ] = append(f.candidates[c.SubQ], c)
		f.round = max(f.round, c.Round)
	}
	f.round++
	for _, r := range o.st.Found.Records {
		f.reg.add(r)
	}
	for _, s := range parent.Sources {
		f.cited[s.Key] = true
	}
	plans := o.updatePlans(parent)
	for _, p := range plans {
		out.check.Queries += len(p.queries)
	}
	f.queryVecs = o.queryVectors(ctx)
	var chased []string
	if err := f.runRound(ctx, func(ctx context.Context) error {
		var err error
		chased, err = f.researchLater(ctx, f.round, plans)
		return err
	}); err != nil {
		return out, err
	}
	out.check.Chased = len(chased)
	for _, k := range citationOrder(o.st.Plan.SubQuestions, f.bySubQ) {
		// Never a work the report already cites (a check killed after its
		// version was written is run again from its own checkpoints).
		if an, ok := f.analyses[k]; ok && !f.cited[k] {
			out.added = append(out.added, an)
		}
	}
	out.added = filterByConfidence(out.added)
	var cands []Candidate
	for _, sq := range o.st.Plan.SubQuestions {
		for _, c := range f.candidates[sq.ID] {
			if c.Round == f.round {
				c.Update = o.follow.Update
				cands = append(cands, c)
			}
		}
	}
	f.mu.Lock()
	out.check.Seen, out.check.New, out.check.Read = f.seenN, f.seenN-f.knownSeen, len(f.claimed)
	published := f.published
	f.mu.Unlock()
	out.check.Kept = len(out.added)
	for _, an := range out.added {
		rec := f.reg.get(an.SourceKey)
		o.st.Found.Records = append(o.st.Found.Records, rec)
		if err := o.saveSource(rec); err != nil {
			return out, err
		}
	}
	for key, rec := range published {
		old, _ := o.loadSource(key)
		if isPublished(old) {
			continue // already the published version's metadata
		}
		if merged := search.Merge([]search.Record{old, rec}); len(merged) == 1 {
			merged[0].Key = key
			if err := o.saveSource(merged[0]); err != nil {
				return out, err
			}
			for i := range o.st.Found.Records {
				if o.st.Found.Records[i].Key == key {
					o.st.Found.Records[i] = merged[0]
				}
			}
			out.merged = append(out.merged, key)
		}
	}
	sort.Strings(out.merged)
	// The session's works now include the new ones and the merged
	// metadata, for its later follow-ups and updates.
	raw, err := json.Marshal(o.st.Found)
	if err != nil {
		return out, err
	}
	if err := o.engine.Store.PutCheckpoint(o.session.ID, "research", raw); err != nil {
		return out, err
	}
	return out, o.checkpoint(CheckpointCandidates, cands)
}

// updatePlans are the searches an update runs again: each sub-question's
// queries of every tier and every reflection round, and the works citing
// its cited sources (not their references, which are older).
func (o *orchestrator) updatePlans(parent Report) []roundPlan {
	cited := map[string]bool{}
	for _, s := range parent.Sources {
		cited[s.Key] = true
	}
	var reflections []Reflection
	for round := 1; round <= 8; round++ {
		var r Reflection
		if ok, _ := o.loadRaw(fmt.Sprintf("reflect/%d", round), &r); ok {
			reflections = append(reflections, r)
		}
	}
	var plans []roundPlan
	for _, sq := range o.st.Plan.SubQuestions {
		p := roundPlan{sq: sq, queries: sq.Queries.tiers(), missing: []string{"new work"}, chase: []string{}, citingOnly: true}
		for _, r := range reflections {
			for _, s := range r.SubQuestions {
				if s.ID == sq.ID {
					p.queries = append(p.queries, s.Queries...)
				}
			}
		}
		p.queries = cleanQueries(p.queries)
		for _, k := range o.st.Found.BySubQ[sq.ID] {
			if cited[k] && len(p.chase) < chaseSources {
				p.chase = append(p.chase, k)
			}
		}
		p.quota = firstShare(o.plan.Include, len(o.st.Plan.SubQuestions))
		plans = append(plans, p)
	}
	return plans
}

// workSet matches works by every identifier search.Merge uses (DOI, arXiv
// ID, PMID, S2 and OpenAlex IDs, title and year, and the title and first
// author that match a preprint to its published version).
type workSet map[string]string // identifier → the session's key

func (w workSet) add(r search.Record) {
	for _, id := range search.WorkIDs(r) {
		if _, ok := w[id]; !ok {
			w[id] = r.Key
		}
	}
}

func (w workSet) match(r search.Record) (string, bool) {
	for _, id := range search.WorkIDs(r) {
		if key, ok := w[id]; ok {
			return key, true
		}
	}
	return "", false
}

// knownWorks is every work the session ever met: the records of every
// research unit of every round, follow-up and earlier update, and what it
// read.
func (o *orchestrator) knownWorks() (workSet, error) {
	w := workSet{}
	names, err := o.engine.Store.CheckpointNames(o.session.ID)
	if err != nil {
		return nil, err
	}
	for _, r := range o.st.Found.Records { // first: a cited work is known by its cited key
		w.add(r)
	}
	for _, n := range names {
		if !strings.Contains(n, "research/") || strings.Contains(n, "research/fill/") {
			continue
		}
		var unit researchUnit
		if ok, _ := o.loadRaw(n, &unit); ok {
			for _, r := range unit.Records {
				w.add(r)
			}
		}
	}
	return w, nil
}

// isPublished says whether rec is a published version (a journal DOI or
// venue), so that its metadata is worth merging into a cited preprint.
func isPublished(rec search.Record) bool {
	doi := search.NormalizeDOI(rec.DOI)
	return (doi != "" && !strings.HasPrefix(doi, "10.48550/")) || (rec.Venue != "" && !strings.EqualFold(rec.Venue, "arxiv"))
}

const whatsNewSystem = `You are the writing agent of a research assistant that keeps a finished report up to date. New works have appeared since the report was written. Write ONLY a short section saying what the new works add to the report, and where they confirm or contradict what the earlier sources found: 1 to 3 paragraphs of Markdown, no heading.
Rules: support every factual sentence with citations of the form [n] using ONLY the given source numbers; cite every new source that bears on the question; cite an earlier source only beside a new one, to say the new one confirms or contradicts it; never invent sources or results; do NOT write a references section.
`

// whatsNew writes the update's section. Checkpointed.
func (o *orchestrator) whatsNew(ctx context.Context, pinned int) (string, error) {
	var text string
	if ok, err := o.loadCheckpoint("write/0", &text); err != nil || ok {
		return text, err
	}
	start := o.stageStart(StageWrite, "writing what the new works add")
	a := o.startAgent(StageWrite, "writer", "what the new works add")
	var fresh []string
	for i := pinned; i < len(o.st.Analyses); i++ {
		fresh = append(fresh, fmt.Sprintf("[%d]", i+1))
	}
	var user strings.Builder
	fmt.Fprintf(&user, "Question: %s\nSub-questions:\n%s\nNew sources since %s: %s\nSources:\n%s",
		o.session.Question, o.subQuestionList(), o.follow.Since.Format("2 January 2006"), strings.Join(fresh, ", "), o.sourcesBrief())
	req := llm.ChatRequest{
		Messages:    []llm.Message{{Role: "system", Content: whatsNewSystem + o.writingRules()}, {Role: "user", Content: user.String()}},
		Temperature: ptr(0.3),
	}
	resp, err := a.chat(ctx, req)
	if fatal(ctx, err) {
		a.fail()
		return "", err
	}
	text = strings.TrimSpace(o.withFindings(a, textkit.StripControls(stripThink(resp.Content))))
	if err != nil || !textkit.Plausible(text, 5) {
		a.warnUnusable("the writer's answer was unusable; the update lists what the new sources found")
		var b strings.Builder
		for i := pinned; i < len(o.st.Analyses); i++ {
			for _, f := range o.st.Analyses[i].KeyFindings[:min(1, len(o.st.Analyses[i].KeyFindings))] {
				fmt.Fprintf(&b, "- %s [%d]\n", strings.TrimSpace(f), i+1)
			}
		}
		text = b.String()
		a.finish("assembled from analyses")
	} else {
		a.finish(fmt.Sprintf("%d words", len(strings.Fields(text))))
	}
	if err := o.checkpoint("write/0", text); err != nil {
		return "", err
	}
	return text, o.stageDone(StageWrite, start, "new section ready")
}

// withReason is reasons (copied, not changed) with n more for reason, so
// the flow's reasons add up to its counts.
func withReason(rs []report.FlowReason, reason string, n int) []report.FlowReason {
	out := append([]report.FlowReason(nil), rs...)
	if n > 0 {
		out = append(out, report.FlowReason{Reason: reason, Count: n})
	}
	return out
}

// checksSinceVersion are the recorded checks before check n that wrote no
// version, after the last one that did.
func checksSinceVersion(checks []UpdateCheck, n int) []UpdateCheck {
	var out []UpdateCheck
	for _, c := range checks {
		switch {
		case c.N >= n:
		case c.Version > 0:
			out = out[:0]
		default:
			out = append(out, c)
		}
	}
	return out
}

// updatedCounts are the funnel and PRISMA flow of a version an update
// wrote: the report's counts plus the check's (an updated review's flow
// counts the earlier studies and the new ones together). cited is what
// the version cites.
func updatedCounts(fn Funnel, flow *report.Flow, c UpdateCheck, cited int) (Funnel, *report.Flow) {
	fn.Found += c.New
	fn.Read += c.Read
	fn.Cited = cited
	if fn.Read > 0 {
		fn.CitedOfRead = float64(min(fn.Cited, fn.Read)) / float64(fn.Read)
	}
	if flow == nil {
		return fn, nil
	}
	f := *flow
	f.Other = append(append([]report.RouteCount(nil), f.Other...), report.RouteCount{Route: fmt.Sprintf("update %d (%s)", c.N, c.At.Format("2 Jan 2006")), Records: c.Seen})
	f.Identified += c.Seen
	f.Duplicates += c.Seen - c.New // met before: by the run, or by an earlier update
	f.Screened += c.New
	f.Excluded += c.New - c.Read
	f.ExcludedWhy = withReason(f.ExcludedWhy, fmt.Sprintf("update %d: not relevant enough to read", c.N), c.New-c.Read)
	f.Sought += c.Read
	f.Assessed += c.Read
	f.AssessedAbstract += c.Read // an update reads what its searches give; full texts are counted with the run's
	f.Reports += c.Read - c.Kept
	f.ReportsWhy = withReason(f.ReportsWhy, fmt.Sprintf("update %d: not relevant to the question", c.N), c.Read-c.Kept)
	f.Included = cited
	return fn, &f
}
