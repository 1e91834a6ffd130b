package ui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/report"
)

// A review's PRISMA diagram fits the report pane at every width the
// screen uses, beside the sources pane too (110–139 columns leave the
// report 68–87): no box line wraps, and every count is still on screen.
func TestFlowDiagramFitsTheReportPane(t *testing.T) {
	f := &report.Flow{
		Databases:  []report.RouteCount{{Route: "arxiv", Round: 1, Records: 20}, {Route: "openalex", Round: 1, Records: 25}, {Route: "openalex", Round: 2, Records: 30}},
		Other:      []report.RouteCount{{Route: "citation chasing", Round: 2, Records: 15}},
		Identified: 90, Duplicates: 45, Screened: 45, Excluded: 30,
		ExcludedWhy: []report.FlowReason{{Reason: "ranked below the reading cut", Count: 20}, {Reason: "off-topic (the screen's verdict)", Count: 10}},
		Sought:      15, NotRetrieved: 2, Assessed: 13, AssessedFullText: 9, AssessedAbstract: 4, Reports: 5,
		ReportsWhy: []report.FlowReason{{Reason: "analysed, not cited by the report", Count: 5}},
		Included:   8,
	}
	rep := pipeline.Report{Flow: f, Markdown: "# A review\n\nSome text.\n\n" + f.FlowSection("PRISMA 2020 flow", "") + "\n## References\n"}
	m, _ := newTestModel(t, 120, 40, "dark", true)
	for _, w := range []int{40, 68, 74, 85, 118} {
		out, err := m.md.render(renderKey{id: "flow", width: w, theme: m.themeKey()}, displayMarkdown(rep, w), m.st.Markdown)
		if err != nil {
			t.Fatal(err)
		}
		plain := ansi.Strip(out)
		// every line of the diagram is one line on screen: none wrapped
		drawn, want := boxLines(plain), boxLines(f.DiagramFor(w-flowIndent))
		if drawn != want {
			t.Errorf("width %d: the diagram takes %d lines on screen, drawn in %d:\n%s", w, drawn, want, plain)
		}
		for _, count := range []string{"(n = 90)", "(n = 45)", "(n = 30)", "(n = 2)", "(n = 9)", "(n = 8)"} {
			if !strings.Contains(plain, count) {
				t.Errorf("width %d: %s is missing from the diagram", w, count)
			}
		}
		if strings.Count(plain, "┌") < 9 {
			t.Errorf("width %d: %d boxes, want the diagram's 9 at least", w, strings.Count(plain, "┌"))
		}
	}
}

// boxLines counts the lines that draw part of a box.
func boxLines(s string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		if strings.ContainsAny(l, "┌│└") {
			n++
		}
	}
	return n
}

// A stored flow with terminal escapes in its names draws none of them (the
// report is cleaned at load, its flow too).
func TestFlowDiagramIsCleaned(t *testing.T) {
	f := &report.Flow{Databases: []report.RouteCount{{Route: "arxiv\x1b]52;c;ZXZpbA==\a\x1b[2J", Round: 1, Records: 3}}, Identified: 3, Screened: 3}
	rep := pipeline.Report{Flow: f, Markdown: f.FlowSection("PRISMA 2020 flow", "")}
	if md := fitFlowDiagram(sanitizeReport(rep), 60); strings.ContainsAny(md, "\x1b\a") || boxLines(md) != boxLines(f.DiagramFor(54)) {
		t.Errorf("escapes reach the screen: %q", md)
	}
}

