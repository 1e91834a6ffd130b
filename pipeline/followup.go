package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/textkit"
	"github.com/researchtui/researchtui/textkit/mdinert"
)

// A follow-up is a small run inside a finished session: it plans the new
// question against what the session holds, asks reflection whether the
// session's own sources (and the knowledge base) already answer it, searches
// and reads only for what they don't, and writes a new version of the
// report: the old one with a "Follow-up" section, or, when the question asks
// for a change ("shorter", "add a table"), a revised one. References keep
// their numbers; new sources take the next ones.

// Version is one state of a session's report; earlier versions are never
// changed.
type Version struct {
	N         int       `json:"n"`
	Kind      string    `json:"kind"` // run | follow_up | revision
	Question  string    `json:"question"`
	CreatedAt time.Time `json:"created_at"`
	Report    string    `json:"report"`
}

// Version kinds.
const (
	VersionRun      = "run"
	VersionFollowUp = "follow_up"
	VersionRevision = "revision"
)

const (
	checkpointVersions = "versions"
	checkpointFollowUp = "followup/current"
)

// followUp is the follow-up a run works on.
type followUp struct {
	N        int    `json:"n"` // the version it will make
	Question string `json:"question"`
	Done     bool   `json:"done,omitempty"`
	// Update, when set, makes it an update check (update.go): its number,
	// and Since the date of the version it checks against.
	Update int       `json:"update,omitempty"`
	Since  time.Time `json:"since,omitempty"`
	// Usage0 is the session's usage when the update first started, so a
	// check resumed after a kill counts the tokens of every attempt.
	Usage0 *UsageTotals `json:"usage0,omitempty"`

	kind string // VersionFollowUp or VersionRevision
	body string // the previous version without its references and method note
	// met is how many new candidates its search met (0: none, or it
	// searched nothing), screened is how many of them the screen judged.
	met, screened int
}

// followUpDraft is a follow-up's first draft: the previous report with a
// new section, or the report revised as the question asks.
func (o *orchestrator) followUpDraft(ctx context.Context) (string, error) {
	fu := o.follow
	if fu.kind == VersionRevision {
		return o.writeRevision(ctx, fu.body, fu.Question)
	}
	section, err := o.writeSection(ctx)
	if err != nil {
		return "", err
	}
	return strings.TrimRight(fu.body, "\n ") + "\n\n## Follow-up: " + fu.Question + "\n\n" + strings.TrimSpace(section) + "\n", nil
}

// LoadVersions lists a session's report versions, oldest first. A session
// finished before versions existed has its report as version 1.
func LoadVersions(st store.Reader, id string) ([]Version, error) {
	raw, ok, err := st.Checkpoint(id, checkpointVersions)
	if err != nil {
		return nil, err
	}
	var vs []Version
	if ok {
		if err := json.Unmarshal(raw, &vs); err != nil {
			return nil, fmt.Errorf("session %s has unreadable versions: %w", id, err)
		}
		return vs, nil
	}
	rep, err := LoadReport(st, id)
	if err != nil {
		return nil, nil
	}
	sess, err := st.Session(id)
	if err != nil {
		return nil, err
	}
	return []Version{{N: 1, Kind: VersionRun, Question: sess.Question, CreatedAt: sess.CreatedAt, Report: rep.Markdown}}, nil
}

// ErrNotFinished is returned when a follow-up is asked of a session that
// has no finished report to grow.
var ErrNotFinished = errors.New("the session has no finished report yet")

