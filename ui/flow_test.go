package ui

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/store"
)

const flowQuestion = "How is software testing studied, and how are language models given tools for chemistry?"

// waitText waits until every want has been shown: in the program's output
// (ANSI stripped, so colours between words don't matter) or on the screen
// that output draws (a text the renderer completed by rewriting part of an
// older one; see screen_test.go).
func waitText(t *testing.T, tm *teatest.TestModel, want ...string) {
	t.Helper()
	var seen bytes.Buffer
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		seen.Write(b)
		s, screen := ansi.Strip(seen.String()), onScreen(tm, b)
		for _, w := range want {
			if !strings.Contains(s, w) && !strings.Contains(screen, w) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(30*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
}

func flowModel(ctx context.Context, t *testing.T, env *pipelinetest.Env, withBackend bool) *rootModel {
	cfg := Config{Store: env.Store, Defaults: env.Options(""), DataDir: t.TempDir(), Theme: "dark"}
	svc := liveServices{st: env.Store}
	if withBackend {
		cfg.Engine, svc.eng = env.Engine, env.Engine
	} else {
		cfg.BackendErr = errBackend
	}
	dark := true
	return newModel(ctx, cfg, svc, options{noColor: true, darkBG: &dark})
}

// afterGrace lets the review dialog's grace period pass before a decision.
func afterGrace() { time.Sleep(reviewGrace + 150*time.Millisecond) }

// TestFullFlow: type a question, watch it run against the fake Ollama and
// fake sources, accept the review by keypress, read the revised report
// (asserted: the writer's revision is shown and every stage completed);
// quit; start again with no backend; the session is completed and its
// report opens.
func TestFullFlow(t *testing.T) {
	env := pipelinetest.NewEnv(t, &pipelinetest.Script{RevisionRounds: 1}, t.TempDir())
	ctx := t.Context()

	m := flowModel(ctx, t, env, true)
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))
	tm.Type(flowQuestion) // on the question line, which has the keys at start
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	waitText(t, tm, "The reviewer asks for revisions")
	afterGrace()
	tm.Type("a")
	waitText(t, tm, "citations", "This revised report")
	tm.Type("q")
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*rootModel)
	shutdownRuns(fm.liveHandles(), 5*time.Second)
	if fm.screen != screenReport || !fm.report.loaded || fm.report.rep.Markdown == "" {
		t.Fatalf("the revised report is shown: screen %v loaded %v err %q", fm.screen, fm.report.loaded, fm.report.err)
	}
	id := fm.report.id
	sess, err := env.Store.Session(id)
	if err != nil || sess.Status != store.StatusCompleted {
		t.Fatalf("session %s: %q %v", id, sess.Status, err)
	}
	// The report shown is the revision the accepted review asked for, not
	// the first draft.
	if !strings.Contains(fm.report.rep.Markdown, "This revised report") {
		t.Fatalf("the report shown is not the revised one:\n%.600s", fm.report.rep.Markdown)
	}
	// Every cited source says how it was read (the pipeline knows it from
	// its read checkpoints), and the report screen shows it.
	for _, src := range fm.report.rep.Sources {
		if src.Read != report.ReadFullText && src.Read != report.ReadAbstract {
			t.Errorf("source [%d] %q: read %q, want full text or abstract", src.N, src.Title, src.Read)
		}
	}
	if len(fm.report.rep.Sources) > 0 {
		if pane := ansi.Strip(fm.sourcesPane(60, 200)); !strings.Contains(pane, "full text") && !strings.Contains(pane, "abstract only") {
			t.Errorf("the sources pane does not say how sources were read:\n%s", pane)
		}
	}
	// The run screen saw every stage through.
	rs := fm.runs[id]
	if rs == nil || rs.status != "completed" || !rs.closed {
		t.Fatalf("run %s: %+v", id, rs)
	}
	for _, sr := range rs.stages {
		if sr.phase != phaseDone {
			t.Errorf("stage %s ended in phase %v, want done", sr.stage, sr.phase)
		}
	}
	revised := fm.report.rep.Markdown

	// Restart with the backend gone.
	env.Ollama.Close()
	m2 := flowModel(ctx, t, env, false)
	tm2 := teatest.NewTestModel(t, m2, teatest.WithInitialTermSize(120, 40))
	waitText(t, tm2, "new research needs the model backend", "completed")
	tm2.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	waitText(t, tm2, "citations")
	tm2.Type("q")
	fm2 := tm2.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*rootModel)
	if fm2.report.id != id || fm2.report.rep.Markdown != revised {
		t.Fatalf("offline the same report opens: id %q (want %q)", fm2.report.id, id)
	}
}

