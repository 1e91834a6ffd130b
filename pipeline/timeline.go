package pipeline

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/researchtui/researchtui/store"
)

// Timeline is a run's waterfall, built from its stored event log alone, so
// it works offline for any session, finished, cancelled or resumed: where
// the time went (stages, agents), when the model was busy and when it
// waited, and the tokens each agent used.
type Timeline struct {
	SessionID string        `json:"session_id"`
	Start     time.Time     `json:"start"`
	Wall      time.Duration `json:"wall_ns"`
	Spans     []Span        `json:"spans"`
	// ModelBusy is the union of the model agents' spans; ModelUtil its
	// share of the wall time; Idle the gaps in which no model agent ran.
	ModelBusy time.Duration `json:"model_busy_ns"`
	ModelUtil float64       `json:"model_utilisation"`
	Idle      []Gap         `json:"idle"`
	// Critical is the chain of spans that ends the run: each one is the
	// span that finished last before the next one started.
	Critical []string `json:"critical_path"`
	Attempts int      `json:"attempts"` // 1, or more after resumes
}

// Span is one stage or agent, as offsets from the run's start.
type Span struct {
	Kind       string        `json:"kind"` // stage | agent
	Name       string        `json:"name"`
	Stage      Stage         `json:"stage"`
	Start      time.Duration `json:"start_ns"`
	End        time.Duration `json:"end_ns"`
	Model      bool          `json:"model"` // the agent used the model
	Prompt     int           `json:"prompt_tokens,omitempty"`
	Completion int           `json:"completion_tokens,omitempty"`
	Embedding  int           `json:"embedding_tokens,omitempty"`
	Open       bool          `json:"open,omitempty"` // never finished (cancelled, killed)
}

// Gap is a stretch of the run in which the model was idle.
type Gap struct {
	Start time.Duration `json:"start_ns"`
	End   time.Duration `json:"end_ns"`
}

// BuildTimeline turns a session's event log into its timeline.
func BuildTimeline(id string, evs []Event) Timeline {
	tl := Timeline{SessionID: id}
	if len(evs) == 0 {
		return tl
	}
	tl.Start = evs[0].Time
	var last time.Time
	open := map[string]int{} // kind+name → index in Spans
	off := func(t time.Time) time.Duration { return t.Sub(tl.Start) }
	for _, ev := range evs {
		if ev.Time.After(last) {
			last = ev.Time
		}
		switch ev.Type {
		case RunStarted:
			tl.Attempts++
		case StageStarted:
			open["stage"+string(ev.Stage)] = len(tl.Spans)
			tl.Spans = append(tl.Spans, Span{Kind: "stage", Name: string(ev.Stage), Stage: ev.Stage, Start: off(ev.Time), Open: true})
		case StageFinished:
			if i, ok := open["stage"+string(ev.Stage)]; ok {
				tl.Spans[i].End, tl.Spans[i].Open = off(ev.Time), false
				delete(open, "stage"+string(ev.Stage))
			}
		case AgentStarted:
			open["agent"+ev.Agent] = len(tl.Spans)
			tl.Spans = append(tl.Spans, Span{Kind: "agent", Name: ev.Agent, Stage: ev.Stage, Start: off(ev.Time), Open: true})
		case AgentFinished:
			if i, ok := open["agent"+ev.Agent]; ok {
				s := &tl.Spans[i]
				s.End, s.Open = off(ev.Time), false
				if ev.Usage != nil {
					s.Prompt, s.Completion, s.Embedding = ev.Usage.PromptTokens, ev.Usage.CompletionTokens, ev.Usage.EmbeddingTokens
					s.Model = s.Prompt+s.Completion+s.Embedding > 0
				}
				delete(open, "agent"+ev.Agent)
			}
		}
	}
	tl.Wall = off(last)
	for i := range tl.Spans {
		if tl.Spans[i].Open {
			tl.Spans[i].End = tl.Wall
		}
	}
	tl.ModelBusy, tl.Idle = busyAndIdle(tl.Spans, tl.Wall)
	if tl.Wall > 0 {
		tl.ModelUtil = float64(tl.ModelBusy) / float64(tl.Wall)
	}
	tl.Critical = criticalPath(tl.Spans)
	return tl
}