// Ask starts a follow-up question on a finished session. adjust, when set,
// changes the session's options for this follow-up (--depth, --sources).
func (e *Engine) Ask(ctx context.Context, id, question string, adjust func(*runopts.Options)) (*Run, error) {
	question = runopts.NormalizeQuestion(question)
	if question == "" {
		return nil, fmt.Errorf("%w: the follow-up question is empty", runopts.ErrBadInput)
	}
	if n := utf8.RuneCountInString(question); n > runopts.MaxQuestionChars {
		return nil, fmt.Errorf("%w: the question is %d characters; keep it to %d", runopts.ErrBadInput, n, runopts.MaxQuestionChars)
	}
	sess, versions, opt, err := e.finishedSession(id, adjust)
	if err != nil {
		return nil, err
	}
	return e.startFollowUp(ctx, sess, opt, followUp{N: len(versions) + 1, Question: question})
}

// pendingFollowUp is the follow-up a session was working on, if any.
func (e *Engine) pendingFollowUp(id string) (*followUp, error) {
	return pendingFollowUp(e.Store, id)
}

func pendingFollowUp(st store.Reader, id string) (*followUp, error) {
	raw, ok, err := st.Checkpoint(id, checkpointFollowUp)
	if err != nil || !ok {
		return nil, err
	}
	var fu followUp
	if err := json.Unmarshal(raw, &fu); err != nil || fu.Done {
		return nil, nil
	}
	return &fu, nil
}

func (e *Engine) launchFollowUp(ctx context.Context, sess store.Session, opt runopts.Options, fu followUp, lastSeq int64) (*Run, error) {
	opt.Question = fu.Question
	return e.launchWith(ctx, sess, opt, nil, lastSeq, &fu)
}

// revisionAsk recognises follow-ups that ask to change the report rather
// than to answer something new.
var revisionAsk = regexp.MustCompile(`(?i)^\s*(please\s+)?(make|rewrite|shorten|condense|summari[sz]e|simplify|restructure|reorganise|reorganize|revise|add a (table|summary|section)|turn|remove|drop)\b|\b(shorter|longer|more concise|less technical|as a table)\b`)

// followUpStages is a follow-up's run: plan, coverage, research for what is
// missing, write, finalise.
func (o *orchestrator) followUpStages(ctx context.Context) error {
	fu := o.follow
	parent, prev, parentPlan, err := o.loadFinished()
	if err != nil {
		return err
	}
	pinned := len(o.st.Analyses)

	// Plan the follow-up against the session.
	if err := o.stagePlan(ctx); err != nil {
		return err
	}
	o.st.Plan.Sources = parentPlan.Sources
	if len(o.opt.Sources) > 0 && !o.opt.AutoSources {
		o.st.Plan.Sources = o.routeSources(o.st.Plan.Intent)
	}

	// Coverage: reflection over the session's best passages decides what
	// is missing; a covered follow-up searches nothing.
	start := o.stageStart(StageResearch, "looking in the session's sources first")
	r, err := o.coverage(ctx)
	if err != nil {
		return err
	}
	var plans []roundPlan
	for _, s := range r.SubQuestions {
		for _, sq := range o.st.Plan.SubQuestions {
			if sq.ID == s.ID && len(s.Queries) > 0 {
				plans = append(plans, roundPlan{sq: sq, missing: s.Missing, queries: s.Queries})
			}
		}
	}
	newAnalyses, err := o.followUpResearch(ctx, plans, parent)
	if err != nil {
		return err
	}
	o.st.Analyses = append(o.st.Analyses, newAnalyses...)
	o.emit(Event{Type: StageFinished, Stage: StageResearch, Count: len(newAnalyses), Elapsed: time.Since(start),
		Message: fmt.Sprintf("%d new sources analysed", len(newAnalyses))})

	// Write: a new section, or a revised report.
	kind := VersionFollowUp
	if revisionAsk.MatchString(fu.Question) {
		kind = VersionRevision
	}
	fu.kind, fu.body = kind, report.StripReferences(prev.Report)
	for _, h := range report.MethodHeadings() {
		fu.body = stripSection(fu.body, h)
	}
	// A review's studies table is built by code, not written: it is not
	// the writer's to keep, nor the verifier's to check (its rows would
	// count as cited sentences); finalise builds it again.
	fu.body = stripSection(fu.body, report.StudiesHeading)
	// The reviewer and the person's gate apply as in a run.
	if err := o.stageWriteAndReview(ctx); err != nil {
		return err
	}
	return o.finaliseFollowUp(ctx, kind, pinned, parent)
}

