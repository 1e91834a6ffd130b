package history

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/store"
)

// Timeline is a run's waterfall, built from its stored event log alone, so
// it works offline for any session, finished, cancelled or resumed: where
// the time went (stages, agents, model calls, searches), when the model was
// busy and when it waited, and the tokens each agent used.
//
// Offsets are run time: the pause between an attempt's end and its resume
// is left out (Paused says how long it was; Resumes where each later
// attempt begins), so a session resumed a day later still draws as one run.
type Timeline struct {
	SessionID string          `json:"session_id"`
	Start     time.Time       `json:"start"`
	Wall      time.Duration   `json:"wall_ns"`
	Paused    time.Duration   `json:"paused_ns,omitempty"`
	Resumes   []time.Duration `json:"resumes_ns,omitempty"`
	Spans     []Span          `json:"spans"`
	// ModelBusy is the union of the model calls (of the model agents' spans
	// in logs older than model_call events); ModelUtil its share of the
	// wall time; Idle the gaps in which no model request was in flight.
	// Waiting is the time the run waited for a person (a review decision):
	// the "wait" spans, left out of ModelUtil and of the idle gaps, since a
	// person's reading time is not the machine's.
	ModelBusy  time.Duration `json:"model_busy_ns"`
	ModelUtil  float64       `json:"model_utilisation"`
	ModelCalls int           `json:"model_calls"`
	Idle       []Gap         `json:"idle"`
	Waiting    time.Duration `json:"waiting_ns,omitempty"`
	// Critical is the chain of agents that ends the run: each one is the
	// agent that finished last before the next one started.
	Critical []string `json:"critical_path"`
	Attempts int      `json:"attempts"` // 1, or more after resumes
}

// Span is one stage, agent, model call or source search, as offsets from
// the run's start.
type Span struct {
	Kind  string         `json:"kind"` // stage | agent | call | search | wait (for a person) | segment (a later run starts)
	Name  string         `json:"name"`
	Stage pipeline.Stage `json:"stage"`
	// Parent is the index in Spans of the agent (or else the stage) a call
	// or search belongs to; -1 when none was open.
	Parent     int           `json:"parent"`
	Start      time.Duration `json:"start_ns"`
	End        time.Duration `json:"end_ns"`
	Model      bool          `json:"model"` // the agent used the model
	Prompt     int           `json:"prompt_tokens,omitempty"`
	Completion int           `json:"completion_tokens,omitempty"`
	Embedding  int           `json:"embedding_tokens,omitempty"`
	Open       bool          `json:"open,omitempty"`     // never finished (cancelled, killed)
	Outcome    string        `json:"outcome,omitempty"`  // call: structured outcome; "error" when it failed
	Critical   bool          `json:"critical,omitempty"` // agent on the critical path
}

// Gap is a stretch of the run in which the model was idle.
type Gap struct {
	Start time.Duration `json:"start_ns"`
	End   time.Duration `json:"end_ns"`
}

// BuildTimeline turns a session's event log into its timeline.
func BuildTimeline(id string, evs []pipeline.Event) Timeline {
	tl := Timeline{SessionID: id}
	if len(evs) == 0 {
		return tl
	}
	b := timelineBuilder{tl: &tl, open: map[string]int{}, latest: map[string]int{}, restored: map[pipeline.Stage]bool{}}
	tl.Start = evs[0].Time
	for _, ev := range evs {
		b.add(ev)
	}
	tl.Wall = b.off(b.last)
	b.closeOpen(tl.Wall)
	tl.ModelBusy, tl.Idle = busyAndIdle(tl.Spans, tl.Wall)
	var waits []Gap
	for _, s := range tl.Spans {
		if s.Kind == "wait" {
			waits = append(waits, Gap{Start: s.Start, End: s.End})
		}
	}
	tl.Idle, tl.Waiting = withoutWaits(tl.Idle, waits)
	if machine := tl.Wall - tl.Waiting; machine > 0 {
		tl.ModelUtil = min(float64(tl.ModelBusy)/float64(machine), 1)
	}
	for _, i := range criticalPath(tl.Spans) {
		tl.Spans[i].Critical = true
		tl.Critical = append(tl.Critical, tl.Spans[i].Name)
	}
	return tl
}

type timelineBuilder struct {
	tl   *Timeline
	open map[string]int // kind+name → index in Spans
	// latest is the most recent span of each kind+name, open or not: a call
	// logged just after its agent or stage ended (their events come from
	// different goroutines) still belongs to it.
	latest map[string]int
	// restored are stages a resumed run restored from checkpoints: their
	// start and finish add no row.
	restored map[pipeline.Stage]bool
	last     time.Time
	shift    time.Duration // pauses between attempts, left out
}

