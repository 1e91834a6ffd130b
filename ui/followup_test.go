package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/researchtui/researchtui/pipeline"
)

// TestFollowUpFromTheReport: f on the report opens the follow-up line;
// what is typed (keys that are commands elsewhere included) is asked of
// the session, and the follow-up's run opens on the run screen.
func TestFollowUpFromTheReport(t *testing.T) {
	m, svc := newTestModel(t, 120, 40, "dark", false)
	openFixtureReport(t, m)
	id := m.report.id
	press(t, m, "f")
	if _, ok := m.dialog.(*followUpDialog); !ok {
		t.Fatalf("f opened %T", m.dialog)
	}
	for _, r := range "quiet? does it need labelled data" {
		press(t, m, string(r))
	}
	press(t, m, "enter")
	svc.mu.Lock()
	asked := append([]string(nil), svc.asked...)
	svc.mu.Unlock()
	if len(asked) != 1 || asked[0] != id+": quiet? does it need labelled data" {
		t.Fatalf("asked %q", asked)
	}
	if m.screen != screenRun {
		t.Errorf("the follow-up's run is not shown (screen %v)", m.screen)
	}
	// Its status bar names the session's model (issue 36 #9: "model" and
	// no name).
	sess, _ := svc.Session(id)
	if bar := ansi.Strip(m.render()); sess.Model == "" || !strings.Contains(bar, "model "+sess.Model) {
		t.Errorf("the follow-up's status bar does not name the model %q:\n%s", sess.Model, bar)
	}
}

// TestVersionsAndWhatChanged: V lists the versions; enter shows what the
// chosen one changed against the one before.
func TestVersionsAndWhatChanged(t *testing.T) {
	m, svc := newTestModel(t, 80, 24, "dark", false)
	openFixtureReport(t, m)
	id := m.report.id
	svc.versions = map[string][]pipeline.Version{id: {
		{N: 1, Kind: pipeline.VersionRun, Question: "How stable are perovskites?", CreatedAt: testNow, Report: "# R\n\nOld text [1].\n"},
		{N: 2, Kind: pipeline.VersionFollowUp, Question: "and under humidity?", CreatedAt: testNow.Add(time.Hour), Report: "# R\n\nOld text [1].\n\n## Follow-up: and under humidity?\n\nNew text [2].\n"},
	}}
	press(t, m, "V")
	d, ok := m.dialog.(*versionsDialog)
	if !ok {
		t.Fatalf("V opened %T", m.dialog)
	}
	out := ansi.Strip(m.render())
	if !strings.Contains(out, "v1") || !strings.Contains(out, "follow-up") || strings.Contains(out, "follow_up") || !strings.Contains(out, "and under humidity?") {
		t.Errorf("the versions are not listed:\n%s", out)
	}
	press(t, m, "enter")
	out = ansi.Strip(m.render())
	if !d.diff || !strings.Contains(out, "+ ## Follow-up: and under humidity?") || !strings.Contains(out, "+ New text [2].") || strings.Contains(out, "- Old text") {
		t.Errorf("what v2 changed is not shown:\n%s", out)
	}
}

func TestLineDiff(t *testing.T) {
	got := strings.Join(lineDiff("a\nb\nc", "a\nx\nc\nd"), "|")
	if got != "  a|+ x|- b|  c|+ d" && got != "  a|- b|+ x|  c|+ d" {
		t.Errorf("lineDiff = %q", got)
	}
}

// A follow-up reads, indexes and analyses inside its research step, so
// those stages have only their agents' events: their rows follow the
// agents (running, then done), instead of staying pending beside finished
// agents (issue 36 #9).
func TestStagesDescribedOnlyByTheirAgents(t *testing.T) {
	rs := newRunView("s1", "Follow-up: and under humidity?", "qwen3:8b", nil, testNow)
	at := testNow
	apply := func(evs ...pipeline.Event) {
		for _, ev := range evs {
			ev.Time = at
			rs.apply(ev)
			at = at.Add(time.Second)
		}
	}
	apply(pipeline.Event{Type: pipeline.StageStarted, Stage: pipeline.StageResearch},
		pipeline.Event{Type: pipeline.AgentStarted, Stage: pipeline.StageAnalyse, Agent: "analyst 1"},
		pipeline.Event{Type: pipeline.AgentStarted, Stage: pipeline.StageAnalyse, Agent: "analyst 2"})
	if row := rs.stage(pipeline.StageAnalyse); row.phase != phaseRunning {
		t.Fatalf("analyse while its agents run: phase %v", row.phase)
	}
	apply(pipeline.Event{Type: pipeline.AgentFinished, Stage: pipeline.StageAnalyse, Agent: "analyst 1"})
	if row := rs.stage(pipeline.StageAnalyse); row.phase != phaseRunning {
		t.Fatalf("analyse with one agent still running: phase %v", row.phase)
	}
	apply(pipeline.Event{Type: pipeline.AgentFinished, Stage: pipeline.StageAnalyse, Agent: "analyst 2"})
	if row := rs.stage(pipeline.StageAnalyse); row.phase != phaseDone || row.elapsed != 3*time.Second {
		t.Errorf("analyse after its agents: phase %v, %v", row.phase, row.elapsed)
	}
}

