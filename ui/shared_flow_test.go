package ui

import (
	"github.com/charmbracelet/x/ansi"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/store"
)

// A run that another researchtui process starts on the same data dir (as
// `researchtui mcp` or `run` would) appears in the open TUI's session list
// by itself, shows live when opened, and its review is decided here by
// keypress: the decision reaches the other process, whose run revises and
// completes. Quitting the TUI leaves that run alone. The other process is
// an engine on a store.Conn, a client of this TUI's store over the real
// socket.
func TestRunElsewhereShowsLiveAndIsReviewedHere(t *testing.T) {
	env, conn := pipelinetest.NewSharedEnv(t, &pipelinetest.Script{RevisionRounds: 1})
	other := &pipeline.Engine{Store: conn, LLM: env.Engine.LLM, Sources: env.Engine.Sources}

	ctx := t.Context()
	tm := teatest.NewTestModel(t, flowModel(ctx, t, env, true), teatest.WithInitialTermSize(120, 40))
	waitText(t, tm, "Sessions")
	run, err := other.Start(ctx, env.Options(flowQuestion))
	if err != nil {
		t.Fatal(err)
	}
	go drainEvents(run.Events())
	waitText(t, tm, "started in another researchtui") // listed, and said, without a key pressed
	tm.Send(tea.KeyPressMsg{Code: tea.KeyTab})
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	waitText(t, tm, "elsewhere", "The reviewer asks for revisions")
	afterGrace()
	tm.Type("a")
	select {
	case <-run.Done():
	case <-time.After(60 * time.Second):
		t.Fatal("the other process's run never finished after the decision made here")
	}
	sess, err := run.Wait()
	if err != nil || sess.Status != store.StatusCompleted {
		t.Fatalf("the run elsewhere: %q %v", sess.Status, err)
	}
	// The TUI opens the report when the watched run completes (the revised
	// text alone may be the writer streaming in the output pane).
	waitText(t, tm, "focus: report", "This revised report")
	tm.Type("q")
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*rootModel)
	shutdownRuns(fm.liveHandles(), 5*time.Second)
	if got, _ := env.Store.Session(run.ID()); got.Status != store.StatusCompleted {
		t.Errorf("after quitting the TUI the session is %q", got.Status)
	}
}

// A review decided elsewhere (the process that runs the session asked
// its own user, or the history of a watched run replays a decided review)
// closes the review dialog instead of leaving a question nobody waits for.
func TestReviewDecidedElsewhereClosesTheDialog(t *testing.T) {
	m, svc := newTestModel(t, 120, 40, "dark", true)
	c := &clock{t: testNow}
	m.now = c.now
	r := startScripted(t, m, svc, c, true)
	if _, open := m.dialog.(*reviewDialog); !open {
		t.Fatal("the review dialog did not open")
	}
	feedRun(t, m, r, scriptFinish(r.id, 100)[0])
	if m.dialog != nil {
		t.Errorf("the dialog is still open after the review was decided: %T", m.dialog)
	}
	if r.Pending() != nil || len(r.decisions) != 0 {
		t.Errorf("the TUI decided too: %+v", r.decisions)
	}
}

// TestHeaderSaysARunAwaitsReview (issue 47): while the only run waits for
// the person's review, the header says so, not "1 running".
func TestHeaderSaysARunAwaitsReview(t *testing.T) {
	m, svc := newTestModel(t, 120, 40, "dark", true)
	c := &clock{t: testNow}
	m.now = c.now
	startScripted(t, m, svc, c, true)
	header, _, _ := strings.Cut(ansi.Strip(m.render()), "\n")
	if !strings.Contains(header, "1 awaiting review") || strings.Contains(header, "running") {
		t.Errorf("header while the run awaits review: %q", header)
	}
}

// Session-list loads run concurrently, one per change. One that finishes
// after a newer load (here: the list read before another process's run
// was created) is stale: it must not empty the list under the person's
// cursor, or the run just announced could not be opened.
func TestStaleSessionListLoadIsDropped(t *testing.T) {
	m, svc := newTestModel(t, 120, 40, "dark", true)
	toList(t, m)
	older := m.loadSessions()
	svc.sessions = append([]store.Session{{ID: "elsewhere", Title: "Run elsewhere", Status: store.StatusRunning, CreatedAt: testNow}}, svc.sessions...)
	newer := m.loadSessions()
	run(t, m, newer)
	svc.sessions = nil // what the older load would have read
	run(t, m, older)
	if sel := m.sessions.selected(); sel == nil || m.sessions.focus != focusList || len(m.sessions.rows) != len(fixtureSessions())+1 {
		t.Fatalf("a stale load replaced the list: %d rows, focus %v", len(m.sessions.rows), m.sessions.focus)
	}
}

// TestEscFromANewRunsReportKeepsItsSession (issue 47 #12): after Esc from
// the report of a run just started from the question line, the sessions
// cursor is on that run, not on the next older session.
func TestEscFromANewRunsReportKeepsItsSession(t *testing.T) {
	m, svc := newTestModel(t, 120, 40, "dark", false)
	c := &clock{t: testNow}
	m.now = c.now
	r := startScripted(t, m, svc, c, true)
	_, cmd := m.Update(runEventsMsg{id: r.id, events: scriptFinish(r.id, 100), closed: true})
	run(t, m, cmd)
	settle(m)
	if m.screen != screenReport {
		t.Fatalf("the finished run's report is not shown (screen %v)", m.screen)
	}
	svc.mu.Lock()
	svc.sessions = append([]store.Session{{ID: r.id, Title: "Perovskite stability", Status: store.StatusCompleted, CreatedAt: testNow}}, svc.sessions...)
	svc.mu.Unlock()
	press(t, m, "esc")
	settle(m)
	if sel := m.sessions.selected(); sel == nil || sel.s.ID != r.id || m.sessions.focus != focusList {
		t.Errorf("after esc the cursor is on %+v (focus %v), not the run just left (%s) in the list", sel, m.sessions.focus, r.id)
	}
}
