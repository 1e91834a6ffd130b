package ui

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/themes"
)

func selectedID(m *rootModel) string {
	if r := m.sessions.selected(); r != nil {
		return r.s.ID
	}
	return ""
}

func TestSessionsKeys(t *testing.T) {
	m, svc := newTestModel(t, 80, 24, "dark", false)
	c := &clock{t: testNow}
	m.now = c.now
	if m.sessions.focus != focusLine {
		t.Fatal("the question line has the keys at start")
	}
	toList(t, m)
	if got := selectedID(m); got != "s6" {
		t.Fatalf("newest first: selected %q, want s6", got)
	}
	press(t, m, "j", "j")
	if got := selectedID(m); got != "s4" {
		t.Errorf("j j: %q, want s4", got)
	}
	press(t, m, "k")
	if got := selectedID(m); got != "s5" {
		t.Errorf("k: %q, want s5", got)
	}
	press(t, m, "G")
	if got := selectedID(m); got != "s1" {
		t.Errorf("G: %q", got)
	}
	press(t, m, "g")
	if got := selectedID(m); got != "s6" {
		t.Errorf("g: %q", got)
	}
	// ↑ on the first row goes up to the question line; ↓ comes back.
	press(t, m, "up")
	if m.sessions.focus != focusLine {
		t.Fatal("↑ on the first session: the question line")
	}
	press(t, m, "down")
	if m.sessions.focus != focusList || selectedID(m) != "s6" {
		t.Fatal("↓ from the line: back on the list, selection kept")
	}

	// / filters; q is text while filtering; esc clears.
	press(t, m, "/", "p", "e", "r", "o", "q")
	if len(m.sessions.view) != 0 || m.quitting {
		t.Errorf("filter peroq: %d rows, quitting=%v", len(m.sessions.view), m.quitting)
	}
	press(t, m, "backspace")
	if len(m.sessions.view) != 1 || selectedID(m) != "s4" {
		t.Errorf("filter pero: %d rows, sel %q", len(m.sessions.view), selectedID(m))
	}
	press(t, m, "enter") // keep the filter, leave the input
	if m.sessions.filtering || m.sessions.query != "pero" {
		t.Errorf("enter keeps the filter: filtering=%v query=%q", m.sessions.filtering, m.sessions.query)
	}
	press(t, m, "esc")
	if m.sessions.query != "" || len(m.sessions.view) != 6 {
		t.Errorf("esc clears the filter")
	}

	// ? toggles help.
	press(t, m, "?")
	if !m.showHelp {
		t.Error("? opens help")
	}
	press(t, m, "?")
	if m.showHelp {
		t.Error("? closes help")
	}

	// t cycles the theme and saves it.
	before := m.themeName
	press(t, m, "t")
	if m.themeName == before {
		t.Error("t cycles the theme")
	}
	if len(svc.saved) != 1 || svc.saved[0].Theme != m.configured || svc.saved[0].Form != nil {
		t.Errorf("the theme was not saved: %+v", svc.saved)
	}
	// Every theme comes round, then auto (the terminal's background
	// decides again), then the first theme: no choice is a dead end.
	seen := map[string]bool{}
	for range len(themes.Names()) + 1 {
		seen[m.configured] = true
		press(t, m, "t")
	}
	for _, n := range append(themes.Names(), themes.Auto) {
		if !seen[n] {
			t.Errorf("t never reached %q (saw %v)", n, seen)
		}
	}
	if last := svc.saved[len(svc.saved)-1].Theme; last != m.configured {
		t.Errorf("saved %q, shows %q", last, m.configured)
	}
	// A key the list doesn't bind types on the question line.
	press(t, m, "T")
	if m.sessions.focus != focusLine || m.sessions.line.Value() != "T" {
		t.Fatalf("T from the list: focus %v, line %q", m.sessions.focus, m.sessions.line.Value())
	}
	press(t, m, "esc", "esc") // clears the line, then goes to the list
	if m.sessions.line.Value() != "" || m.sessions.focus != focusList {
		t.Fatalf("esc esc: line %q, focus %v", m.sessions.line.Value(), m.sessions.focus)
	}

	// d asks, n keeps, d y deletes.
	press(t, m, "G", "d")
	if _, ok := m.dialog.(*confirmDialog); !ok {
		t.Fatalf("d opens a confirmation, got %T", m.dialog)
	}
	c.advance(time.Second)
	press(t, m, "n")
	if m.dialog != nil || len(svc.deleted) != 0 {
		t.Fatalf("n keeps the session")
	}
	press(t, m, "d")
	c.advance(time.Second)
	press(t, m, "y")
	if !reflect.DeepEqual(svc.deleted, []string{"s1"}) {
		t.Fatalf("deleted %v", svc.deleted)
	}
	if len(m.sessions.rows) != 5 {
		t.Errorf("list reloads after delete: %d rows", len(m.sessions.rows))
	}

	// enter on a completed session opens its report.
	press(t, m, "g", "j", "j", "enter")
	if m.screen != screenReport || m.report.id != "s4" || !m.report.loaded {
		t.Fatalf("enter opens the report: screen %v id %q loaded %v", m.screen, m.report.id, m.report.loaded)
	}
	press(t, m, "esc")
	if m.screen != screenSessions || m.sessions.focus != focusList {
		t.Fatal("esc returns to the list")
	}

	// R resumes an interrupted session; enter on awaiting review resumes.
	press(t, m, "G", "R")
	if !reflect.DeepEqual(svc.resumed, []string{"s2"}) || m.screen != screenRun || m.active != "s2" {
		t.Fatalf("R: resumed %v screen %v", svc.resumed, m.screen)
	}
	press(t, m, "esc", "g", "j", "enter")
	if !reflect.DeepEqual(svc.resumed, []string{"s2", "s5"}) {
		t.Fatalf("enter on awaiting review resumes: %v", svc.resumed)
	}
	press(t, m, "esc")

	// n opens the form with what the line holds; esc gives it back.
	press(t, m, "n")
	if _, ok := m.dialog.(*newRunDialog); !ok {
		t.Fatalf("n: %T", m.dialog)
	}
	press(t, m, "W", "h", "y", "esc")
	if m.dialog != nil || m.sessions.line.Value() != "Why" {
		t.Fatalf("esc from the form: %T, line %q", m.dialog, m.sessions.line.Value())
	}
	press(t, m, "ctrl+o")
	if d, ok := m.dialog.(*newRunDialog); !ok || d.question.Value() != "Why" {
		t.Fatalf("ctrl+o opens the form with the line's question: %T", m.dialog)
	}
	press(t, m, "esc", "esc", "esc", "q")
	if _, ok := m.dialog.(*quitDialog); !ok || m.quitting {
		t.Fatalf("q with the resumed runs live: %T, quitting %v; want the question", m.dialog, m.quitting)
	}
	c.advance(time.Second)
	press(t, m, "n")
	if m.dialog != nil || m.quitting {
		t.Fatal("n keeps working")
	}
	press(t, m, "ctrl+c", "ctrl+c")
	if !m.quitting {
		t.Error("ctrl+c twice quits")
	}
}