func (b *timelineBuilder) off(t time.Time) time.Duration {
	return max(t.Sub(b.tl.Start)-b.shift, 0)
}

// closeOpen ends every unfinished span at the offset end (a run's end).
func (b *timelineBuilder) closeOpen(end time.Duration) {
	for k, i := range b.open {
		b.tl.Spans[i].End = max(end, b.tl.Spans[i].Start)
		delete(b.open, k)
	}
}

// parent is the open agent named agent, else the open stage, else -1.
func (b *timelineBuilder) parent(ev pipeline.Event) int {
	if i, ok := b.open["agent"+ev.Agent]; ok && ev.Agent != "" {
		return i
	}
	if i, ok := b.open["stage"+string(ev.Stage)]; ok {
		return i
	}
	if i, ok := b.latest["agent"+ev.Agent]; ok && ev.Agent != "" {
		return i
	}
	if i, ok := b.latest["stage"+string(ev.Stage)]; ok {
		return i
	}
	return -1
}

func (b *timelineBuilder) add(ev pipeline.Event) {
	tl := b.tl
	if ev.Type == pipeline.RunStarted && ev.Count > 0 && ev.Time.After(b.last) {
		// A follow-up (its version in Count) is a new run on the session,
		// not another attempt at the last one: the pause before it is left
		// out, and no resume is marked.
		b.closeOpen(b.off(b.last))
		b.shift += ev.Time.Sub(b.last)
	}
	if ev.Type == pipeline.RunStarted && ev.Count == 0 {
		tl.Attempts++
		if tl.Attempts > 1 && ev.Time.After(b.last) {
			// A resume: what the last attempt left open ends with it, and
			// the pause is left out.
			b.closeOpen(b.off(b.last))
			gap := ev.Time.Sub(b.last)
			b.shift += gap
			tl.Paused += gap
			tl.Resumes = append(tl.Resumes, b.off(ev.Time))
		}
	}
	if ev.Time.After(b.last) {
		b.last = ev.Time
	}
	at := b.off(ev.Time)
	if i, ok := b.open["wait"]; ok && EndsWait(ev.Type) {
		tl.Spans[i].End, tl.Spans[i].Open = at, false
		delete(b.open, "wait")
	}
	switch ev.Type {
	case pipeline.RunStarted:
		if ev.Count > 0 {
			// A later run on the session (a follow-up or an update): a row
			// of its own, so its stages are told apart from the first run's.
			// The same run started again continues one that was stopped.
			name := segmentName(ev)
			for _, sp := range tl.Spans {
				if sp.Kind == "segment" && strings.TrimSuffix(sp.Name, " (continued)") == name {
					name += " (continued)"
					break
				}
			}
			tl.Spans = append(tl.Spans, Span{Kind: "segment", Name: name, Parent: -1, Start: at, End: at})
		}
	case pipeline.ReviewRequested:
		// The reviewer asked for changes: the run waits for a person's
		// decision (a policy decides at once, a person in their own time).
		if ev.Review != nil && !ev.Review.Approved {
			b.open["wait"] = len(tl.Spans)
			tl.Spans = append(tl.Spans, Span{Kind: "wait", Name: WaitName, Stage: ev.Stage, Parent: -1, Start: at, Open: true})
		}
	case pipeline.StageStarted:
		if ev.Message == pipeline.RestoredFromCheckpoint {
			// A resumed run restored the stage: it ran in an earlier
			// attempt, whose row already shows it; it did not run again.
			b.restored[ev.Stage] = true
			return
		}
		delete(b.restored, ev.Stage)
		b.open["stage"+string(ev.Stage)] = len(tl.Spans)
		b.latest["stage"+string(ev.Stage)] = len(tl.Spans)
		tl.Spans = append(tl.Spans, Span{Kind: "stage", Name: string(ev.Stage), Stage: ev.Stage, Parent: -1, Start: at, Open: true})
	case pipeline.StageFinished:
		if b.restored[ev.Stage] {
			delete(b.restored, ev.Stage)
			return
		}
		if i, ok := b.open["stage"+string(ev.Stage)]; ok {
			tl.Spans[i].End, tl.Spans[i].Open = at, false
			delete(b.open, "stage"+string(ev.Stage))
		}
	case pipeline.AgentStarted:
		b.open["agent"+ev.Agent] = len(tl.Spans)
		b.latest["agent"+ev.Agent] = len(tl.Spans)
		tl.Spans = append(tl.Spans, Span{Kind: "agent", Name: ev.Agent, Stage: ev.Stage, Parent: -1, Start: at, Open: true})
	case pipeline.AgentFinished:
		if i, ok := b.open["agent"+ev.Agent]; ok {
			s := &tl.Spans[i]
			s.End, s.Open = at, false
			if ev.Usage != nil { // the agent's own count is the authority
				s.Prompt, s.Completion, s.Embedding = ev.Usage.PromptTokens, ev.Usage.CompletionTokens, ev.Usage.EmbeddingTokens
				s.Model = s.Model || s.Prompt+s.Completion+s.Embedding > 0
			}
			delete(b.open, "agent"+ev.Agent)
		}
	case pipeline.ModelCalled, pipeline.SourceSearched:
		if ev.Call == nil {
			return
		}
		sp := Span{Kind: "search", Name: ev.Call.Source, Stage: ev.Stage, Parent: b.parent(ev),
			Start: max(at-ev.Elapsed, 0), End: at}
		if ev.Type == pipeline.ModelCalled {
			sp.Kind, sp.Name, sp.Outcome = "call", ev.Call.Operation+" "+ev.Call.Model, ev.Call.Structured
			tl.ModelCalls++
			if ev.Usage != nil {
				sp.Prompt, sp.Completion, sp.Embedding = ev.Usage.PromptTokens, ev.Usage.CompletionTokens, ev.Usage.EmbeddingTokens
			}
			if p := sp.Parent; p >= 0 && tl.Spans[p].Kind == "agent" {
				// Counted here too, so an agent that never finished (a
				// cancelled run) still shows what it used.
				a := &tl.Spans[p]
				a.Model = true
				a.Prompt += sp.Prompt
				a.Completion += sp.Completion
				a.Embedding += sp.Embedding
			}
		}
		if ev.Call.Error != "" {
			sp.Outcome = "error"
		}
		tl.Spans = append(tl.Spans, sp)
	}
}

