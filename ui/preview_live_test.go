package ui

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/store"
)

// The sessions list's preview of a live run follows its events: the stage
// it is at and the tokens so far, not the list's copy from when the run
// had only planned ("running (at plan)" long after planning).
func TestPreviewFollowsTheLiveStage(t *testing.T) {
	m, svc := newTestModel(t, 120, 40, "dark", false)
	c := &clock{t: testNow}
	m.now = c.now
	typeText(t, m, "Perovskite stability")
	press(t, m, "enter")
	r := svc.runs[len(svc.runs)-1]
	ev := func(typ pipeline.EventType, stage pipeline.Stage) pipeline.Event {
		return pipeline.Event{Type: typ, Stage: stage, Time: testNow}
	}
	tot := &pipeline.UsageTotals{PromptTokens: 7200, CompletionTokens: 1400}
	feedRun(t, m, r, ev(pipeline.RunStarted, ""), ev(pipeline.StageStarted, pipeline.StagePlan), ev(pipeline.StageFinished, pipeline.StagePlan),
		ev(pipeline.StageStarted, pipeline.StageResearch), ev(pipeline.StageStarted, pipeline.StageRead), ev(pipeline.StageStarted, pipeline.StageAnalyse),
		pipeline.Event{Type: pipeline.UsageUpdated, Stage: pipeline.StageAnalyse, Usage: tot, Time: testNow})
	press(t, m, "esc")
	// The list as the store had it when the run had only planned.
	m.Update(listLoaded(m, store.Session{ID: r.id, Question: "Perovskite stability", Status: store.StatusRunning, Stage: "plan",
		CreatedAt: testNow, Usage: store.Usage{PromptTokens: 300, CompletionTokens: 40}}))
	toList(t, m)
	out := ansi.Strip(m.render())
	if !strings.Contains(out, "(at analyse)") || strings.Contains(out, "(at plan)") {
		t.Errorf("the preview does not follow the run's stage:\n%s", out)
	}
	if !strings.Contains(out, "7.2k prompt · 1.4k completion") {
		t.Errorf("the preview does not show the run's tokens so far:\n%s", out)
	}
}

// TestAnAnalystsFindingsShowAsSentences (issue 47 #11): an analyst streams
// references to its excerpts ("findings • E1.3"); when it finishes, the
// output pane shows the sentences the pipeline resolved them to.
func TestAnAnalystsFindingsShowAsSentences(t *testing.T) {
	rs := newRunView("s1", "q", "qwen3:8b", nil, testNow)
	rs.apply(pipeline.Event{Type: pipeline.AgentStarted, Stage: pipeline.StageAnalyse, Agent: "analyst 1", Time: testNow})
	rs.apply(pipeline.Event{Type: pipeline.TokenDelta, Stage: pipeline.StageAnalyse, Agent: "analyst 1", Text: `{"findings":["E1.3","E1.1"],"confidence":0.8}`, Time: testNow})
	rs.apply(pipeline.Event{Type: pipeline.AgentFinished, Stage: pipeline.StageAnalyse, Agent: "analyst 1", Message: "confidence 0.80, 2 findings",
		Text: "• Films degraded within 6 hours at 80% RH.\n• Encapsulation extends lifetimes.", Time: testNow})
	if out, outline := rs.readable(); outline || !strings.Contains(rs.text, "Films degraded within 6 hours") || strings.Contains(out+rs.text, "E1.3") {
		t.Errorf("the output pane shows %q (outline %v)", rs.text, outline)
	}
}