// TestQuitDuringReview: quitting with the review dialog open leaves the
// session awaiting review; after a restart it is listed so, decided from
// the list, and the run finishes.
func TestQuitDuringReview(t *testing.T) {
	env := pipelinetest.NewEnv(t, &pipelinetest.Script{RevisionRounds: 1}, t.TempDir())
	ctx := t.Context()

	m := flowModel(ctx, t, env, true)
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))
	tm.Type(flowQuestion)
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	waitText(t, tm, "The reviewer asks for revisions")
	tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}) // a run is live: asks
	waitText(t, tm, "Quit researchtui?", "still going")
	tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}) // twice: quits at once
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*rootModel)
	shutdownRuns(fm.liveHandles(), 10*time.Second) // what Run does on the way out
	id := fm.active
	sess, err := env.Store.Session(id)
	if err != nil || sess.Status != store.StatusAwaitingReview {
		t.Fatalf("after quitting at the review: %q %v", sess.Status, err)
	}

	m2 := flowModel(ctx, t, env, true)
	tm2 := teatest.NewTestModel(t, m2, teatest.WithInitialTermSize(120, 40))
	waitText(t, tm2, "awaiting review")
	tm2.Send(tea.KeyPressMsg{Code: tea.KeyTab})   // from the question line to the list
	tm2.Send(tea.KeyPressMsg{Code: tea.KeyEnter}) // decide it from the list
	waitText(t, tm2, "The reviewer asks for revisions")
	afterGrace()
	tm2.Type("a")
	waitText(t, tm2, "citations")
	tm2.Type("q")
	fm2 := tm2.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*rootModel)
	shutdownRuns(fm2.liveHandles(), 5*time.Second)
	sess, err = env.Store.Session(id)
	if err != nil || sess.Status != store.StatusCompleted {
		t.Fatalf("after deciding from the list: %q %v", sess.Status, err)
	}
}

// The backend went away after the TUI started: typing a question does not
// make a failed session; the screen says what is wrong and the question
// stays on the line (issue 36 #7, as headless refuses with exit 3).
func TestStartChecksTheBackendFirst(t *testing.T) {
	env := pipelinetest.NewEnv(t, &pipelinetest.Script{}, t.TempDir())
	cfg := Config{Store: env.Store, Engine: env.Engine, Defaults: env.Options(""), DataDir: t.TempDir(), Theme: "dark"}
	svc := liveServices{st: env.Store, eng: env.Engine, check: func(context.Context, ...string) error {
		return errors.New("cannot reach Ollama at http://127.0.0.1:11434: start it with `ollama serve`")
	}}
	dark := true
	m := newModel(t.Context(), cfg, svc, options{noColor: true, darkBG: &dark})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	typeText(t, m, flowQuestion)
	press(t, m, "enter")
	if sessions, _ := env.Store.ListSessions(); len(sessions) != 0 {
		t.Errorf("a run was recorded against a backend that is down: %+v", sessions[0])
	}
	out := m.render()
	if !strings.Contains(out, "ollama serve") || m.screen == screenRun {
		t.Errorf("the screen does not say the backend is down (screen %v):\n%s", m.screen, out)
	}
	if strings.TrimSpace(m.sessions.line.Value()) != flowQuestion {
		t.Errorf("the question was lost: %q", m.sessions.line.Value())
	}
}