// At 80 columns the follow-up dialog's hint wraps instead of losing its
// end (trial finding).
func TestFollowUpHintFitsAt80(t *testing.T) {
	m, _ := newTestModel(t, 80, 24, "dark", true)
	openFixtureReport(t, m)
	press(t, m, "f")
	if out := ansi.Strip(m.render()); !strings.Contains(out, "when not") || strings.Contains(out, "researched whe…") {
		t.Errorf("the hint is cut:\n%s", out)
	}
}

// Resizing the window keeps the reader at the same place in the report:
// re-wrapped to another width the text has another number of lines, so
// the same line number would be elsewhere in it (trial finding).
func TestResizeKeepsThePlaceInTheReport(t *testing.T) {
	m, svc := newTestModel(t, 200, 40, "dark", true)
	for id, rep := range svc.reports {
		for i := range 30 {
			rep.Markdown += fmt.Sprintf("\n\nParagraph %d: perovskite films degrade under humidity, heat and light, and encapsulation slows the loss of efficiency in every study the review read.", i)
		}
		svc.reports[id] = rep
	}
	openFixtureReport(t, m)
	r := &m.report
	total := len(r.vp.lines)
	if total < 20 {
		t.Skipf("the fixture report has %d lines: too short to scroll", total)
	}
	r.vp.SetYOffset(total / 2)
	frac := float64(r.vp.YOffset()) / float64(total)
	_, cmd := m.Update(tea.WindowSizeMsg{Width: 70, Height: 24})
	run(t, m, cmd)
	settle(m)
	after := float64(r.vp.YOffset()) / float64(len(r.vp.lines))
	if len(r.vp.lines) == total {
		t.Fatal("the report was not re-wrapped at 80 columns: the test proves nothing")
	}
	if after < frac-0.1 || after > frac+0.1 {
		t.Errorf("at %.0f%% of the report before the resize, at %.0f%% after", 100*frac, 100*after)
	}
}

// A follow-up the session's sources answered ends without reading,
// indexing or analysing: those stages say "skipped" once it completed,
// not pending (user trial).
func TestStagesARunDidNotNeedAreSkipped(t *testing.T) {
	m, svc := newTestModel(t, 120, 40, "dark", true)
	typeText(t, m, "and under humidity?")
	press(t, m, "enter")
	r := svc.runs[len(svc.runs)-1]
	seq := int64(0)
	ev := func(e pipeline.Event) pipeline.Event {
		seq++
		e.SessionID, e.Seq, e.Time = r.id, seq, testNow
		return e
	}
	feedRun(t, m, r,
		ev(pipeline.Event{Type: pipeline.RunStarted, Count: 2}),
		ev(pipeline.Event{Type: pipeline.StageStarted, Stage: pipeline.StageResearch}),
		ev(pipeline.Event{Type: pipeline.StageFinished, Stage: pipeline.StageResearch}),
		ev(pipeline.Event{Type: pipeline.StageStarted, Stage: pipeline.StageWrite}),
		ev(pipeline.Event{Type: pipeline.StageFinished, Stage: pipeline.StageWrite}),
		ev(pipeline.Event{Type: pipeline.RunFinished, Status: "completed"}),
	)
	out := ansi.Strip(m.render())
	if !strings.Contains(out, "– read") || !strings.Contains(out, "skipped") || strings.Contains(out, "○ read") {
		t.Errorf("stages the follow-up did not need:\n%s", out)
	}
}

