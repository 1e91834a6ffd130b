package ui

import (
	"sort"
	"strings"
	"time"

	"github.com/researchtui/researchtui/pipeline"
)

// maxStreamBytes bounds the streamed text kept per run: only the tail is
// ever on screen, and a bounded buffer keeps every frame O(screen), not
// O(run).
const maxStreamBytes = 16 << 10

// maxWarnings bounds the warnings kept for display.
const maxWarnings = 50

// phase of a stage or agent row in the run tree.
type phase int

const (
	phasePending phase = iota
	phaseRunning
	phaseDone
	phaseFailed
)

type stageRow struct {
	stage    pipeline.Stage
	phase    phase
	started  time.Time
	elapsed  time.Duration
	message  string
	agents   []*agentRow
	attended bool // the stage was reached in this run (or a resumed one)
	// byAgents: the stage had no events of its own, only its agents' (a
	// follow-up reads, indexes and analyses inside its research step), so
	// its phase follows theirs.
	byAgents bool
	restored bool // a resumed run restores it: its next finish is not news
}

type agentRow struct {
	name    string
	stage   pipeline.Stage
	phase   phase
	started time.Time
	elapsed time.Duration
	chars   int // streamed characters, for a token estimate while running
	// counted is how many of chars the server's totals already include
	// (its usage arrives when a call ends).
	counted  int
	tokens   int // completion tokens, exact once finished
	tps      float64
	exactTok bool
}

// runView is everything the run screen shows about one run. It is built
// only from events (apply), so the same code shows a live run, a run that
// went on in the background, and a replayed event log. (pipeline's
// runState is the run's own state; this is what the TUI shows of it.)
type runView struct {
	id       string
	title    string
	model    string
	h        runHandle
	watched  bool // runs in another researchtui process
	stages   []*stageRow
	byStage  map[pipeline.Stage]*stageRow
	agents   map[string]*agentRow
	sources  map[string]int // chosen for reading, per source type
	flow     []*sourceRow   // every chosen source, in the order chosen
	byKey    map[string]*sourceRow
	found    int    // distinct candidates found (ranked), read or not
	round    string // the follow-up round running, e.g. "round 2 of 3 — missing: …"
	docs     int
	fullText int
	chunks   int
	analyses int

	writer string // the agent whose stream is shown
	text   string // its streamed answer, tail-capped, sanitized
	// outline is text made readable (readable), for text of length
	// outlineOf streamed by outlineFor.
	outline    string
	isOutline  bool
	outlineOf  int
	outlineFor string
	thinking   string // its streamed thinking, tail-capped, sanitized

	usage pipeline.UsageTotals // the run's totals: the meter (takeTotals)
	// finishedSum is the finished agents' usage summed: the meter never
	// shows less.
	finishedSum pipeline.UsageTotals
	warnings    []string
	status      string // store status values
	errMsg      string
	review      *pipeline.ReviewRequest // pending, or nil
	started     time.Time
	ended       time.Time
	closed      bool // the event channel closed
	lastSeq     int64
	// endMsg is what the run's last event said ("nothing new: …" for an
	// update that wrote no version); unchanged says the run left the
	// report as it was (the event's Outcome).
	endMsg    string
	unchanged bool
	// followUp: the run answers a follow-up question (its RunStarted
	// names the version it writes and is no update).
	followUp bool
}

func newRunView(id, title, model string, h runHandle, now time.Time) *runView {
	rs := &runView{
		id: id, title: sanitizeLine(title), model: sanitizeLine(model), h: h,
		byStage: map[pipeline.Stage]*stageRow{},
		agents:  map[string]*agentRow{},
		sources: map[string]int{},
		byKey:   map[string]*sourceRow{},
		status:  "running",
		started: now,
	}
	for _, st := range pipeline.Stages {
		row := &stageRow{stage: st}
		rs.stages = append(rs.stages, row)
		rs.byStage[st] = row
	}
	return rs
}

// currentStage is the latest stage running (stages overlap while sources
// stream through research, reading and analysis), else the latest reached.
func (rs *runView) currentStage() pipeline.Stage {
	var reached pipeline.Stage
	for i := len(rs.stages) - 1; i >= 0; i-- {
		row := rs.stages[i]
		if row.phase == phaseRunning {
			return row.stage
		}
		if reached == "" && row.phase != phasePending {
			reached = row.stage
		}
	}
	return reached
}