// busyAndIdle merges the model agents' spans.
func busyAndIdle(spans []Span, wall time.Duration) (time.Duration, []Gap) {
	var iv []Span
	for _, s := range spans {
		if s.Kind == "agent" && s.Model && s.End > s.Start {
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

// criticalPath walks back from the span that ends last: each step takes
// the agent that finished last before the current one started.
func criticalPath(spans []Span) []string {
	var agents []Span
	for _, s := range spans {
		if s.Kind == "agent" {
			agents = append(agents, s)
		}
	}
	if len(agents) == 0 {
		return nil
	}
	sort.Slice(agents, func(i, j int) bool { return agents[i].End > agents[j].End })
	path := []string{agents[0].Name}
	cur := agents[0]
	for {
		var next *Span
		for i := range agents {
			a := &agents[i]
			if a.End <= cur.Start && (next == nil || a.End > next.End) {
				next = a
			}
		}
		if next == nil {
			break
		}
		path = append(path, next.Name)
		cur = *next
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	return path
}

// Waterfall draws the timeline as text, width columns wide: one line per
// stage and agent, a bar where it ran, its time and tokens; then the model's
// busy share, its idle gaps and the critical path.
func (tl Timeline) Waterfall(width int) string {
	if len(tl.Spans) == 0 || tl.Wall <= 0 {
		return "no events recorded for this session\n"
	}
	nameW := 22
	barW := max(10, width-nameW-20)
	var b strings.Builder
	fmt.Fprintf(&b, "%-*s %s\n", nameW, "", scale(tl.Wall, barW))
	for _, s := range tl.Spans {
		name := s.Name
		if s.Kind == "agent" {
			name = "  " + name
		}
		name = truncateRunes(name, nameW)
		bar := []rune(strings.Repeat(" ", barW))
		from := int(float64(s.Start) / float64(tl.Wall) * float64(barW))
		to := int(float64(s.End) / float64(tl.Wall) * float64(barW))
		mark := '─'
		if s.Kind == "agent" {
			mark = '░'
			if s.Model {
				mark = '█'
			}
		}
		for i := min(from, barW-1); i <= min(max(to, from), barW-1); i++ {
			bar[i] = mark
		}
		tok := ""
		if n := s.Prompt + s.Completion; n > 0 {
			tok = fmtCount(n) + " tok"
		} else if s.Embedding > 0 {
			tok = fmtCount(s.Embedding) + " emb"
		}
		suffix := ""
		if s.Open {
			suffix = " …"
		}
		fmt.Fprintf(&b, "%-*s %s %6s %8s%s\n", nameW, name, string(bar), shortDur(s.End-s.Start), tok, suffix)
	}
	fmt.Fprintf(&b, "\nmodel busy %s of %s (%.0f%%)", shortDur(tl.ModelBusy), shortDur(tl.Wall), 100*tl.ModelUtil)
	if tl.Attempts > 1 {
		fmt.Fprintf(&b, " over %d attempts", tl.Attempts)
	}
	b.WriteString("\n")
	if len(tl.Idle) > 0 {
		var gs []string
		var total time.Duration
		for _, g := range tl.Idle {
			total += g.End - g.Start
		}
		longest := tl.Idle[0]
		for _, g := range tl.Idle {
			if g.End-g.Start > longest.End-longest.Start {
				longest = g
			}
		}
		gs = append(gs, fmt.Sprintf("%d gaps, %s in all; the longest %s at %s", len(tl.Idle), shortDur(total), shortDur(longest.End-longest.Start), shortDur(longest.Start)))
		fmt.Fprintf(&b, "model idle: %s\n", truncateRunes(strings.Join(gs, ""), width-12))
	}
	if len(tl.Critical) > 0 {
		line := "critical path:"
		for i, name := range tl.Critical {
			part := " " + name
			if i > 0 {
				part = " →" + part
			}
			if len([]rune(line+part)) > width {
				b.WriteString(line + "\n")
				line = "  " + strings.TrimPrefix(part, " ")
				continue
			}
			line += part
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

func scale(wall time.Duration, w int) string {
	mid := shortDur(wall / 2)
	end := shortDur(wall)
	pad := max(1, w/2-len(mid)/2-1)
	return "0" + strings.Repeat(" ", pad) + mid + strings.Repeat(" ", max(1, w-1-pad-len(mid)-len(end))) + end
}

func shortDur(d time.Duration) string {
	switch {
	case d >= time.Minute:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d >= 10*time.Second:
		return fmt.Sprintf("%.0fs", d.Seconds())
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}

func fmtCount(n int) string {
	if n >= 10000 {
		return fmt.Sprintf("%.0fk", float64(n)/1000)
	}
	if n >= 1000 {
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	}
	return fmt.Sprint(n)
}

// RunScores are a run's scores, for people comparing runs and for tracing
// backends that read scores (Langfuse): how the review went, how much of
// the step budget it used, how grounded and cited the report is, and how
// busy the model was.
type RunScores struct {
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
}

// LoadEvents reads a session's stored event log.
func LoadEvents(st *store.Store, id string) ([]Event, error) {
	recs, err := st.Events(id)
	if err != nil {
		return nil, err
	}
	out := make([]Event, 0, len(recs))
	for _, rec := range recs {
		var ev Event
		if json.Unmarshal(rec.Data, &ev) == nil {
			out = append(out, ev)
		}
	}
	return out, nil
}

// LoadScores computes a finished session's scores from what is stored.
func LoadScores(st *store.Store, id string) (RunScores, error) {
	sess, err := st.Session(id)
	if err != nil {
		return RunScores{}, err
	}
	rep, err := LoadReport(st, id)
	if err != nil {
		return RunScores{}, err
	}
	var sc RunScores
	if n := len(rep.Reviews); n > 0 {
		sc.ReviewerApproved = rep.Reviews[n-1].Approved
	}
	for _, d := range rep.Decisions {
		if d.Approve {
			sc.PersonApproved++
			sc.RevisionRounds++
		} else {
			sc.PersonRejected++
		}
	}
	var opt Options
	if json.Unmarshal(sess.Options, &opt) == nil {
		sc.StepsBudget = opt.depth().MaxSteps
		if opt.MaxSteps > 0 {
			sc.StepsBudget = opt.MaxSteps
		}
	}
	sc.StepsUsed = sess.Steps
	sc.GroundingRatio = rep.Metrics.SupportedRatio
	sc.Citations, sc.SourcesCited = rep.Metrics.Citations, rep.Metrics.DistinctSources
	if evs, err := LoadEvents(st, id); err == nil {
		sc.ModelUtil = BuildTimeline(id, evs).ModelUtil
	}
	return sc, nil
}
