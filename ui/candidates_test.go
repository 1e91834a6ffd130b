package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/researchtui/researchtui/pipeline"
)

// TestCandidatesDialogShowsWhyEachWasRead: C on a report opens every
// candidate the run ranked with its scores, the screen's verdict and the
// reason it was or was not read, loaded in a Cmd, never in Update.
func TestCandidatesDialogShowsWhyEachWasRead(t *testing.T) {
	m, svc := newTestModel(t, 80, 24, "dark", false)
	wide, wideSvc := newTestModel(t, 160, 40, "dark", false)
	var cands []pipeline.Candidate
	cands = append(cands,
		pipeline.Candidate{Key: "a", SubQ: "q1", Round: 1, Title: "Large Language Models Pass the Turing Test", Score: 0.72, Semantic: 0.26, Lexical: 1, Coverage: 0.71, Phrase: 0.57, Relevance: 0.49, Floor: 0.30, Screen: "on topic", Read: true, Reason: "read: among the most relevant"},
		pipeline.Candidate{Key: "b", SubQ: "q1", Round: 1, Title: "Using DeepSpeed and Megatron to Train Megatron-Turing NLG 530B", Score: 0.56, Relevance: 0.33, Floor: 0.30, Screen: "off topic: language model training", Reason: "not read: the relevance screen judged it off topic (language model training)"},
		pipeline.Candidate{Key: "c", SubQ: "q1", Round: 1, Title: "ChatGPT broke the Turing test", Reason: "not read: no text to read"},
	)
	for i := 0; i < 12; i++ {
		cands = append(cands, pipeline.Candidate{Key: string(rune('d' + i)), SubQ: "q2", Round: 2, Title: "Do Firms Want to Borrow More?", Relevance: 0.05, Floor: 0.3, Reason: "not read: below the relevance floor (0.05 < 0.30)"})
	}
	svc.candidates = map[string][]pipeline.Candidate{"s4": cands}
	wideSvc.candidates = svc.candidates
	openFixtureReport(t, wide)
	press(t, wide, "C")
	if out := ansi.Strip(wide.render()); !strings.Contains(out, "screen: on topic") || !strings.Contains(out, "phr 0.57") {
		t.Errorf("a wide terminal does not show the screen's verdict and every score:\n%s", out)
	}
	openFixtureReport(t, m)
	_, cmd := m.Update(kp("C"))
	if m.dialog != nil || cmd == nil {
		t.Fatalf("C changed the screen in Update (%T) or asked for nothing", m.dialog)
	}
	run(t, m, cmd)
	d, ok := m.dialog.(*candidatesDialog)
	if !ok {
		t.Fatalf("the candidates did not open: %T", m.dialog)
	}
	out := ansi.Strip(m.render())
	checkFrame(t, out, 80, 24)
	// At 80 columns the scores have their own line, whole (trial: "score…").
	for _, want := range []string{"read 1 of 15 found", "✓ q1 r1  Large Language Models", "among the most relevant · screen: on topic · rel 0.49", "judged it off topic", "no text to read",
		"score 0.72 sem 0.26 lex 1.00 cov 0.71 phr 0.57"} {
		if !strings.Contains(out, want) {
			t.Errorf("the candidates lack %q:\n%s", want, out)
		}
	}
	press(t, m, "G")
	if end := ansi.Strip(m.render()); d.offset == 0 || !strings.Contains(end, "below the relevance floor") {
		t.Errorf("G did not scroll to the last candidates (offset %d):\n%s", d.offset, end)
	}
	press(t, m, "esc")
	if m.dialog != nil {
		t.Errorf("esc left %T open", m.dialog)
	}
}

// The candidates view counts works as the sources pane does: a work found
// by two sub-questions is one work in two rows (issue 36 #10: "read 8 of
// 84" beside "read 8 of 42 found").
func TestCandidatesCountWorks(t *testing.T) {
	d := newCandidatesDialog("t", []pipeline.Candidate{
		{Key: "a", SubQ: "q1", Read: true}, {Key: "a", SubQ: "q2", Read: true}, {Key: "b", SubQ: "q1"}, {Key: "b", SubQ: "q2"},
	})
	m, _ := newTestModel(t, 120, 30, "dark", true)
	if out := ansi.Strip(d.view(m.st, 120, 30)); !strings.Contains(out, "read 1 of 2 found · 4 rows") {
		t.Errorf("candidates view:\n%s", out)
	}
}