// TestRunTreeKeepsEveryStageAt80x24 (issue 47 #11): at 80×24, with many
// analysts, the stage list keeps every stage (finalise included) and the
// Sources box in view: finished stages' agents fold away, and a running
// stage lists as many of its agents as fit.
func TestRunTreeKeepsEveryStageAt80x24(t *testing.T) {
	m, _ := newTestModel(t, 80, 24, "dark", false)
	rs := newRunView("s1", "q", "qwen3:8b", nil, testNow)
	apply := func(ev pipeline.Event) { ev.Time = testNow; rs.apply(ev) }
	apply(pipeline.Event{Type: pipeline.RunStarted})
	for _, st := range []pipeline.Stage{pipeline.StagePlan, pipeline.StageResearch} {
		apply(pipeline.Event{Type: pipeline.StageStarted, Stage: st})
		apply(pipeline.Event{Type: pipeline.AgentStarted, Stage: st, Agent: string(st) + "er"})
		apply(pipeline.Event{Type: pipeline.AgentFinished, Stage: st, Agent: string(st) + "er"})
		apply(pipeline.Event{Type: pipeline.StageFinished, Stage: st})
	}
	apply(pipeline.Event{Type: pipeline.StageStarted, Stage: pipeline.StageAnalyse})
	for i := 1; i <= 14; i++ {
		apply(pipeline.Event{Type: pipeline.AgentStarted, Stage: pipeline.StageAnalyse, Agent: fmt.Sprintf("analyst %d", i)})
	}
	out := ansi.Strip(m.runTree(rs, 36, 19, testNow))
	for _, want := range []string{"plan", "finalise", "Sources", "more agents"} {
		if !strings.Contains(out, want) {
			t.Errorf("the run tree lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "planner") {
		t.Errorf("a finished stage's agent takes room:\n%s", out)
	}
}

// The preview says how a session was asked to run (two rows of the same
// question could be a review and a brief), and a long question leaves the
// status in view (trial).
func TestPreviewSaysHowASessionWasAsked(t *testing.T) {
	m, _ := newTestModel(t, 120, 40, "dark", true)
	opts, _ := json.Marshal(runopts.Options{Depth: runopts.DepthDeep, Kind: runopts.KindReview, Language: "de"})
	long := strings.Repeat("Wie wird Softwaretesten erforscht und verglichen? ", 80)
	m.Update(listLoaded(m, store.Session{ID: "s9", Title: "Softwaretesten", Question: long, Status: store.StatusCompleted, CreatedAt: testNow, Options: opts}))
	toList(t, m)
	out := ansi.Strip(m.render())
	if !strings.Contains(out, "deep · review report · in German") {
		t.Errorf("the preview does not say how it was asked:\n%s", out)
	}
	if !strings.Contains(out, "status") || !strings.Contains(out, "tokens") {
		t.Errorf("a long question pushed the status out of view:\n%s", out)
	}
	// The stacked preview of 80×24 says it too.
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	if out = ansi.Strip(m.render()); !strings.Contains(out, "asked     deep · review report · in German") {
		t.Errorf("the 80×24 preview does not say how it was asked:\n%s", out)
	}
}

// The list's rows say how each session was asked where it is not a
// standard run in English, so two rows of one question, a quick run and a
// German review, differ before either is selected, at 120 columns and at
// 80; the filter finds the review by it (trial).
func TestListRowsSayHowEachSessionWasAsked(t *testing.T) {
	m, _ := newTestModel(t, 120, 40, "dark", true)
	q := "What causes flaky tests in continuous integration?"
	asked := map[string]runopts.Options{
		"s1": {Depth: runopts.DepthQuick},
		"s2": {Depth: runopts.DepthQuick, Kind: runopts.KindReview, Language: "German"},
		"s3": {Depth: runopts.DepthDeep, Kind: runopts.KindReview, Language: "pt-BR"},
		"s4": {Depth: runopts.DepthQuick, Kind: runopts.KindBrief},
	}
	var list []store.Session
	for _, id := range []string{"s1", "s2", "s3", "s4"} {
		opts, _ := json.Marshal(asked[id])
		list = append(list, store.Session{ID: id, Title: q, Question: q, Status: store.StatusCompleted, CreatedAt: testNow, Options: opts})
	}
	m.Update(listLoaded(m, list...))
	toList(t, m)
	for _, size := range [][2]int{{120, 40}, {80, 24}} {
		m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		out := ansi.Strip(m.render())
		for _, short := range []string{"quick", "quick review de", "deep review pt-BR", "quick brief"} {
			if !regexp.MustCompile(`What causes fl.*\s` + regexp.QuoteMeta(short) + ` +\d`).MatchString(out) {
				t.Errorf("%dx%d: no row says %q:\n%s", size[0], size[1], short, out)
			}
		}
	}
	for query, want := range map[string]int{"review": 2, "brief": 1, "german": 1, "quick": 3} {
		m.sessions.query = query
		m.sessions.applyFilter()
		if n := len(m.sessions.view); n != want {
			t.Errorf("filtering by %q keeps %d rows, want %d", query, n, want)
		}
	}
}

// The preview's hint of a cancelled session is shown whole at 120
// columns, on two lines where one is too narrow (trial: "enter: …").
func TestPreviewHintIsNeverCut(t *testing.T) {
	m, _ := newTestModel(t, 120, 40, "dark", true)
	m.Update(listLoaded(m, store.Session{ID: "s1", Title: "Flaky tests", Question: "What causes flaky tests?", Status: store.StatusCancelled, CreatedAt: testNow}))
	toList(t, m)
	out := ansi.Strip(m.render())
	for _, want := range []string{"R: resume from the last checkpoint", "enter: read what exists"} {
		if !strings.Contains(out, want) {
			t.Errorf("the preview lacks %q:\n%s", want, out)
		}
	}
}
