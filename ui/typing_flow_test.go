package ui

import (
	"context"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/runopts"
)

// typingProgram runs the whole program (teatest: a real tea.Program with
// its input parser and renderer) over fake services with six sessions.
func typingProgram(t *testing.T) (*teatest.TestModel, *fakeServices) {
	t.Helper()
	svc := &fakeServices{sessions: fixtureSessions(), reports: map[string]pipeline.Report{"s4": fixtureReport()}}
	dark := true
	m := newModel(context.Background(), Config{Theme: "dark", DataDir: t.TempDir(),
		Defaults: runopts.Options{Model: "qwen3:8b", EmbedModel: "nomic-embed-text", Depth: "standard"}},
		svc, options{noColor: true, darkBG: &dark})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 24))
	// The list has loaded once its last row shows.
	waitText(t, tm, "Graph neural networks for molecule")
	return tm, svc
}

// TestTypedQuestionsStartingWithBoundKeys: a person types a question at
// start-up without thinking about keys; whatever its first letter (each
// key bound somewhere in the program), it arrives verbatim and starts. The
// run is then live, so quitting asks, and ctrl+c twice quits at once.
func TestTypedQuestionsStartingWithBoundKeys(t *testing.T) {
	questions := map[string]string{
		"q": "quantum dots in tandem cells",
		"n": "notes on CRISPR base editing",
		"d": "does intermittent fasting extend lifespan?",
		"j": "jet lag and melatonin dosing",
		"k": "ketamine for treatment-resistant depression",
		"g": "generative models for protein design",
		"G": "GLP-1 agonists and addiction",
		"R": "RNA vaccines beyond COVID",
		"/": "/r/askscience claims about sleep debt",
		"?": "? what limits fusion reactor uptime",
		"t": "the evidence for microplastics harm",
		"p": "perovskite stability under humidity",
	}
	for k, q := range questions {
		t.Run(k, func(t *testing.T) {
			tm, svc := typingProgram(t)
			tm.Type(q)
			tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
			waitText(t, tm, "cancel run") // the run screen's footer
			tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
			waitText(t, tm, "Quit researchtui?")
			tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
			fm := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*rootModel)
			svc.mu.Lock()
			defer svc.mu.Unlock()
			if len(svc.started) != 1 || svc.started[0].Question != q {
				t.Fatalf("started %+v, want %q", svc.started, q)
			}
			if !fm.quitting || len(svc.deleted) != 0 || len(svc.resumed) != 0 {
				t.Errorf("a key acted as a command: deleted %v, resumed %v", svc.deleted, svc.resumed)
			}
		})
	}
}

// TestPastedQuestion: a multi-line question pasted into the terminal
// (bracketed paste) is one question, started only by enter.
func TestPastedQuestion(t *testing.T) {
	tm, svc := typingProgram(t)
	tm.Send(tea.PasteMsg{Content: "Which perovskite compositions\r\nsurvive 85 °C / 85% RH\rfor 1,000 h?"})
	waitText(t, tm, "for 1,000 h?")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	waitText(t, tm, "cancel run") // the run screen's footer
	tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second))
	svc.mu.Lock()
	defer svc.mu.Unlock()
	want := "Which perovskite compositions survive 85 °C / 85% RH for 1,000 h?"
	if len(svc.started) != 1 || svc.started[0].Question != want {
		t.Fatalf("started %+v, want %q", svc.started, want)
	}
}
