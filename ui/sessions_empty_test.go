package ui

import (
	"strings"
	"testing"
)

// With no sessions yet, esc on the empty question line reaches the list's
// keys: t chooses another theme before the first research (a person on a
// light terminal need not run one first), and enter or typing goes back to
// the line.
func TestTheThemeCanBeChosenBeforeAnySession(t *testing.T) {
	m, svc := newTestModel(t, 80, 24, "dark", false)
	m.Update(listLoaded(m))
	if m.sessions.focus != focusLine {
		t.Fatal("a fresh screen starts on the question line")
	}
	before := m.themeName
	press(t, m, "esc", "t")
	if m.themeName == before || len(svc.saved) != 1 {
		t.Errorf("theme %q (was %q), saved %+v: t after esc should choose another", m.themeName, before, svc.saved)
	}
	if strings.Contains(m.sessions.line.Value(), "t") {
		t.Errorf("t was typed into the line: %q", m.sessions.line.Value())
	}
	press(t, m, "a")
	if m.sessions.focus != focusLine {
		t.Error("a does not go back to the question line from the empty list")
	}
}