const coverageSystem = `You are the reflection agent of a research assistant. A finished report is being asked a follow-up question. For each of the follow-up's sub-questions you get its information slots and the best passages the session's sources already hold.
Answer with JSON only: "sub_questions": one entry per sub-question the passages do NOT answer, with its "id", "missing" (the slots the passages leave open) and "queries" (1-3 search strings for a scholarly search engine, 2-6 words, aimed at what is missing; no boolean operators, no quotes).
Leave out sub-questions the passages answer. An empty list means the session already answers the follow-up.`

// coverage asks reflection whether the session's best passages answer the
// follow-up's sub-questions. Checkpointed.
func (o *orchestrator) coverage(ctx context.Context) (Reflection, error) {
	var r Reflection
	if ok, err := o.loadCheckpoint("reflect/0", &r); err != nil || ok {
		return r, err
	}
	a := o.startAgent(StageResearch, "reflector", "does the session already answer it?")
	qa := &agentCall{o: o, stage: StageResearch, name: "reflector", start: time.Now()}
	var texts []string
	for _, sq := range o.st.Plan.SubQuestions {
		texts = append(texts, sq.Question)
	}
	vecs, err := o.embedCached(ctx, qa, roleQuery, texts)
	if fatal(ctx, err) {
		return r, err
	}
	ix, err := o.index(ctx)
	if err != nil {
		return r, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Original question: %s\nFollow-up question: %s\n\n", o.session.Question, o.follow.Question)
	for i, sq := range o.st.Plan.SubQuestions {
		fmt.Fprintf(&b, "- %s: %s\n  slots: %s\n  evidence from the session:\n", sq.ID, sq.Question, strings.Join(sq.Slots, "; "))
		n := 0
		if vecs != nil && vecs[i] != nil {
			hits, _ := ix.Search(vecs[i], 12)
			for _, h := range hits {
				if h.Score < retrieveMinScore || n == 3 {
					break
				}
				if c, ok, err := o.engine.Store.Chunk(h.ID); err == nil && ok {
					rec, _ := o.loadSource(c.SourceKey)
					fmt.Fprintf(&b, "    [%s] (%s) %s\n", c.ID, textkit.Clip(rec.Title, 100), textkit.Clip(textkit.CleanLine(c.Text), 400))
					n++
				}
			}
		}
		if n == 0 {
			b.WriteString("    (none)\n")
		}
	}
	req := llm.ChatRequest{
		Messages:    []llm.Message{{Role: "system", Content: coverageSystem}, {Role: "user", Content: b.String()}},
		Schema:      json.RawMessage(reflectSchema),
		Temperature: ptr(0.2),
	}
	// Without a usable answer, search: a follow-up answered from nothing
	// is worse than one that costs a search.
	fallback := func() Reflection {
		var out Reflection
		for _, sq := range o.st.Plan.SubQuestions {
			out.SubQuestions = append(out.SubQuestions, SubQReflection{ID: sq.ID, Missing: sq.Slots, Queries: sq.Queries.tiers()[:1]})
		}
		out.ByCounts = true
		return out
	}
	r, _, err = structured(ctx, a, req, o.validReflection, fallback)
	if fatal(ctx, err) {
		a.fail()
		return r, err
	}
	a.usage = a.usage.Add(qa.usage)
	var missing []string
	for i, s := range r.SubQuestions {
		r.SubQuestions[i].Queries = cleanQueries(s.Queries)
		missing = append(missing, s.Missing...)
	}
	if len(r.SubQuestions) == 0 {
		a.finish("the session's sources answer it: no search")
	} else {
		a.finish("missing: " + orNone(dedupe(missing)))
	}
	return r, o.checkpoint("reflect/0", r)
}

func cleanQueries(qs []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, q := range qs {
		q = cleanQuery(q)
		if textkit.Plausible(q, 1) && !seen[normQuery(q)] {
			seen[normQuery(q)] = true
			out = append(out, q)
		}
	}
	return out
}

// followUpResearch runs one round of the gather for the follow-up's missing
// sub-questions: only works the session never found are candidates.
func (o *orchestrator) followUpResearch(ctx context.Context, plans []roundPlan, parent Report) ([]Analysis, error) {
	if len(plans) == 0 {
		return nil, nil
	}
	f := &gather{
		o: o, reg: newRegistry(), share: max(2, firstShare(o.plan.Include, len(o.st.Plan.SubQuestions))/2), runCap: o.plan.Include,
		calibrate: max(2, floorCalibration(o.opt.DepthRow(), len(o.st.Plan.SubQuestions))/2),
		claimed:   map[string]bool{}, bySubQ: map[string][]string{}, candidates: map[string][]Candidate{},
		distinct: map[string]bool{}, analyses: map[string]Analysis{}, ran: map[string]bool{}, chased: map[string]bool{},
		reading: map[string]*inflight{}, skipped: map[string]bool{}, round: 1,
	}
	f.runCap = f.share * len(plans) // a follow-up reads a few for each gap, no more
	if err := o.seedVerdicts(); err != nil {
		return nil, err
	}
	known := map[string]bool{}
	for _, r := range o.st.Found.Records {
		key, _ := f.reg.add(r)
		f.distinct[key], known[key] = true, true
	}
	for _, s := range parent.Sources {
		f.distinct[s.Key], known[s.Key] = true, true
	}
	f.queryVecs = o.queryVectors(ctx)
	if err := f.runRound(ctx, func(ctx context.Context) error {
		_, err := f.researchLater(ctx, 1, plans)
		return err
	}); err != nil {
		return nil, err
	}
	o.follow.met = f.distinctCount() - len(known)
	o.follow.screened = f.screened.Screened
	var out []Analysis
	for _, k := range citationOrder(o.st.Plan.SubQuestions, f.bySubQ) {
		if an, ok := f.analyses[k]; ok && !known[k] {
			out = append(out, an)
		}
	}
	out = filterByConfidence(out)
	for _, an := range out {
		rec := f.reg.get(an.SourceKey)
		o.st.Found.Records = append(o.st.Found.Records, rec)
		if err := o.saveSource(rec); err != nil {
			return nil, err
		}
	}
	var cands []Candidate
	for _, sq := range o.st.Plan.SubQuestions {
		cands = append(cands, f.candidates[sq.ID]...)
	}
	return out, o.checkpoint(CheckpointCandidates, cands)
}

const sectionSystem = `You are the writing agent of a research assistant. A finished report is being asked a follow-up question. Write ONLY the section that answers it: 1 to 4 paragraphs of Markdown, no heading, from the numbered sources you are given.
Rules: support every factual sentence with citations of the form [n] using ONLY the given source numbers; never invent sources or results; say plainly what the sources do not answer. Do NOT write a references section.
`

// writeSection writes the follow-up's section of the report.
func (o *orchestrator) writeSection(ctx context.Context) (string, error) {
	a := o.startAgent(StageWrite, "writer", "answering the follow-up")
	var user strings.Builder
	fmt.Fprintf(&user, "Original question: %s\nFollow-up question: %s\nSub-questions:\n%s\nSources:\n%s", o.session.Question, o.follow.Question, o.subQuestionList(), o.sourcesBrief())
	req := llm.ChatRequest{
		Messages:    []llm.Message{{Role: "system", Content: sectionSystem + o.writingRules()}, {Role: "user", Content: user.String()}},
		Temperature: ptr(0.3),
	}
	resp, err := a.chat(ctx, req)
	if fatal(ctx, err) {
		a.fail()
		return "", err
	}
	text := strings.TrimSpace(o.withFindings(a, textkit.StripControls(stripThink(resp.Content))))
	if err != nil || !textkit.Plausible(text, 5) {
		a.warnUnusable("the writer's answer was unusable; the follow-up lists what the sources found")
		a.finish("assembled from analyses")
		var b strings.Builder
		for i, an := range o.st.Analyses {
			for _, f := range an.KeyFindings[:min(1, len(an.KeyFindings))] {
				fmt.Fprintf(&b, "- %s [%d]\n", strings.TrimSpace(f), i+1)
			}
		}
		return b.String(), nil
	}
	a.finish(fmt.Sprintf("%d words", len(strings.Fields(text))))
	return text, nil
}

// finaliseFollowUp resolves the citations with the report's numbers kept,
// rebuilds the references, and stores the new version.
func (o *orchestrator) finaliseFollowUp(ctx context.Context, kind string, pinned int, parent Report) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	start := o.stageStart(StageFinalise, "checking citations and writing the references")
	draft := report.StripReferences(o.lastDraft())
	supported, cited, _ := o.grounding(draft)
	check := report.CheckCitationsPinned(draft, len(o.st.Analyses), pinned)
	if check.Removed > 0 {
		o.warn(StageFinalise, "", "%s", removedCitations(check.Removed))
	}
	// The PRISMA flow stays the original run's: a follow-up's sources are not a
	// new screening (the PRISMA section in the text says so by its counts).
	rep := Report{SessionID: o.session.ID, Language: parent.Language, Title: parent.Title, Question: o.session.Question, Reviews: parent.Reviews, Decisions: parent.Decisions, Rounds: parent.Rounds,
		Model: o.opt.Model, Searched: parent.Searched, Flow: parent.Flow, PlanReview: parent.PlanReview, Updates: parent.Updates}
	if kind == VersionUpdate {
		rep.Updates = append(rep.Updates, UpdateNote{Version: o.follow.N, At: o.engine.now(), New: len(o.st.Analyses) - pinned})
	}
	var refs strings.Builder
	for i, old := range check.Order {
		an := o.st.Analyses[old-1]
		rec, _ := o.loadSource(an.SourceKey)
		cs := citedSource(i+1, rec, an)
		cs.Read = o.readAs(an.SourceKey)
		if i < len(parent.Sources) {
			cs.Quote = textkit.FirstNonEmpty(cs.Quote, parent.Sources[i].Quote)
		}
		rep.Sources = append(rep.Sources, cs)
		fmt.Fprintf(&refs, "[%d] %s\n\n", cs.N, cs.Reference)
	}
	md := mdinert.Prose(strings.TrimSpace(check.Text))
	heads := report.HeadingsFor(o.opt.Language)
	if sectionText(parent.Markdown, report.StudiesHeading) != "" {
		md += "\n\n## " + report.StudiesHeading + "\n\n" + o.studiesTable(rep.Sources)
	}
	for _, h := range report.MethodHeadings() {
		if m := sectionText(parent.Markdown, h); m != "" {
			md += "\n\n## " + heads.Method + "\n\n" + m
			break
		}
	}
	md += "\n\n" + o.followUpNote(kind, len(o.st.Analyses)-pinned)
	md = o.closeReport(&rep, md, refs.String(), heads.References, check, supported, cited) // the follow-up's draft was verified like a run's
	rep.Funnel = parent.Funnel
	rep.Funnel.Analysed += len(o.st.Analyses) - pinned
	rep.Funnel.Cited = len(check.Order)
	if kind == VersionUpdate && o.updated != nil {
		// The checks since the last version that found nothing to keep
		// identified and screened works too: their counts join this one's.
		checks, err := LoadUpdateChecks(o.engine.Store, o.session.ID)
		if err != nil {
			return err
		}
		fn, flow := rep.Funnel, parent.Flow
		for _, c := range append(checksSinceVersion(checks, o.updated.N), *o.updated) {
			fn, flow = updatedCounts(fn, flow, c, rep.Funnel.Cited)
		}
		rep.Funnel, rep.Flow = fn, flow
	}
	rep.Warnings = o.warningList()
	versions, err := LoadVersions(o.engine.Store, o.session.ID)
	if err != nil {
		return err
	}
	question := o.follow.Question
	if kind == VersionUpdate { // the versions list says what the update brought
		question = fmt.Sprintf("what's new since %s: %s", o.follow.Since.Format("2 January 2006"), textkit.Plural(len(o.st.Analyses)-pinned, "new source", "new sources"))
	}
	versions = append(versions, Version{N: o.follow.N, Kind: kind, Question: question, CreatedAt: o.engine.now(), Report: md})
	done := *o.follow
	done.Done = true
	for name, v := range map[string]any{checkpointReport: rep, checkpointVersions: versions, checkpointFollowUp: done} {
		raw, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if _, err := o.engine.Store.CheckpointAndUpdate(o.session.ID, name, raw, func(s *store.Session) error {
			s.Report = md
			return nil
		}); err != nil {
			return err
		}
	}
	o.emit(Event{Type: ReportReady, Stage: StageFinalise, Text: md, Count: len(rep.Sources),
		Message: fmt.Sprintf("version %d: %s of %s", o.follow.N, textkit.Plural(rep.Metrics.Citations, "citation", "citations"), textkit.Plural(rep.Metrics.DistinctSources, "source", "sources"))})
	return o.stageDone(StageFinalise, start, "report ready")
}

