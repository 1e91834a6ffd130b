package ui

import (
	"strings"
	"testing"

	"github.com/researchtui/researchtui/pipeline"
)

// W on the run screen lists every warning whole, numbered, where the
// screen has room only for the newest, cut; W or esc closes the list.
func TestWarningsAreListedWhole(t *testing.T) {
	m, svc := newTestModel(t, 80, 24, "dark", true)
	c := &clock{t: testNow}
	m.now = c.now
	r := startScripted(t, m, svc, c, false)
	long := "q2: the model's screen judged every one of 22 candidates on topic; reading was chosen by word overlap, which the Method section says"
	feedRun(t, m, r, pipeline.Event{Type: pipeline.Warning, SessionID: r.id, Seq: 1000, Message: long, Time: testNow})
	if v := m.View().Content; !strings.Contains(v, "2 warnings (W)") || strings.Contains(v, "which the Method section says") {
		t.Fatalf("the run screen's warning line:\n%s", v)
	}
	press(t, m, "W")
	v := m.View().Content
	if _, ok := m.dialog.(*warningsDialog); !ok || !strings.Contains(v, "1. semanticscholar: 429") || !strings.Contains(v, "which the Method section") {
		t.Fatalf("W shows:\n%s", v)
	}
	press(t, m, "W")
	if m.dialog != nil {
		t.Error("W does not close the list")
	}
}