func TestRunKeys(t *testing.T) {
	m, _, c, r := scriptedRun(t, 80, 24)

	// esc goes back, the run goes on, enter comes back live.
	press(t, m, "esc")
	if m.screen != screenSessions {
		t.Fatal("esc: back to sessions")
	}
	feedRun(t, m, r, pipeline.Event{Type: pipeline.Warning, Message: "late warning", Seq: 999})
	rs := m.runs[r.id]
	if got := rs.warnings[len(rs.warnings)-1]; got != "late warning" {
		t.Fatalf("events keep arriving in the background: %q", got)
	}
	m.Update(listLoaded(m, append([]store.Session{{ID: r.id, Title: "Perovskite stability", Status: "running", CreatedAt: testNow}}, fixtureSessions()...)...))
	toList(t, m)
	press(t, m, "g", "enter")
	if m.screen != screenRun || m.active != r.id {
		t.Fatal("enter on the live session shows it again")
	}
	if !strings.Contains(ansi.Strip(m.render()), "late warning") {
		t.Error("the run screen shows what arrived in the background")
	}

	// c asks; n keeps going; c y cancels.
	press(t, m, "c")
	if _, ok := m.dialog.(*confirmDialog); !ok {
		t.Fatalf("c asks first: %T", m.dialog)
	}
	c.advance(time.Second)
	press(t, m, "n")
	if r.cancelled {
		t.Fatal("n must not cancel")
	}
	press(t, m, "c")
	c.advance(time.Second)
	press(t, m, "y")
	if !r.cancelled {
		t.Fatal("c y cancels")
	}

	// The review arrives: the dialog opens.
	evs := scriptToReview(r.id)
	feedRun(t, m, r, evs[len(evs)-1])
	if _, ok := m.dialog.(*reviewDialog); !ok {
		t.Fatalf("ReviewRequested opens the dialog: %T", m.dialog)
	}
	c.advance(time.Second)
	press(t, m, "esc")
	if m.dialog != nil || m.runs[r.id].review == nil {
		t.Fatal("esc leaves the review pending")
	}
	press(t, m, "v")
	if _, ok := m.dialog.(*reviewDialog); !ok {
		t.Fatal("v reopens the review")
	}
	c.advance(time.Second)
	press(t, m, "a")

	// The run finishes: the report opens by itself.
	feedRun(t, m, r, scriptFinish(r.id, 100)...)
	_, cmd := m.Update(runEventsMsg{id: r.id, closed: true})
	run(t, m, cmd)
	if m.screen != screenReport {
		t.Fatalf("a finished run opens its report, screen %v", m.screen)
	}
}

