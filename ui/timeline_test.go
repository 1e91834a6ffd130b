package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/researchtui/researchtui/pipeline"
)

// timelineLog is a stored event log of session id: a finished run, one
// cancelled while its analysts worked, or that one resumed two hours later
// and finished.
func timelineLog(id, kind string) []pipeline.Event {
	var evs []pipeline.Event
	t0 := testNow.Add(-26 * time.Hour)
	base := time.Duration(0)
	add := func(at float64, ev pipeline.Event) {
		ev.SessionID, ev.Seq = id, int64(len(evs)+1)
		ev.Time = t0.Add(base + time.Duration(at*float64(time.Second)))
		evs = append(evs, ev)
	}
	dur := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	stage := func(at float64, typ pipeline.EventType, s pipeline.Stage) {
		add(at, pipeline.Event{Type: typ, Stage: s})
	}
	// agent runs from..to with model calls of [start, end, prompt, completion].
	agent := func(s pipeline.Stage, name string, from, to float64, calls ...[4]float64) {
		add(from, pipeline.Event{Type: pipeline.AgentStarted, Stage: s, Agent: name})
		u := pipeline.UsageTotals{}
		for _, c := range calls {
			op, p, comp, emb := "chat", int(c[2]), int(c[3]), 0
			if comp == 0 {
				op, emb, p = "embeddings", p, 0
			}
			add(c[1], pipeline.Event{Type: pipeline.ModelCalled, Stage: s, Agent: name, Elapsed: dur(c[1] - c[0]),
				Usage: &pipeline.UsageTotals{PromptTokens: p, CompletionTokens: comp, EmbeddingTokens: emb},
				Call:  &pipeline.Call{Operation: op, Model: "qwen3:8b", Structured: pipeline.StructuredOK, Attempts: 1}})
			u.PromptTokens, u.CompletionTokens, u.EmbeddingTokens = u.PromptTokens+p, u.CompletionTokens+comp, u.EmbeddingTokens+emb
		}
		if to > 0 {
			add(to, pipeline.Event{Type: pipeline.AgentFinished, Stage: s, Agent: name, Usage: &u})
		}
	}
	search := func(name, src string, from, to float64, n int) {
		add(to, pipeline.Event{Type: pipeline.SourceSearched, Stage: pipeline.StageResearch, Agent: name, Count: n, Elapsed: dur(to - from),
			Call: &pipeline.Call{Operation: "search", Source: src}})
	}
	gather := []pipeline.Stage{pipeline.StageResearch, pipeline.StageRead, pipeline.StageIndex, pipeline.StageAnalyse}
	first := func() {
		add(0, pipeline.Event{Type: pipeline.RunStarted})
		stage(0, pipeline.StageStarted, pipeline.StagePlan)
		agent(pipeline.StagePlan, "planner", 0.1, 6, [4]float64{0.3, 5.9, 1200, 310})
		stage(6, pipeline.StageFinished, pipeline.StagePlan)
		for _, s := range gather {
			stage(6, pipeline.StageStarted, s)
		}
		for i, q := range []string{"q1", "q2", "q3"} {
			name := "researcher " + q
			from := 6.0 + float64(i)*0.2
			add(from, pipeline.Event{Type: pipeline.AgentStarted, Stage: pipeline.StageResearch, Agent: name})
			search(name, "openalex", from+0.1, from+1.2, 25)
			search(name, "arxiv", from+0.1, from+3.4+float64(i)*3, 18)
			add(from+3.6+float64(i)*3, pipeline.Event{Type: pipeline.ModelCalled, Stage: pipeline.StageResearch, Agent: name, Elapsed: dur(0.4),
				Usage: &pipeline.UsageTotals{EmbeddingTokens: 900}, Call: &pipeline.Call{Operation: "embeddings", Model: "nomic-embed-text", Attempts: 1}})
			add(from+3.8+float64(i)*3, pipeline.Event{Type: pipeline.AgentFinished, Stage: pipeline.StageResearch, Agent: name,
				Usage: &pipeline.UsageTotals{EmbeddingTokens: 900}})
		}
	}
	analysts := func(from int) {
		spans := [][2]float64{{14, 22}, {22, 29}, {29, 35}, {35, 44}}
		for i := from; i < len(spans); i++ {
			s := spans[i]
			agent(pipeline.StageAnalyse, fmt.Sprintf("analyst %d", i+1), s[0], s[1], [4]float64{s[0] + 0.2, s[1] - 0.2, 2400 + 100*float64(i), 520})
		}
	}
	rest := func() {
		add(47, pipeline.Event{Type: pipeline.Warning, Stage: pipeline.StageRead, Message: "1 full text could not be downloaded"})
		for _, s := range gather {
			stage(48, pipeline.StageFinished, s)
		}
		stage(48, pipeline.StageStarted, pipeline.StageRetrieve)
		agent(pipeline.StageRetrieve, "retriever", 48, 49, [4]float64{48.1, 48.6, 300, 0})
		stage(49, pipeline.StageFinished, pipeline.StageRetrieve)
		stage(49, pipeline.StageStarted, pipeline.StageWrite)
		agent(pipeline.StageWrite, "writer", 49.1, 70, [4]float64{49.2, 69.8, 6100, 1400})
		stage(70, pipeline.StageFinished, pipeline.StageWrite)
		stage(70, pipeline.StageStarted, pipeline.StageReview)
		agent(pipeline.StageReview, "reviewer (round 1)", 70, 79, [4]float64{70.1, 78.9, 7000, 450})
		agent(pipeline.StageWrite, "writer (revision 1)", 80, 95, [4]float64{80.1, 94.8, 7600, 1500})
		agent(pipeline.StageReview, "reviewer (round 2)", 95, 101, [4]float64{95.1, 100.8, 7900, 200})
		stage(101, pipeline.StageFinished, pipeline.StageReview)
		stage(101, pipeline.StageStarted, pipeline.StageFinalise)
		stage(102, pipeline.StageFinished, pipeline.StageFinalise)
		add(102.2, pipeline.Event{Type: pipeline.RunFinished, Status: "completed"})
	}
	switch kind {
	case "finished":
		first()
		analysts(0)
		rest()
	case "cancelled", "resumed":
		first()
		agent(pipeline.StageAnalyse, "analyst 1", 14, 22, [4]float64{14.2, 21.8, 2400, 520})
		agent(pipeline.StageAnalyse, "analyst 2", 22, 29, [4]float64{22.2, 28.8, 2500, 520})
		agent(pipeline.StageAnalyse, "analyst 3", 29, 0) // cut short
		add(31, pipeline.Event{Type: pipeline.RunCancelled, Status: "cancelled"})
		if kind == "cancelled" {
			break
		}
		base = 2 * time.Hour // resumed two hours later
		add(31, pipeline.Event{Type: pipeline.RunStarted})
		stage(31, pipeline.StageStarted, pipeline.StagePlan)
		stage(31, pipeline.StageFinished, pipeline.StagePlan)
		for _, s := range gather {
			stage(31, pipeline.StageStarted, s)
		}
		base -= 2 * time.Second // the resume takes the analysts up at 29 s of run time, i.e. 2 s later
		analysts(2)
		base += 2 * time.Second
		rest()
	}
	return evs
}

