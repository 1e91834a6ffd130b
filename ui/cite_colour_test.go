package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/researchtui/researchtui/textkit/texttest"
)

// A selected citation is marked on its line without the line losing the
// report's colours: the text is the same, and every style the rendering
// gave the line is still there, in order, around the mark.
func TestSelectedCitationKeepsTheLinesColours(t *testing.T) {
	m, _ := newTestModel(t, 120, 40, "dark", false)
	openFixtureReport(t, m)
	press(t, m, "]")
	if !m.report.citeSel {
		t.Fatal("] selected no citation")
	}
	before := append([]string(nil), m.report.vp.visible()...)
	after := m.markCitations(append([]string(nil), before...))
	marked := 0
	for i := range before {
		if after[i] == before[i] {
			continue
		}
		marked++
		if ansi.Strip(after[i]) != ansi.Strip(before[i]) {
			t.Errorf("marking changed the text:\n%q\n%q", ansi.Strip(before[i]), ansi.Strip(after[i]))
		}
		styles := texttest.SGR.FindAllString(before[i], -1)
		if len(styles) == 0 {
			t.Fatalf("the rendering has no colours to keep: %q", before[i])
		}
		rest := after[i]
		for _, s := range styles {
			j := strings.Index(rest, s)
			if j < 0 {
				t.Errorf("the marked line lost the style %q of the rendering:\n%q\n%q", s, before[i], after[i])
				break
			}
			rest = rest[j+len(s):]
		}
	}
	if marked == 0 {
		t.Fatal("no line was marked")
	}
}