// segmentName names a later run on a session: "update 2", or
// "follow-up v3" (the version it wrote).
func segmentName(ev pipeline.Event) string {
	if ev.Update > 0 {
		return fmt.Sprintf("update %d", ev.Update)
	}
	if strings.HasPrefix(ev.Message, "update ") {
		// Stored before events carried Update: its message is all there is.
		if name, _, ok := strings.Cut(ev.Message, ":"); ok {
			return name
		}
	}
	return fmt.Sprintf("follow-up v%d", ev.Count)
}

// WaitName names the timeline's row of the time a run waited for a person.
const WaitName = "waiting for you"

// EndsWait says whether an event means the run is no longer waiting for a
// person: the decision, or anything the run does after it (a run whose
// revisions ran out goes on with no decision event).
func EndsWait(t pipeline.EventType) bool {
	switch t {
	case pipeline.ReviewDecided, pipeline.StageStarted, pipeline.StageFinished, pipeline.AgentStarted, pipeline.ModelCalled,
		pipeline.RunFinished, pipeline.RunFailed, pipeline.RunCancelled, pipeline.RunSuspended:
		return true
	}
	return false
}

// withoutWaits cuts the waits for a person out of the model's idle gaps
// (a gap that shrinks under 0.1 s is dropped) and sums the waits, merged.
func withoutWaits(idle, waits []Gap) ([]Gap, time.Duration) {
	if len(waits) == 0 {
		return idle, 0
	}
	sort.Slice(waits, func(i, j int) bool { return waits[i].Start < waits[j].Start })
	var total time.Duration
	cur := time.Duration(-1)
	for _, w := range waits {
		from := max(w.Start, cur)
		if w.End > from {
			total += w.End - from
		}
		cur = max(cur, w.End)
	}
	var out []Gap
	for _, g := range idle {
		pieces := []Gap{g}
		for _, w := range waits {
			var next []Gap
			for _, p := range pieces {
				if w.End <= p.Start || w.Start >= p.End {
					next = append(next, p)
					continue
				}
				if w.Start > p.Start {
					next = append(next, Gap{Start: p.Start, End: w.Start})
				}
				if w.End < p.End {
					next = append(next, Gap{Start: w.End, End: p.End})
				}
			}
			pieces = next
		}
		for _, p := range pieces {
			if p.End-p.Start >= time.Second/10 {
				out = append(out, p)
			}
		}
	}
	return out, total
}