// A report's tables never show a wrong number: a table wider than the pane
// stays a table when glamour can wrap its cells with every word whole in
// not many more lines than a list (the PRISMA table at 80 columns, the
// review's studies table from 100), and is shown as a list whose counts
// are whole otherwise (the studies table at 80, its finding six words a
// line); a table that fits stays a table.
func TestReportTablesNeverCutNumbers(t *testing.T) {
	f := &report.Flow{
		Databases:  []report.RouteCount{{Route: "arxiv", Round: 1, Records: 20}, {Route: "semanticscholar", Round: 1, Records: 84}},
		Identified: 104, Duplicates: 42, Screened: 62, Excluded: 54,
		ExcludedWhy: []report.FlowReason{{Reason: "not read: more relevant sources filled the reading slots", Count: 54}},
		Sought:      8, Assessed: 8, AssessedAbstract: 8, Included: 8,
	}
	finding := "GPT-4 was judged to be a human 54% of the time in a randomised, controlled, preregistered Turing test with 500 participants."
	studies := "| Study | Kind | Main finding | Answers |\n|---|---|---|---|\n" +
		"| Jones et al. \\(2024\\) [1] | article, abstract | " + finding + " | q1, q2 |\n"
	small := "| a | b |\n|---|---|\n| x | 1 |\n"
	rep := pipeline.Report{Flow: f, Markdown: "# A review\n\n" + f.FlowSection("PRISMA 2020 flow", "") + "\n## Included studies\n\n" + studies + "\n## Small\n\n" + small + "\n## References\n"}
	m, _ := newTestModel(t, 80, 24, "dark", true)
	for _, w := range []int{36, 50, 76, 80, 100, 120} {
		md := displayMarkdown(rep, w)
		out, err := m.md.render(renderKey{id: "tables", width: w, theme: m.themeKey()}, md, m.st.Markdown)
		if err != nil {
			t.Fatal(err)
		}
		plain := ansi.Strip(out)
		for _, line := range strings.Split(plain, "\n") {
			if ansi.StringWidth(line) > w {
				t.Errorf("width %d: a line %d columns wide: %q", w, ansi.StringWidth(line), line)
			}
		}
		flat := strings.Join(strings.Fields(plain), " ")
		// Each row's label with its whole count: as a list, "label (n =
		// count)"; as a table, the count ends the line the label starts on
		// (the diagram's boxes hold the counts too, so the label must lead
		// to the number).
		for label, count := range map[string]string{"Duplicates removed": "42", "Records identified from semanticscholar (round 1)": "84",
			"Records identified": "104", "Records excluded: not read: more relevant sources filled the reading slots": "54", "Studies included (cited)": "8"} {
			asList := regexp.MustCompile(regexp.QuoteMeta(label) + `\s*\(n = ` + count + `\)`)
			start := strings.Join(strings.Fields(label)[:2], " ")
			asRow := regexp.MustCompile(`(?m)` + regexp.QuoteMeta(start) + `.*[│|]\s*` + count + `\s*$`)
			if !asList.MatchString(flat) && !asRow.MatchString(plain) {
				t.Errorf("width %d: %q is not shown with its whole count %s:\n%s", w, label, count, plain)
			}
		}
		for _, word := range append(wrapWords(finding), "Jones", "(2024)", "[1]") { // glamour may wrap after a hyphen
			if !strings.Contains(plain, word) {
				t.Errorf("width %d: the studies row lost %q:\n%s", w, word, plain)
			}
		}
		if !strings.Contains(md, "| x | 1 |") {
			t.Errorf("width %d: a table that fits was rewritten", w)
		}
		// As a list, every row names its stage, not only a group's first
		// (trial finding: "- Duplicates removed (n = 42)" under no stage).
		if strings.Contains(md, "\n- Duplicates removed (n = 42)") {
			t.Errorf("width %d: a listed row lost its stage:\n%s", w, md)
		}
		if table := strings.Contains(md, "| Jones et al."); table != (w >= 100) {
			t.Errorf("width %d: the studies table shown as a table: %v", w, table)
		}
		if w >= 76 && !strings.Contains(md, "| Duplicates removed | 42 |") {
			t.Errorf("width %d: the PRISMA table, whose cells wrap whole, is not a table:\n%s", w, md)
		}
	}
	// Too narrow for its words, the PRISMA table is a list, and every row
	// names its stage, not only a group's first (trial finding: "-
	// Duplicates removed (n = 42)" under no stage).
	if md := fitTables(f.FlowSection("PRISMA 2020 flow", ""), 24); !strings.Contains(md, "- Identification — Duplicates removed (n = 42)") {
		t.Errorf("at 24 columns the PRISMA table is not a list naming each row's stage:\n%s", md)
	}
}