func TestThemeFollowsBackground(t *testing.T) {
	m := newModel(t.Context(), Config{Theme: "auto"}, &fakeServices{}, options{now: func() time.Time { return testNow }})
	if cmd := m.Init(); cmd == nil {
		t.Fatal("Init loads sessions")
	}
	m.Update(tea.BackgroundColorMsg{Color: lightColor{}})
	if m.themeName != "light" {
		t.Errorf("a light background picks light, got %s", m.themeName)
	}
	m2 := newModel(t.Context(), Config{Theme: "nord"}, &fakeServices{}, options{now: func() time.Time { return testNow }})
	m2.Update(tea.BackgroundColorMsg{Color: lightColor{}})
	if m2.themeName != "nord" {
		t.Errorf("a configured theme is kept, got %s", m2.themeName)
	}
}

type lightColor struct{}

func (lightColor) RGBA() (r, g, b, a uint32) { return 0xffff, 0xffff, 0xffff, 0xffff }

func TestBackendDownStillBrowses(t *testing.T) {
	m, svc := newTestModel(t, 80, 24, "dark", false)
	c := &clock{t: testNow}
	m.now = c.now
	m.cfg.BackendErr = errBackend
	svc.startErr = errNoBackend
	out := ansi.Strip(m.render())
	if !strings.Contains(out, "new research needs the model backend") || !strings.Contains(out, "ollama serve") {
		t.Errorf("banner with the fix:\n%s", out)
	}
	toList(t, m)
	press(t, m, "G", "k", "R")
	if len(svc.resumed) != 0 || !m.noticeErr {
		t.Error("resume without a backend explains instead of failing")
	}
	// An awaiting review can still be finalised offline: rejecting needs no model.
	press(t, m, "g", "j", "R")
	if _, ok := m.dialog.(*confirmDialog); !ok {
		t.Fatalf("R on an awaiting review offline: %T, want the finalise question", m.dialog)
	}
	c.advance(time.Second)
	press(t, m, "y")
	if len(svc.resumed) != 1 || svc.resumed[0] != "s5" || svc.answers[0] == nil || svc.answers[0].Approve {
		t.Errorf("resumed %v with %+v, want s5 answered with a rejection", svc.resumed, svc.answers)
	}
	if m.screen == screenRun {
		press(t, m, "esc")
	}
	press(t, m, "g", "j", "j", "enter")
	if !m.report.loaded {
		t.Error("reports open without a backend")
	}
}

