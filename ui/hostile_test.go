package ui

import (
	"regexp"
	"testing"
)

// evilText is what a hostile model or page writes: an OSC 52 clipboard
// write, a screen clear, an OSC 8 link, an 8-bit CSI, a BEL and bidi
// overrides.
const evilText = "\x1b]52;c;ZXZpbA==\x07\x1b[2J\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\\u009b31m\u202egnp.exe\u202c\u2066x\u2069\a"

// sgr is the styling the TUI itself draws; every other escape is hostile.
var sgr = regexp.MustCompile(`\x1b\[[0-9;:]*m`)

// terminalHostile finds, outside the TUI's own styling, anything a
// terminal would act on or that reorders text.
func terminalHostile(view string) string {
	s := sgr.ReplaceAllString(view, "")
	for i, r := range s {
		if (r < 0x20 && r != '\n') || r == 0x7f || (r >= 0x80 && r <= 0x9f) ||
			(r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c {
			return s[max(0, i-30):min(len(s), i+30)]
		}
	}
	return ""
}

// The TUI's views carry hostile text without its controls: the session
// list, the report with its sources pane and a chosen citation's passage.
func TestHostileTextReachesNoView(t *testing.T) {
	m, svc := newTestModel(t, 120, 40, "dark", false)
	rep := supportReport()
	rep.Title += evilText
	rep.Markdown = "# Report" + evilText + "\n\nMoisture degrades methylammonium lead iodide within hours [1]." + evilText + "\n"
	rep.Sources[0].Title += evilText
	rep.Sources[0].Authors = []string{"Eve" + evilText}
	rep.Sources[0].Quote += evilText
	rep.Support[0].Passage += evilText
	svc.reports["s4"] = rep
	sessions := fixtureSessions()
	for i := range sessions {
		sessions[i].Title += evilText
		sessions[i].Question += evilText
		sessions[i].Error = "failed" + evilText
	}
	svc.sessions = sessions
	m.Update(listLoaded(m, sessions...))
	if bad := terminalHostile(m.View().Content); bad != "" {
		t.Errorf("the session list carries a control: %q", bad)
	}
	openFixtureReport(t, m)
	for _, keys := range [][]string{nil, {"]"}, {"tab"}, {"tab", "enter"}} {
		press(t, m, keys...)
		if bad := terminalHostile(m.View().Content); bad != "" {
			t.Errorf("the report after %v carries a control: %q", keys, bad)
		}
	}
	if v := m.View().Content; !regexp.MustCompile(`gnp\.exe`).MatchString(sgr.ReplaceAllString(v, "")) {
		t.Error("the hostile text's visible part is not on the screen: the test proves nothing")
	}
}