// A session's report shown again after a follow-up (or another version)
// is rendered from its new text, never served from the old text's
// rendering of the same session at the same width and theme (issue 36
// item 1).
func TestReportRenderFollowsItsText(t *testing.T) {
	m, _ := newTestModel(t, 120, 40, "dark", true)
	m.report = newReportModel("s1", "A report")
	m.report.rep = pipeline.Report{Markdown: "# A report\n\nThe first version."}
	m.report.loaded = true
	cmd := m.layoutReport(120, 40)
	if cmd == nil {
		t.Fatal("no rendering asked for the first version")
	}
	msg := cmd().(reportRenderedMsg)
	m.report.setRendered(msg.key, msg.out)
	m.report.rep.Markdown = "# A report\n\nThe first version.\n\n## Follow-up\n\nThe second version."
	cmd = m.layoutReport(120, 40)
	if cmd == nil {
		t.Fatal("the new text was not rendered: the screen keeps the first version")
	}
	if out := ansi.Strip(cmd().(reportRenderedMsg).out); !strings.Contains(out, "The second version") {
		t.Errorf("rendering after the follow-up: %q", out)
	}
}

// At 120 columns the report shares the screen with its sources, and a
// review's studies table is wider than its pane: w gives the report the
// whole width, and the table shows as a table (trial finding).
func TestWideReportShowsWideTables(t *testing.T) {
	m, svc := newTestModel(t, 120, 40, "dark", true)
	for id, rep := range svc.reports {
		rep.Markdown += "\n\n## Included studies\n\n| Study | Design | Main finding | Support |\n|---|---|---|---|\n" +
			"| Jones et al. (2024) [1] | randomised trial, full text | Encapsulated cells kept 90% after 1,000 h | q1 |\n"
		svc.reports[id] = rep
	}
	openFixtureReport(t, m)
	before := ansi.Strip(m.render())
	press(t, m, "w")
	after := ansi.Strip(m.render())
	asTable := regexp.MustCompile(`Jones et al\. \(2024\) \[1\]\s*[│|]\s*randomised`)
	if asTable.MatchString(before) {
		t.Skip("the table fits beside the sources pane already: the test proves nothing")
	}
	if !asTable.MatchString(after) {
		t.Errorf("w did not give the table room:\n%s", after)
	}
	if strings.Contains(after, "Sources (") {
		t.Errorf("the sources pane is still shown:\n%s", after)
	}
	press(t, m, "w")
	if !strings.Contains(ansi.Strip(m.render()), "Sources (") {
		t.Error("w again does not bring the sources pane back")
	}
}

// A review of a dozen studies, all answering q1 or q2, stays a table at
// 120 columns: glamour narrows the last column to its values and clips
// its header ("Ans…"), which a person still reads; a list of twelve was
// the worse page (trial). The cells' words stay whole.
func TestAClippedHeaderKeepsTheTable(t *testing.T) {
	var b strings.Builder
	b.WriteString("| Study | Kind | Main finding | Answers |\n|---|---|---|---|\n")
	for i := 1; i <= 12; i++ {
		fmt.Fprintf(&b, "| Author%d et al. (2022) [%d] | article, abstract | Deep learning has changed what vision-based systems do in autonomous driving and robotic surgery, study %d. | q%d |\n", i, i, i, 1+i%2)
	}
	md := fitTables(b.String(), 116)
	if !strings.Contains(md, "| Author12 et al. (2022) [12] |") {
		t.Errorf("the studies table became a list:\n%s", md)
	}
	if md := fitTables(strings.Replace(b.String(), "study 12.", "study-number-twelve-of-a-dozen-in-one-unbreakable-word-that-no-column-holds.", 1), 60); strings.Contains(md, "| Author12") {
		t.Errorf("a table whose cell word would be cut stayed a table:\n%s", md)
	}
}