// TestConfirmIgnoresTyping: a question typed on the sessions screen that
// starts with d opens the delete confirmation; the rest of what is typed
// in flow must not confirm it.
func TestConfirmIgnoresTyping(t *testing.T) {
	m, svc := newTestModel(t, 80, 24, "dark", false)
	c := &clock{t: testNow}
	m.now = c.now
	toList(t, m)
	for _, k := range []string{"d", "o", "e", "s", "space", "y", "o", "u", "r"} {
		press(t, m, k)
		c.advance(80 * time.Millisecond) // typing speed
	}
	if len(svc.deleted) != 0 {
		t.Fatalf("typing \"does your\" deleted %v", svc.deleted)
	}

	// After the grace, a key other than y is no.
	m, svc = newTestModel(t, 80, 24, "dark", false)
	m.now = c.now
	toList(t, m)
	press(t, m, "d")
	c.advance(confirmGrace + 100*time.Millisecond)
	press(t, m, "o")
	if m.dialog != nil || len(svc.deleted) != 0 {
		t.Fatalf("o after the grace closes the dialog as no: %T, deleted %v", m.dialog, svc.deleted)
	}
	press(t, m, "y") // now typing, not confirming
	if len(svc.deleted) != 0 {
		t.Fatalf("y after the dialog closed deleted %v", svc.deleted)
	}

	// d, a pause past the grace, y: deleted.
	m, svc = newTestModel(t, 80, 24, "dark", false)
	m.now = c.now
	toList(t, m)
	press(t, m, "G", "d")
	c.advance(confirmGrace + 100*time.Millisecond)
	press(t, m, "y")
	if !reflect.DeepEqual(svc.deleted, []string{"s1"}) {
		t.Fatalf("d, pause, y: deleted %v, want [s1]", svc.deleted)
	}
}

// TestNoDoubleResume: R R (or enter then R) before the first resume has
// started resumes once; an engine that refuses a resume is a notice.
func TestNoDoubleResume(t *testing.T) {
	m, svc := newTestModel(t, 80, 24, "dark", false)
	toList(t, m)
	press(t, m, "G", "k") // s2, interrupted
	_, first := m.Update(kp("R"))
	_, second := m.Update(kp("R")) // before runStartedMsg arrives
	if second != nil {
		t.Error("a second R while resuming must issue nothing")
	}
	run(t, m, first)
	run(t, m, second)
	if !reflect.DeepEqual(svc.resumed, []string{"s2"}) || m.screen != screenRun {
		t.Fatalf("R R: resumed %v, screen %v", svc.resumed, m.screen)
	}
	if m.resuming["s2"] {
		t.Error("resuming is cleared once the run started")
	}

	// enter on an awaiting review resumes it; R right after does not again.
	press(t, m, "esc", "g", "j") // s5, awaiting review
	_, first = m.Update(kp("enter"))
	_, second = m.Update(kp("R"))
	run(t, m, first)
	run(t, m, second)
	if !reflect.DeepEqual(svc.resumed, []string{"s2", "s5"}) {
		t.Fatalf("enter R: resumed %v", svc.resumed)
	}

	// The engine refuses (the session is resuming elsewhere): a notice, and
	// R can be tried again.
	m, svc = newTestModel(t, 80, 24, "dark", false)
	svc.resumeErr = errors.New("session s2 is already running")
	toList(t, m)
	press(t, m, "G", "k", "R")
	if !m.noticeErr || !strings.Contains(m.notice, "already running") || m.screen != screenSessions {
		t.Fatalf("a refused resume: notice %q (err %v), screen %v", m.notice, m.noticeErr, m.screen)
	}
	if m.resuming["s2"] {
		t.Fatal("resuming is cleared when the resume fails")
	}
	svc.resumeErr = nil
	press(t, m, "R")
	if len(svc.resumed) != 2 || m.screen != screenRun {
		t.Fatalf("R after a refusal: resumed %v, screen %v", svc.resumed, m.screen)
	}
}