func (rs *runView) stage(s pipeline.Stage) *stageRow {
	if s == "" {
		return nil
	}
	row, ok := rs.byStage[s]
	if !ok { // a stage this UI doesn't know yet: show it anyway, at the end
		row = &stageRow{stage: s}
		rs.byStage[s] = row
		rs.stages = append(rs.stages, row)
	}
	return row
}

func (rs *runView) agent(ev pipeline.Event) *agentRow {
	name := sanitizeLine(ev.Agent)
	if name == "" {
		return nil
	}
	a, ok := rs.agents[name]
	if !ok {
		a = &agentRow{name: name, stage: ev.Stage}
		rs.agents[name] = a
		if st := rs.stage(ev.Stage); st != nil {
			st.agents = append(st.agents, a)
		}
	}
	return a
}

// apply folds one event into the state. It does no IO and allocates little
// for token deltas, which arrive by the thousand.
func (rs *runView) apply(ev pipeline.Event) {
	if ev.Seq > rs.lastSeq {
		rs.lastSeq = ev.Seq
	}
	switch ev.Type {
	case pipeline.TokenDelta:
		a := rs.agent(ev)
		if a != nil {
			a.chars += len(ev.Text) + len(ev.Thinking)
			if a.phase == phasePending {
				a.phase, a.started = phaseRunning, ev.Time
			}
		}
		name := sanitizeLine(ev.Agent)
		if name != rs.writer {
			rs.writer, rs.text, rs.thinking = name, "", ""
		}
		if ev.Thinking != "" {
			rs.thinking = capTail(rs.thinking+sanitize(ev.Thinking), maxStreamBytes)
		}
		if ev.Text != "" {
			rs.text = capTail(rs.text+sanitize(ev.Text), maxStreamBytes)
		}
	case pipeline.RunStarted:
		rs.started = ev.Time
		rs.status = "running"
		rs.followUp = ev.Count > 0 && ev.Update == 0
	case pipeline.StageStarted:
		if st := rs.stage(ev.Stage); st != nil {
			if ev.Message == pipeline.RestoredFromCheckpoint && st.phase == phaseDone {
				st.restored = true // shown from the earlier run's log: its time stays
				break
			}
			st.phase, st.started, st.attended, st.byAgents = phaseRunning, ev.Time, true, false
		}
	case pipeline.StageFinished:
		if st := rs.stage(ev.Stage); st != nil {
			if st.restored {
				st.restored = false
				break
			}
			st.phase, st.attended = phaseDone, true
			st.elapsed = ev.Elapsed
			if st.elapsed == 0 && !st.started.IsZero() {
				st.elapsed = ev.Time.Sub(st.started)
			}
			st.message = sanitizeLine(ev.Message)
		}
	case pipeline.AgentStarted:
		if a := rs.agent(ev); a != nil {
			a.phase, a.started = phaseRunning, ev.Time
		}
		if row := rs.stage(ev.Stage); row != nil && (row.phase == phasePending || row.byAgents) {
			if row.phase == phasePending {
				row.started = ev.Time
			}
			row.phase, row.attended, row.byAgents = phaseRunning, true, true
		}
	case pipeline.AgentFinished:
		defer rs.settleByAgents(ev)
		if ev.Text != "" && sanitizeLine(ev.Agent) == rs.writer {
			// What it found, in words, instead of the references it
			// streamed ("findings • E1.3").
			rs.text, rs.thinking = capTail(sanitize(ev.Text), maxStreamBytes), ""
		}
		if a := rs.agent(ev); a != nil {
			a.phase = phaseDone
			if ev.Status == "failed" {
				a.phase = phaseFailed
			}
			a.elapsed = ev.Elapsed
			if a.elapsed == 0 && !a.started.IsZero() {
				a.elapsed = ev.Time.Sub(a.started)
			}
			if ev.Usage != nil {
				a.tokens, a.exactTok = ev.Usage.CompletionTokens, true
				a.tps = ev.Usage.TokensPerSecond
			}
		}
		if ev.Usage != nil {
			rs.finishedSum = addUsage(rs.finishedSum, *ev.Usage)
			rs.takeTotals(&rs.finishedSum)
		}
	case pipeline.SourceFound:
		if ev.Source != nil {
			kind := sanitizeLine(ev.Source.Source)
			if kind == "" {
				kind = "other"
			}
			// A source counts once: a resumed run finds again what its
			// restored log already found.
			if _, seen := rs.byKey[ev.Source.Key]; !seen {
				rs.sources[kind]++
			}
			row := rs.source(ev.Source)
			row.state = pipeline.StateQueued
			if m := ev.Message; strings.HasPrefix(m, "reference of") || strings.HasPrefix(m, "cites") || strings.HasPrefix(m, "query:") {
				row.origin = sanitizeLine(m) // found by a follow-up round
			} else if ev.Source.Library != "" {
				row.origin = "your library: " + sanitizeLine(ev.Source.Library)
			}
		}
	case pipeline.RoundStarted:
		rs.round = sanitizeLine(ev.Message)
	case pipeline.CandidatesRanked:
		rs.found = max(rs.found, ev.Count)
	case pipeline.SourceProgress:
		if ev.Source != nil {
			row := rs.source(ev.Source)
			row.state = ev.Source.State
			if ev.Message != "" {
				row.note = sanitizeLine(ev.Message)
			}
		}
	case pipeline.DocumentRead:
		if ev.Source == nil {
			rs.docs++
			break
		}
		row := rs.source(ev.Source)
		if !row.read { // read again by a resumed run: counted once
			rs.docs++
			if ev.Source.FullText {
				rs.fullText++
			}
		}
		row.state, row.full, row.read = pipeline.StateRead, ev.Source.FullText, true
	case pipeline.ChunksIndexed:
		rs.chunks += ev.Count
	case pipeline.AnalysisDone:
		if ev.Source == nil {
			rs.analyses++
			break
		}
		row := rs.source(ev.Source)
		if !row.analysed {
			rs.analyses++
		}
		row.state, row.analysed = pipeline.StateAnalysed, true
	case pipeline.ReviewRequested:
		if ev.Review != nil && !ev.Review.Approved {
			r := *ev.Review
			rs.review = &r
			rs.status = "awaiting_review"
		}
	case pipeline.ReviewDecided:
		rs.review = nil
		rs.status = "running"
	case pipeline.UsageUpdated:
		rs.takeTotals(ev.Usage)
		// Only an agent already shown: usage is also reported for work
		// no agent row stands for (the ranker's embeddings), which would
		// otherwise be drawn as an agent pending for ever.
		if a, ok := rs.agents[sanitizeLine(ev.Agent)]; ok {
			a.counted = a.chars // the call's tokens are in the totals now
		}
	case pipeline.Warning:
		rs.warnings = append(rs.warnings, sanitizeLine(ev.Message))
		if len(rs.warnings) > maxWarnings {
			rs.warnings = rs.warnings[len(rs.warnings)-maxWarnings:]
		}
	case pipeline.RunFinished:
		rs.finish(ev, "completed")
	case pipeline.RunFailed:
		rs.errMsg = sanitizeLine(ev.Message)
		rs.finish(ev, "failed")
	case pipeline.RunCancelled:
		rs.finish(ev, "cancelled")
	case pipeline.RunSuspended:
		rs.finish(ev, "awaiting_review")
	}
	switch ev.Type {
	case pipeline.RunFinished, pipeline.RunFailed, pipeline.RunCancelled, pipeline.RunSuspended:
		rs.takeTotals(ev.Usage) // the run's totals as stored
	}
}