// TestAFollowUpsAnswerIsInView (issue 47 #1): when a follow-up finishes,
// the report opens at its answer (added at the end, pages below the top),
// and a notice says where it is.
func TestAFollowUpsAnswerIsInView(t *testing.T) {
	m, svc := newTestModel(t, 120, 40, "dark", false)
	c := &clock{t: testNow}
	m.now = c.now
	openFixtureReport(t, m)
	id := m.report.id
	grown := fixtureReport()
	grown.Markdown += "\n\n" + strings.Repeat("Another paragraph of the report, long enough to push the follow-up pages down [1].\n\n", 40) +
		"## Follow-up: does it need labelled data?\n\nIt needs little labelled data [2].\n"
	svc.mu.Lock()
	svc.reports[id] = grown
	svc.mu.Unlock()
	press(t, m, "f")
	for _, r := range "does it need labelled data?" {
		press(t, m, string(r))
	}
	press(t, m, "enter")
	r := svc.runs[len(svc.runs)-1]
	evs := []pipeline.Event{
		{Type: pipeline.RunStarted, Count: 2, Message: "Follow-up: does it need labelled data?"},
		{Type: pipeline.RunFinished, Status: "completed", Message: "report ready"},
	}
	for i := range evs {
		evs[i].SessionID, evs[i].Seq, evs[i].Time = r.id, int64(i+1), testNow
	}
	_, cmd := m.Update(runEventsMsg{id: r.id, events: evs, closed: true})
	run(t, m, cmd)
	settle(m)
	if m.screen != screenReport {
		t.Fatalf("the report did not come back (screen %v)", m.screen)
	}
	out := ansi.Strip(m.render())
	if !strings.Contains(out, "Follow-up: does it need labelled data?") || !strings.Contains(out, "It needs little labelled data") {
		t.Errorf("the follow-up's answer is not in view:\n%s", out)
	}
	if !strings.Contains(out, "the follow-up's answer") {
		t.Errorf("nothing says where the answer is:\n%s", out)
	}
}

// TestWhatChangedWrapsAddedParagraphs (issue 47 #9): at 120 columns the
// lines a version added are wrapped, not cut with "…", so a new paragraph
// can be read whole.
func TestWhatChangedWrapsAddedParagraphs(t *testing.T) {
	m, svc := newTestModel(t, 120, 40, "dark", false)
	openFixtureReport(t, m)
	id := m.report.id
	para := "Later work measured degradation under damp heat for a thousand hours and found that encapsulated cells kept most of their efficiency, while bare films lost half of it within days [3]."
	svc.versions = map[string][]pipeline.Version{id: {
		{N: 1, Kind: pipeline.VersionRun, Question: "q", CreatedAt: testNow, Report: "# R\n\nOld text [1].\n"},
		{N: 2, Kind: pipeline.VersionFollowUp, Question: "and later?", CreatedAt: testNow.Add(time.Hour), Report: "# R\n\nOld text [1].\n\n" + para + "\n"},
	}}
	press(t, m, "V")
	press(t, m, "enter")
	out := ansi.Strip(m.render())
	var added []string
	for _, l := range strings.Split(out, "\n") {
		if _, after, ok := strings.Cut(l, "│ + "); ok {
			added = append(added, strings.TrimRight(strings.TrimRight(after, " "), "│"))
		}
	}
	got := strings.Join(strings.Fields(strings.Join(added, " ")), " ")
	if got != para {
		t.Errorf("the added paragraph reads %q, want it whole:\n%s", got, out)
	}
}

// TestWhatChangedPages: the diff view pages as the other long views do:
// G to the end, g to the top (trial: only j/k moved it).
func TestWhatChangedPages(t *testing.T) {
	m, svc := newTestModel(t, 80, 24, "dark", false)
	openFixtureReport(t, m)
	id := m.report.id
	var long strings.Builder
	for i := 1; i <= 60; i++ {
		fmt.Fprintf(&long, "Line %d of the new version.\n", i)
	}
	svc.versions = map[string][]pipeline.Version{id: {
		{N: 1, Kind: pipeline.VersionRun, Question: "q", CreatedAt: testNow, Report: "# R\n"},
		{N: 2, Kind: pipeline.VersionFollowUp, Question: "more?", CreatedAt: testNow.Add(time.Hour), Report: "# R\n" + long.String()},
	}}
	press(t, m, "V")
	press(t, m, "enter")
	press(t, m, "G")
	if out := ansi.Strip(m.render()); !strings.Contains(out, "Line 60 of") || strings.Contains(out, "Line 1 of") {
		t.Errorf("G did not go to the end:\n%s", out)
	}
	press(t, m, "g")
	if out := ansi.Strip(m.render()); !strings.Contains(out, "Line 1 of") {
		t.Errorf("g did not go to the top:\n%s", out)
	}
}