// followUpNote says how the follow-up was answered.
func (o *orchestrator) followUpNote(kind string, added int) string {
	what := "Follow-up"
	if kind == VersionRevision {
		what = "Revision"
	}
	if kind == VersionUpdate {
		return fmt.Sprintf("*Update (version %d): the searches were run again on %s for work since %s; %s.*", o.follow.N,
			o.engine.now().Format("2 January 2006"), o.follow.Since.Format("2 January 2006"), textkit.Plural(added, "new source was read and added", "new sources were read and added"))
	}
	how := "answered from the session's own sources; nothing new was searched"
	switch {
	case added == 0 && o.follow.screened > 0:
		how = fmt.Sprintf("the session's sources did not cover it; it was searched for, and the relevance screen judged none of %s on topic, so it is answered from the session's own sources", textkit.Plural(o.follow.met, "new work", "new works"))
	case added == 0 && o.follow.met > 0:
		how = fmt.Sprintf("the session's sources did not cover it; it was searched for, and none of %s was relevant enough to read, so it is answered from the session's own sources", textkit.Plural(o.follow.met, "new work", "new works"))
	}
	if added > 0 {
		how = fmt.Sprintf("the session's sources did not cover it, so it was searched for and %s", textkit.Plural(added, "new source was read", "new sources were read"))
	}
	return fmt.Sprintf("*%s (version %d): %q — %s.*", what, o.follow.N, o.follow.Question, how)
}

// stripSection removes a "## name" section (up to the next "## ").
func stripSection(md, name string) string {
	text := sectionText(md, name)
	if text == "" {
		return md
	}
	head := "## " + name
	i := strings.Index(md, head)
	end := i + len(head)
	if j := strings.Index(md[end:], "\n## "); j >= 0 {
		return strings.TrimRight(md[:i], "\n ") + "\n\n" + md[end+j+1:]
	}
	return strings.TrimRight(md[:i], "\n ") + "\n"
}

// sectionText is the body of a "## name" section, or "".
func sectionText(md, name string) string {
	head := "\n## " + name + "\n"
	i := strings.Index("\n"+md, head)
	if i < 0 {
		return ""
	}
	rest := md[i+len(head)-1:]
	if j := strings.Index(rest, "\n## "); j >= 0 {
		rest = rest[:j]
	}
	return strings.TrimSpace(rest)
}