// takeTotals raises the meter to the run totals u, field by field. Only
// events that carry the run's totals come here (a model_call carries one
// call's usage, an agent's end that agent's: they once set the meter and
// made it jump down); the meter never goes down, so an event replayed out
// of order by a watched run cannot lower it.
// settleByAgents ends a stage that only its agents' events describe once
// none of them runs: done, or failed if one failed.
func (rs *runView) settleByAgents(ev pipeline.Event) {
	row := rs.stage(ev.Stage)
	if row == nil || !row.byAgents || row.phase != phaseRunning {
		return
	}
	phase := phaseDone
	for _, a := range row.agents {
		switch a.phase {
		case phaseRunning, phasePending:
			return
		case phaseFailed:
			phase = phaseFailed
		}
	}
	row.phase, row.elapsed = phase, ev.Time.Sub(row.started)
}

// streaming estimates the completion tokens streamed but not yet in the
// server's totals (~4 characters a token): the meter follows the writer
// as it writes, and the server's count replaces the estimate when the
// call ends.
func (rs *runView) streaming() int {
	n := 0
	for _, a := range rs.agents {
		if a.phase == phaseRunning && a.chars > a.counted {
			n += (a.chars - a.counted) / 4
		}
	}
	return n
}

func (rs *runView) takeTotals(u *pipeline.UsageTotals) {
	if u == nil {
		return
	}
	rs.usage.PromptTokens = max(rs.usage.PromptTokens, u.PromptTokens)
	rs.usage.CompletionTokens = max(rs.usage.CompletionTokens, u.CompletionTokens)
	rs.usage.EmbeddingTokens = max(rs.usage.EmbeddingTokens, u.EmbeddingTokens)
	rs.usage.CostUSD = max(rs.usage.CostUSD, u.CostUSD)
	if u.TokensPerSecond > 0 {
		rs.usage.TokensPerSecond = u.TokensPerSecond
	}
}