// busyAndIdle merges the model calls, or, in logs without them, the model
// agents' spans.
func busyAndIdle(spans []Span, wall time.Duration) (time.Duration, []Gap) {
	var iv []Span
	haveCalls := false
	for _, s := range spans {
		haveCalls = haveCalls || s.Kind == "call"
	}
	for _, s := range spans {
		if s.End > s.Start && (haveCalls && s.Kind == "call" || !haveCalls && s.Kind == "agent" && s.Model) {
			iv = append(iv, s)
		}
	}
	sort.Slice(iv, func(i, j int) bool { return iv[i].Start < iv[j].Start })
	var busy time.Duration
	var gaps []Gap
	cur := time.Duration(0)
	for _, s := range iv {
		if s.Start > cur {
			if s.Start-cur >= time.Second/10 {
				gaps = append(gaps, Gap{Start: cur, End: s.Start})
			}
			cur = s.Start
		}
		if s.End > cur {
			busy += s.End - cur
			cur = s.End
		}
	}
	if wall-cur >= time.Second/10 {
		gaps = append(gaps, Gap{Start: cur, End: wall})
	}
	return busy, gaps
}

// criticalPath walks back from the agent that ends last: each step takes
// the agent that finished last before the current one started. It returns
// indices into spans, in run order.
func criticalPath(spans []Span) []int {
	last := -1
	for i, s := range spans {
		if s.Kind == "agent" && (last < 0 || s.End > spans[last].End) {
			last = i
		}
	}
	if last < 0 {
		return nil
	}
	path := []int{last}
	seen := map[int]bool{last: true}
	cur := spans[last]
	for {
		next := -1
		for i, a := range spans {
			if a.Kind == "agent" && !seen[i] && a.End <= cur.Start && (next < 0 || a.End > spans[next].End) {
				next = i
			}
		}
		if next < 0 {
			break
		}
		path = append(path, next)
		seen[next] = true
		cur = spans[next]
	}
	slices.Reverse(path)
	return path
}

// RunScores are a run's scores, for people comparing runs and for tracing
// backends that read scores (Langfuse): how the review went, how much of
// the step budget it used, how grounded and cited the report is, and how
// busy the model was.
type RunScores struct {
	Reviewed         bool    `json:"reviewed"`          // a reviewer read the draft (quick runs have none)
	ReviewerApproved bool    `json:"reviewer_approved"` // the last review approved the draft
	PersonApproved   int     `json:"person_approved"`   // review decisions that accepted revisions
	PersonRejected   int     `json:"person_rejected"`
	RevisionRounds   int     `json:"revision_rounds"`
	StepsUsed        int     `json:"steps_used"`
	StepsBudget      int     `json:"steps_budget"`
	GroundingRatio   float64 `json:"grounding_ratio"`
	Citations        int     `json:"citations"`
	SourcesCited     int     `json:"sources_cited"`
	ModelUtil        float64 `json:"model_utilisation"`
	// What the model was made to write, the figure that decides a run's
	// wall time on one GPU: in all, per source read and per cited
	// sentence of the final report.
	GeneratedTokens      int     `json:"generated_tokens"`
	GeneratedPerSource   float64 `json:"generated_per_source_read,omitempty"`
	CitedSentences       int     `json:"cited_sentences,omitempty"`
	GeneratedPerSentence float64 `json:"generated_per_cited_sentence,omitempty"`
}

// LoadScores computes a finished session's scores from what is stored.
func LoadScores(st store.Reader, id string) (RunScores, error) {
	sess, err := st.Session(id)
	if err != nil {
		return RunScores{}, err
	}
	rep, err := pipeline.LoadReport(st, id)
	if err != nil {
		return RunScores{}, err
	}
	var sc RunScores
	if n := len(rep.Reviews); n > 0 {
		sc.Reviewed, sc.ReviewerApproved = true, rep.Reviews[n-1].Approved
	}
	for _, d := range rep.Decisions {
		if d.Approve {
			sc.PersonApproved++
			sc.RevisionRounds++
		} else {
			sc.PersonRejected++
		}
	}
	var opt runopts.Options
	if json.Unmarshal(sess.Options, &opt) == nil {
		sc.StepsBudget = opt.StepBudget()
	}
	sc.StepsUsed = sess.Steps
	sc.GroundingRatio = rep.Metrics.SupportedRatio
	sc.Citations, sc.SourcesCited = rep.Metrics.Citations, rep.Metrics.DistinctSources
	sc.GeneratedTokens = sess.Usage.CompletionTokens
	if rep.Funnel.Read > 0 {
		sc.GeneratedPerSource = float64(sc.GeneratedTokens) / float64(rep.Funnel.Read)
	}
	sc.CitedSentences = len(rep.Support)
	if sc.CitedSentences == 0 {
		sc.CitedSentences = report.CountCitedSentences(rep.Markdown)
	}
	if sc.CitedSentences > 0 {
		sc.GeneratedPerSentence = float64(sc.GeneratedTokens) / float64(sc.CitedSentences)
	}
	if evs, err := pipeline.LoadEvents(st, id); err == nil {
		sc.ModelUtil = BuildTimeline(id, evs).ModelUtil
	}
	return sc, nil
}
