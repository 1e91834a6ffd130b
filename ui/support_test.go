package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/researchtui/researchtui/pipeline"
)

// supportReport is the fixture report with the verifier's support map:
// the first sentence supported by a passage of [1], the second only in
// part by one of [2].
func supportReport() pipeline.Report {
	rep := fixtureReport()
	rep.Support = []pipeline.CitationSupport{
		{Sentence: "Moisture degrades methylammonium lead iodide within hours.", N: []int{1}, Verdict: pipeline.VerdictSupported, Source: 1,
			Passage: "MAPbI3 films held at 80% relative humidity degraded within hours, turning yellow as PbI2 formed."},
		{Sentence: "Encapsulation and 2D/3D heterostructures extend lifetimes to over 1,000 hours.", N: []int{2}, Verdict: pipeline.VerdictPartly, Source: 2,
			Passage: "Unencapsulated 2D/3D devices kept 80% of their efficiency after 1,000 h in air."},
	}
	return rep
}

// A citation chosen with ]/[ shows the passage that supports its sentence,
// and a partly supported sentence's citation carries the ◦ mark.
func TestSelectedCitationShowsItsSupportingPassage(t *testing.T) {
	m, svc := newTestModel(t, 120, 40, "dark", true)
	svc.reports["s4"] = supportReport()
	openFixtureReport(t, m)
	screen := ansi.Strip(m.View().Content)
	if !strings.Contains(screen, "hours [2]"+partlyMark) {
		t.Errorf("the partly supported sentence's citation has no %s:\n%s", partlyMark, screen)
	}
	if strings.Contains(screen, "hours [1]"+partlyMark) {
		t.Error("a supported sentence is marked as partly supported")
	}
	press(t, m, "]")
	screen = ansi.Strip(m.View().Content)
	if !strings.Contains(screen, "supports this sentence") || !strings.Contains(screen, "turning yellow") {
		t.Errorf("the first citation does not show its supporting passage:\n%s", screen)
	}
	press(t, m, "]")
	screen = ansi.Strip(m.View().Content)
	if !strings.Contains(screen, "supports this sentence in part") || !strings.Contains(screen, "Unencapsulated 2D/3D devices kept") {
		t.Errorf("the second citation does not show its partly supporting passage:\n%s", screen)
	}
	// A number key selects the source, not a sentence: its own quote.
	press(t, m, "1")
	screen = ansi.Strip(m.View().Content)
	if strings.Contains(screen, "supports this sentence") || !strings.Contains(screen, "films degraded within 6 hours") {
		t.Errorf("a source chosen by number shows a sentence's passage:\n%s", screen)
	}
}
