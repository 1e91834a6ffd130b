package texttest

import "testing"

// Each kind of control in Evil is found, alone; text and a TUI's own
// styling are not.
func TestHostileFindsEachControl(t *testing.T) {
	for _, bad := range []string{"\x1b]52;c;x\x07", "\a", "\x7f", "\u009b31m", "\x9b31m", "\u202e", "\u2066", "\u200f", "\u061c"} {
		if Hostile("a "+bad+" b") == "" || HostileView("a "+bad+" b") == "" {
			t.Errorf("%q not found", bad)
		}
	}
	if got := Hostile("plain\ttext\r\nnext line — ünïcode"); got != "" {
		t.Errorf("plain text flagged: %q", got)
	}
	if got := HostileView("\x1b[1;38;2;10;20;30mbold\x1b[0m\nnext"); got != "" {
		t.Errorf("the view's own styling flagged: %q", got)
	}
	if HostileView("a\rb") == "" || HostileView("a\tb") == "" {
		t.Error("a carriage return or tab in a drawn view is not flagged")
	}
	if Hostile(Evil) == "" {
		t.Error("Evil is not hostile")
	}
}
