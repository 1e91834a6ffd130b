package ui

import (
	"regexp"
	"testing"

	"github.com/researchtui/researchtui/textkit/texttest"
)

// The TUI's views carry hostile text without its controls: the session
// list, the report with its sources pane and a chosen citation's passage.
func TestHostileTextReachesNoView(t *testing.T) {
	m, svc := newTestModel(t, 120, 40, "dark", false)
	rep := supportReport()
	rep.Title += texttest.Evil
	rep.Markdown = "# Report" + texttest.Evil + "\n\nMoisture degrades methylammonium lead iodide within hours [1]." + texttest.Evil + "\n"
	rep.Sources[0].Title += texttest.Evil
	rep.Sources[0].Authors = []string{"Eve" + texttest.Evil}
	rep.Sources[0].Quote += texttest.Evil
	rep.Support[0].Passage += texttest.Evil
	svc.reports["s4"] = rep
	sessions := fixtureSessions()
	for i := range sessions {
		sessions[i].Title += texttest.Evil
		sessions[i].Question += texttest.Evil
		sessions[i].Error = "failed" + texttest.Evil
	}
	svc.sessions = sessions
	m.Update(listLoaded(m, sessions...))
	if bad := texttest.HostileView(m.View().Content); bad != "" {
		t.Errorf("the session list carries a control: %q", bad)
	}
	openFixtureReport(t, m)
	for _, keys := range [][]string{nil, {"]"}, {"tab"}, {"tab", "enter"}} {
		press(t, m, keys...)
		if bad := texttest.HostileView(m.View().Content); bad != "" {
			t.Errorf("the report after %v carries a control: %q", keys, bad)
		}
	}
	if v := m.View().Content; !regexp.MustCompile(`gnp\.exe`).MatchString(texttest.SGR.ReplaceAllString(v, "")) {
		t.Error("the hostile text's visible part is not on the screen: the test proves nothing")
	}
}
