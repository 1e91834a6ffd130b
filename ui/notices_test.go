package ui

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/researchtui/researchtui/themes"
)

// A retracted source says so in the error colour wherever it is listed (the
// sources pane and the strip under the report); a corrected one says
// "corrected" in the warning colour; the rest say neither.
func TestSourcesMarkRetractedAndCorrected(t *testing.T) {
	st := themes.Build(themes.Resolve("dark", true), false)
	rep := noticesReport(t)
	retracted, plain, corrected := rep.Sources[0], rep.Sources[1], rep.Sources[2]

	pane := strings.Join(sourceLines(st, retracted, 60, false, false, ""), "\n")
	if !strings.Contains(pane, st.Error.Render("retracted")) {
		t.Errorf("no retracted marker in the error colour:\n%s", ansi.Strip(pane))
	}
	if strings.Contains(ansi.Strip(pane), "nenergy.2023.99") {
		t.Error("the notice DOI belongs in the details view, not the pane")
	}
	pane = strings.Join(sourceLines(st, corrected, 60, false, false, ""), "\n")
	if !strings.Contains(pane, st.Warning.Render("corrected")) || strings.Contains(pane, "retracted") {
		t.Errorf("corrected source:\n%s", ansi.Strip(pane))
	}
	pane = ansi.Strip(strings.Join(sourceLines(st, plain, 60, false, false, ""), "\n"))
	if strings.Contains(pane, "retracted") || strings.Contains(pane, "corrected") {
		t.Errorf("plain source marked:\n%s", pane)
	}

	// the details view names each notice by its DOI
	detail := ansi.Strip(strings.Join(sourceLines(st, corrected, 80, true, true, ""), "\n"))
	if !strings.Contains(detail, "correction notice doi:10.1021/jacs.0c00099 · 2021-02-01 · publisher") {
		t.Errorf("details:\n%s", detail)
	}
	detail = ansi.Strip(strings.Join(sourceLines(st, retracted, 100, true, true, ""), "\n"))
	if !strings.Contains(detail, "retraction notice doi:10.1038/nenergy.2023.99") {
		t.Errorf("details:\n%s", detail)
	}

	// the strip under the report, when a citation of [1] is selected
	m, _ := newTestModel(t, 80, 24, "dark", false)
	m.report.rep = rep
	m.report.srcCursor = 0
	if s := m.sourceStrip(80); !strings.Contains(ansi.Strip(s), "retracted") {
		t.Errorf("strip:\n%s", ansi.Strip(s))
	}
}

// OpenAlex flags a retraction without naming the notice; the details view
// still says it.
func TestRetractedWithoutNotice(t *testing.T) {
	st := themes.Build(themes.Resolve("dark", true), false)
	s := fixtureReport().Sources[1]
	if err := json.Unmarshal([]byte(`{"retracted":true}`), &s); err != nil {
		t.Fatal(err)
	}
	detail := ansi.Strip(strings.Join(sourceLines(st, s, 80, true, true, ""), "\n"))
	if !strings.Contains(detail, "retracted (no notice named)") {
		t.Errorf("details:\n%s", detail)
	}
}

// The marks travel in the report's JSON (stored reports, `sessions show
// --json`) and are absent from it for ordinary sources.
func TestCitedSourceJSONCarriesNotices(t *testing.T) {
	rep := noticesReport(t)
	b, _ := json.Marshal(rep.Sources[0])
	if !strings.Contains(string(b), `"retracted":true`) || !strings.Contains(string(b), `"updates":[{"type":"retraction","doi":"10.1038/nenergy.2023.99"`) {
		t.Errorf("json %s", b)
	}
	b, _ = json.Marshal(rep.Sources[1])
	if strings.Contains(string(b), "retracted") || strings.Contains(string(b), "updates") {
		t.Errorf("json of a plain source %s", b)
	}
}

// News fades from the status line ("started in another researchtui"
// stayed for minutes after that run had ended); an error stays until
// something replaces it.
func TestNewsFadesErrorsStay(t *testing.T) {
	m, _ := newTestModel(t, 120, 40, "dark", true)
	c := &clock{t: testNow}
	m.now = c.now
	m.setNotice("exported to /tmp/x.html", false)
	if !strings.Contains(m.render(), "exported to /tmp/x.html") {
		t.Fatal("the news is not shown")
	}
	c.advance(noticeLife + time.Second)
	if strings.Contains(m.render(), "exported to") {
		t.Error("the news is still shown after its time")
	}
	m.setNotice("delete failed: disk full", true)
	c.advance(10 * noticeLife)
	if !strings.Contains(m.render(), "delete failed: disk full") {
		t.Error("an error faded")
	}
}