// addUsage sums two usages (the finished agents' figures).
func addUsage(a, b pipeline.UsageTotals) pipeline.UsageTotals {
	a.PromptTokens += b.PromptTokens
	a.CompletionTokens += b.CompletionTokens
	a.EmbeddingTokens += b.EmbeddingTokens
	a.CostUSD += b.CostUSD
	return a
}

// sourceRow is one chosen source on its way from queued to analysed.
type sourceRow struct {
	title, kind string
	state       string // pipeline.State*
	full        bool   // read in full text, not only its abstract
	note        string // why it was skipped
	origin      string // how a follow-up round found it ("reference of …")
	// read and analysed say it was counted among the documents read and
	// the analyses, so a resumed run's second reading counts once.
	read, analysed bool
}

// source is the row of a source, added when first seen.
func (rs *runView) source(ref *pipeline.SourceRef) *sourceRow {
	if row, ok := rs.byKey[ref.Key]; ok {
		return row
	}
	row := &sourceRow{title: sanitizeLine(ref.Title), kind: sanitizeLine(ref.Source), state: pipeline.StateQueued}
	rs.byKey[ref.Key] = row
	rs.flow = append(rs.flow, row)
	return row
}

// flowCounts counts the chosen sources per state.
func (rs *runView) flowCounts() map[string]int {
	out := map[string]int{}
	for _, r := range rs.flow {
		out[r.state]++
	}
	return out
}

func (rs *runView) finish(ev pipeline.Event, status string) {
	if ev.Status != "" {
		status = ev.Status
	}
	rs.status = status
	rs.endMsg = sanitizeLine(ev.Message)
	rs.unchanged = ev.Outcome == pipeline.OutcomeNothingNew || ev.Outcome == pipeline.OutcomeUpdateStopped
	rs.ended = ev.Time
	if status != "awaiting_review" {
		rs.review = nil
	}
	for _, st := range rs.stages {
		if st.phase == phaseRunning {
			st.phase = phaseFailed
			if status == "completed" {
				st.phase = phaseDone
			}
			// It ran until the end: its time is that long, not 0.0 s.
			if !st.started.IsZero() && ev.Time.After(st.started) {
				st.elapsed = ev.Time.Sub(st.started)
			}
		}
		for _, a := range st.agents {
			if a.phase == phaseRunning {
				a.phase = st.phase
				if !a.started.IsZero() && ev.Time.After(a.started) {
					a.elapsed = ev.Time.Sub(a.started)
				}
			}
		}
	}
}

// doing says in a few words where a live run is: its running stages and
// how far its sources are, or that it waits for a review decision.
func (rs *runView) doing() string {
	if rs.review != nil {
		return "waiting for your review"
	}
	var running []string
	for _, st := range rs.stages {
		if st.phase == phaseRunning {
			running = append(running, string(st.stage))
		}
	}
	if len(running) == 0 {
		return "starting"
	}
	s := "at " + strings.Join(running, ", ")
	if n := len(rs.flow); n > 0 {
		s += " · " + itoa(rs.flowCounts()[pipeline.StateAnalysed]) + " of " + itoa(n) + " sources analysed"
	}
	return s
}

// live reports whether the run is still going (not ended, channel open).
func (rs *runView) live() bool { return !rs.closed && rs.ended.IsZero() }

// elapsed is the run's wall time so far.
func (rs *runView) elapsed(now time.Time) time.Duration {
	if !rs.ended.IsZero() {
		return rs.ended.Sub(rs.started)
	}
	return now.Sub(rs.started)
}

// sourceKinds returns the source types found, most first.
func (rs *runView) sourceKinds() []string {
	kinds := make([]string, 0, len(rs.sources))
	for k := range rs.sources {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool {
		if rs.sources[kinds[i]] != rs.sources[kinds[j]] {
			return rs.sources[kinds[i]] > rs.sources[kinds[j]]
		}
		return kinds[i] < kinds[j]
	})
	return kinds
}

func capTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	// Don't start in the middle of a UTF-8 sequence or a line.
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < 256 {
		return s[i+1:]
	}
	for i := 0; i < len(s) && i < 4; i++ {
		if s[i]&0xc0 != 0x80 {
			return s[i:]
		}
	}
	return s
}
