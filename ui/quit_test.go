package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// TestQuitAsksWhileRunsAreLive: q with a run going asks first, naming the
// run and where it is; n keeps it going; y quits; ctrl+c twice quits at
// once; with nothing running q and ctrl+c quit straight away.
func TestQuitAsksWhileRunsAreLive(t *testing.T) {
	m, _, c, r := scriptedRun(t, 80, 24)

	press(t, m, "q")
	if _, ok := m.dialog.(*quitDialog); !ok || m.quitting {
		t.Fatalf("q with a live run: dialog %T, quitting %v", m.dialog, m.quitting)
	}
	out := ansi.Strip(m.render())
	for _, want := range []string{"Quit researchtui?", "1 run is still going", "Perovskite stability", "at review", "y quit", "ctrl+c quit now"} {
		if !strings.Contains(out, want) {
			t.Errorf("the question lacks %q:\n%s", want, out)
		}
	}
	// Keys typed in flow right after q are absorbed, not taken as an answer.
	press(t, m, "y")
	if m.quitting || m.dialog == nil {
		t.Fatal("y during the grace period answered the question")
	}
	c.advance(time.Second)
	press(t, m, "n")
	if m.dialog != nil || m.quitting || r.cancelled {
		t.Fatalf("n: dialog %T, quitting %v, cancelled %v; the run must go on", m.dialog, m.quitting, r.cancelled)
	}
	feedRun(t, m, r, scriptFinish(r.id, 100)[:2]...)
	if !m.runs[r.id].live() {
		t.Fatal("the run stopped")
	}

	// y after the grace quits.
	press(t, m, "q")
	c.advance(time.Second)
	press(t, m, "y")
	if !m.quitting {
		t.Fatal("y did not quit")
	}

	// ctrl+c twice quits at once, grace or not.
	m, svc := newTestModel(t, 80, 24, "dark", false)
	m.now = c.now
	startScripted(t, m, svc, c, false)
	press(t, m, "ctrl+c")
	if _, ok := m.dialog.(*quitDialog); !ok || m.quitting {
		t.Fatalf("one ctrl+c with a live run: %T, quitting %v", m.dialog, m.quitting)
	}
	press(t, m, "ctrl+c")
	if !m.quitting {
		t.Fatal("ctrl+c twice did not quit")
	}

	// Nothing running: no question.
	for _, k := range []string{"q", "ctrl+c"} {
		m, _ = newTestModel(t, 80, 24, "dark", false)
		if k == "q" {
			toList(t, m)
		}
		press(t, m, k)
		if !m.quitting || m.dialog != nil {
			t.Errorf("%s with nothing running: quitting %v, dialog %T", k, m.quitting, m.dialog)
		}
	}
}

// TestQuitQuestionKeepsTheReview: ctrl+c over the review dialog, then no:
// the review is back, still undecided.
func TestQuitQuestionKeepsTheReview(t *testing.T) {
	m, svc := newTestModel(t, 80, 24, "dark", false)
	c := &clock{t: testNow}
	m.now = c.now
	r := startScripted(t, m, svc, c, true)
	if _, ok := m.dialog.(*reviewDialog); !ok {
		t.Fatalf("no review dialog: %T", m.dialog)
	}
	press(t, m, "ctrl+c")
	out := ansi.Strip(m.render())
	if !strings.Contains(out, "waiting for your review") {
		t.Errorf("the question does not say the run waits for a review:\n%s", out)
	}
	c.advance(time.Second)
	press(t, m, "esc")
	if _, ok := m.dialog.(*reviewDialog); !ok || m.quitting {
		t.Fatalf("no: dialog %T, quitting %v; want the review back", m.dialog, m.quitting)
	}
	if len(r.decisions) != 0 {
		t.Errorf("the review was decided: %+v", r.decisions)
	}
}