// TestWriteNowAndTimeLeft: s on the run screen tells the live run to stop
// waiting and write; a run with a deadline shows the time left.
func TestWriteNowAndTimeLeft(t *testing.T) {
	m, _, _, r := scriptedRun(t, 120, 40)
	r.mu.Lock()
	r.deadline = testNow.Add(90 * time.Second)
	r.mu.Unlock()
	if out := m.render(); !strings.Contains(out, "left") || !strings.Contains(out, "1m30s") {
		t.Errorf("no time left shown:\n%s", out)
	}
	press(t, m, "s")
	r.mu.Lock()
	wrote := r.wroteNow
	r.mu.Unlock()
	if !wrote || !strings.Contains(m.render(), "writing now") {
		t.Error("s did not ask the run to write now")
	}
}

// Opening a source's URL says what happened: the browser opened, or the
// opener's own complaint (xdg-open exits 3 without a browser) with the URL
// and the keys that copy instead.
func TestOpeningAURLSaysWhatHappened(t *testing.T) {
	m, _ := newTestModel(t, 120, 40, "dark", true)
	m.Update(openedMsg{url: "https://arxiv.org/abs/1111.2011"})
	if !strings.Contains(m.notice, "opened https://arxiv.org/abs/1111.2011 in the browser") {
		t.Errorf("after opening: %q", m.notice)
	}
	m.Update(openedMsg{url: "https://arxiv.org/abs/1111.2011", err: errors.New("xdg-open: no method available for opening 'https://arxiv.org/abs/1111.2011'")})
	if !strings.Contains(m.notice, "could not open https://arxiv.org/abs/1111.2011 (xdg-open: no method available") || !strings.Contains(m.notice, "y copies the reference") {
		t.Errorf("after a failure: %q", m.notice)
	}
}

// A notice belongs to the screen it was given on: "type a question first"
// does not follow the person into a report, nor an open error back to the
// list (issue 36 #24).
func TestNoticesStayOnTheirScreen(t *testing.T) {
	m, _ := newTestModel(t, 100, 30, "dark", false)
	press(t, m, "enter") // an empty question line
	if !strings.Contains(m.render(), "type a question first") {
		t.Fatalf("no notice for an empty question:\n%s", m.render())
	}
	openFixtureReport(t, m)
	if strings.Contains(m.render(), "type a question first") {
		t.Errorf("the list's notice followed into the report:\n%s", m.render())
	}
	m.Update(openedMsg{url: "https://doi.org/10.1/x", err: errors.New("xdg-open: not found")})
	if !strings.Contains(m.render(), "could not open") {
		t.Fatalf("no notice for a failed open:\n%s", m.render())
	}
	press(t, m, "esc")
	if m.screen != screenSessions || strings.Contains(m.render(), "could not open") {
		t.Errorf("screen %v; the report's error followed back to the list:\n%s", m.screen, m.render())
	}
}

// The token meter follows the streaming writer (an estimate, marked ~)
// and takes the server's count when the call ends (issue 36 #25: the bar
// said 103 while the writer showed ~848).
func TestTokenMeterFollowsTheStream(t *testing.T) {
	m, svc := newTestModel(t, 120, 40, "dark", true)
	typeText(t, m, "Perovskite stability")
	press(t, m, "enter")
	r := svc.runs[len(svc.runs)-1]
	at := testNow
	seq := int64(0)
	ev := func(e pipeline.Event) pipeline.Event {
		seq++
		e.SessionID, e.Seq, e.Time = r.id, seq, at
		return e
	}
	feedRun(t, m, r,
		ev(pipeline.Event{Type: pipeline.RunStarted}),
		ev(pipeline.Event{Type: pipeline.StageStarted, Stage: pipeline.StageWrite}),
		ev(pipeline.Event{Type: pipeline.UsageUpdated, Stage: pipeline.StagePlan, Agent: "planner", Usage: &pipeline.UsageTotals{PromptTokens: 900, CompletionTokens: 103}}),
		ev(pipeline.Event{Type: pipeline.AgentStarted, Stage: pipeline.StageWrite, Agent: "writer"}),
		ev(pipeline.Event{Type: pipeline.TokenDelta, Stage: pipeline.StageWrite, Agent: "writer", Text: strings.Repeat("word ", 800)}),
	)
	if out := ansi.Strip(m.render()); !strings.Contains(out, "completion ~1.1k") {
		t.Errorf("while the writer streams 4,000 characters the meter says:\n%s", tailOf(out))
	}
	feedRun(t, m, r,
		ev(pipeline.Event{Type: pipeline.UsageUpdated, Stage: pipeline.StageWrite, Agent: "writer", Usage: &pipeline.UsageTotals{PromptTokens: 2000, CompletionTokens: 1250}}),
		ev(pipeline.Event{Type: pipeline.AgentFinished, Stage: pipeline.StageWrite, Agent: "writer", Usage: &pipeline.UsageTotals{CompletionTokens: 1147}}),
	)
	if out := ansi.Strip(m.render()); !strings.Contains(out, "completion 1.2k") || strings.Contains(out, "completion ~") {
		t.Errorf("after the call the meter is not the server's count:\n%s", tailOf(out))
	}
}