// TestGoldenTimeline: the timeline of a finished, a cancelled and a
// resumed session, opened with T on the session's report screen, at 80×24
// and 120×40.
func TestGoldenTimeline(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {120, 40}} {
		for _, kind := range []string{"finished", "cancelled", "resumed"} {
			t.Run(fmt.Sprintf("%s_%dx%d", kind, sz[0], sz[1]), func(t *testing.T) {
				m, svc := newTestModel(t, sz[0], sz[1], "dark", false)
				id := "s4"
				if kind == "cancelled" {
					id = "s2" // interrupted: no report, the timeline still opens
				}
				svc.events = map[string][]pipeline.Event{id: timelineLog(id, kind)}
				toList(t, m)
				for m.sessions.selected() == nil || m.sessions.selected().s.ID != id {
					press(t, m, "down")
				}
				press(t, m, "enter", "T")
				d, ok := m.dialog.(*timelineDialog)
				if !ok {
					t.Fatalf("T opened %T", m.dialog)
				}
				out := ansi.Strip(m.render())
				checkFrame(t, out, sz[0], sz[1])
				for _, want := range []string{"model in flight", "planner", "model busy", "critical path"} {
					if !strings.Contains(out, want) {
						t.Errorf("the timeline lacks %q:\n%s", want, out)
					}
				}
				switch kind {
				case "cancelled":
					if !strings.Contains(out, "…") || d.tl.Attempts != 1 {
						t.Errorf("a cancelled run's unfinished agent is not marked:\n%s", out)
					}
				case "resumed":
					if !strings.Contains(out, "2 attempts") || !strings.Contains(out, "┊") {
						t.Errorf("the resume is not shown:\n%s", out)
					}
				}
				golden.RequireEqual(t, out)
			})
		}
	}
}

// TestTimelineKeys: T loads the timeline in a Cmd (Update reads nothing),
// j and G scroll the rows that don't fit, and esc closes it; T works on the
// run screen too.
func TestTimelineKeys(t *testing.T) {
	m, svc := newTestModel(t, 80, 24, "dark", false)
	svc.events = map[string][]pipeline.Event{"s4": timelineLog("s4", "resumed")}
	openFixtureReport(t, m)
	_, cmd := m.Update(kp("T"))
	if m.dialog != nil || cmd == nil {
		t.Fatalf("T changed the screen in Update (%T) or asked for nothing", m.dialog)
	}
	run(t, m, cmd)
	d, ok := m.dialog.(*timelineDialog)
	if !ok {
		t.Fatalf("the timeline did not open: %T", m.dialog)
	}
	top := ansi.Strip(m.render())
	press(t, m, "j")
	if d.offset != 1 || ansi.Strip(m.render()) == top {
		t.Errorf("j did not scroll (offset %d)", d.offset)
	}
	press(t, m, "G")
	if !strings.Contains(ansi.Strip(m.render()), "finalise") {
		t.Errorf("G does not show the last stage:\n%s", ansi.Strip(m.render()))
	}
	press(t, m, "esc")
	if m.dialog != nil || m.screen != screenReport {
		t.Fatalf("esc left %T on screen %v", m.dialog, m.screen)
	}

	m, svc = newTestModel(t, 80, 24, "dark", false)
	r := startScripted(t, m, svc, &clock{t: testNow}, false)
	svc.events = map[string][]pipeline.Event{r.id: timelineLog(r.id, "cancelled")}
	press(t, m, "T")
	if _, ok := m.dialog.(*timelineDialog); !ok {
		t.Fatalf("T on the run screen opened %T", m.dialog)
	}
}