func tailOf(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "completion") {
			return l
		}
	}
	return s
}

// A cancelled run says so: the stages it stopped in keep the time they
// ran (a trial saw "✗ research 0.0s" for stages that had run 3 s), the
// notice no longer says "cancelling", and esc no longer promises the run
// goes on.
func TestACancelledRunSaysItEnded(t *testing.T) {
	m, _, c, r := scriptedRun(t, 80, 24)
	feedRun(t, m, r, pipeline.Event{Type: pipeline.StageStarted, Stage: pipeline.StageResearch, Time: testNow})
	press(t, m, "c")
	c.advance(time.Second)
	press(t, m, "y")
	if !r.cancelled || !strings.HasPrefix(m.notice, "cancelling") {
		t.Fatalf("c y: cancelled %v, notice %q", r.cancelled, m.notice)
	}
	_, cmd := m.Update(runEventsMsg{id: r.id, events: []pipeline.Event{{Type: pipeline.RunCancelled, Time: testNow.Add(3 * time.Second)}}, closed: true})
	run(t, m, cmd)
	st := m.runs[r.id].byStage[pipeline.StageResearch]
	if st.phase != phaseFailed || st.elapsed != 3*time.Second {
		t.Errorf("the research stage: phase %v, %s; want stopped after 3s", st.phase, st.elapsed)
	}
	if !strings.HasPrefix(m.notice, "cancelled") {
		t.Errorf("notice %q after the run ended", m.notice)
	}
	if view := ansi.Strip(m.render()); strings.Contains(view, "run continues") || !strings.Contains(view, "3.0s") {
		t.Errorf("the screen of a cancelled run:\n%s", view)
	}
}

// At 80 columns an agent's round survives the cut: "screener r2", not
// "screener (ro…" (trial).
func TestNarrowAgentNamesKeepTheirRound(t *testing.T) {
	m, _ := newTestModel(t, 80, 24, "dark", true)
	a := &agentRow{name: "screener (round 2)", phase: phaseDone, elapsed: time.Second, tokens: 1200, exactTok: true}
	line := ansi.Strip(m.agentLine(a, 36, testNow))
	if !strings.Contains(line, "screener r2") {
		t.Errorf("narrow: %q", line)
	}
	if line := ansi.Strip(m.agentLine(a, 70, testNow)); !strings.Contains(line, "screener (round 2)") {
		t.Errorf("wide: %q", line)
	}
}

// The next round's review ends "revising with the accepted requests…":
// the notice does not stay under the review it led to (trial).
func TestTheNextReviewEndsTheRevisingNotice(t *testing.T) {
	m, _, _, r := scriptedRun(t, 80, 24)
	m.setNotice(decidedNotice(false, pipeline.Decision{Approve: true}), false)
	evs := scriptToReview(r.id)
	feedRun(t, m, r, evs[len(evs)-1])
	if _, ok := m.dialog.(*reviewDialog); !ok || m.notice != "" {
		t.Errorf("dialog %T, notice %q", m.dialog, m.notice)
	}
}
