package report

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// The flow drawn for a report: a box diagram in a fenced block (monospace
// in a terminal and in Markdown viewers; the HTML export draws it as SVG
// instead) and a table beside it, both from the Flow's counts.

// FlowFence is the info string of the diagram's fenced block, which the
// HTML export replaces by its drawing.
const FlowFence = "prisma-flow"

// Diagram geometry: two columns of boxes and an arrow, 72 columns wide
// so the diagram fits an 80-column terminal with the report's margins.
const (
	flowBoxWidth = 34
	flowArrow    = " ─> "
	// FlowWidth is the two-column diagram's width.
	FlowWidth = 2*flowBoxWidth + 4 // the arrow is 4 columns
)

// FlowSection is the report's "PRISMA 2020 flow" section, under the
// heading given, opened by a sentence in the report's language (a tag,
// "" for English).
func (f Flow) FlowSection(heading, language string) string {
	var b strings.Builder
	b.WriteString("## " + heading + "\n\n")
	b.WriteString(FlowIntro(language) + "\n\n")
	b.WriteString("```" + FlowFence + "\n" + f.Diagram() + "```\n\n")
	b.WriteString(f.Table())
	return b.String()
}

// FlowRoutes names the identification routes with their counts, one line
// per route ("arxiv: 30", "citation chasing (round 2): 6").
func (f Flow) FlowRoutes() []string {
	var out []string
	for _, rs := range [][]RouteCount{f.Databases, f.Other} {
		for _, r := range rs {
			name := r.Route
			if r.Round > 1 {
				name += fmt.Sprintf(" (round %d)", r.Round)
			}
			out = append(out, name+" "+nCount(r.Records))
		}
	}
	return out
}

// FlowStage is one row of the diagram: its stage name, the main box and
// the box its arrow points to (none for the last).
type FlowStage struct {
	Stage       string
	Main, Aside []string // first line the box's title with its count
}

// Stages are the diagram's rows, shared by the text and SVG drawings.
func (f Flow) Stages() []FlowStage {
	reasons := func(rs []FlowReason) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Reason+" "+nCount(r.Count))
		}
		return out
	}
	return []FlowStage{
		{"Identification", append([]string{"Records identified " + nCount(f.Identified)}, f.FlowRoutes()...),
			[]string{"Duplicates removed " + nCount(f.Duplicates)}},
		{"Screening", []string{"Records screened " + nCount(f.Screened)},
			append([]string{"Records excluded " + nCount(f.Excluded)}, reasons(f.ExcludedWhy)...)},
		{"", []string{"Reports sought " + nCount(f.Sought)},
			[]string{"Reports not retrieved " + nCount(f.NotRetrieved)}},
		{"Eligibility", []string{"Reports assessed " + nCount(f.Assessed), "full text " + nCount(f.AssessedFullText), "abstract only " + nCount(f.AssessedAbstract)},
			append([]string{"Reports excluded " + nCount(f.Reports)}, reasons(f.ReportsWhy)...)},
		{"Included", []string{"Studies included " + nCount(f.Included)}, nil},
	}
}

// Diagram draws the flow as boxes, 72 columns wide.
func (f Flow) Diagram() string {
	var b strings.Builder
	stages := f.Stages()
	for i, st := range stages {
		if st.Stage != "" {
			b.WriteString(st.Stage + "\n")
		}
		left := textBox(st.Main, flowBoxWidth)
		var right []string
		if st.Aside != nil {
			right = textBox(st.Aside, flowBoxWidth)
		}
		for j := 0; j < max(len(left), len(right)); j++ {
			l := strings.Repeat(" ", flowBoxWidth)
			if j < len(left) {
				l = left[j]
			}
			line := l
			if j < len(right) {
				gap := strings.Repeat(" ", utf8.RuneCountInString(flowArrow))
				if j == 1 {
					gap = flowArrow
				}
				line += gap + right[j]
			}
			b.WriteString(strings.TrimRight(line, " ") + "\n")
		}
		if i < len(stages)-1 {
			mid := strings.Repeat(" ", flowBoxWidth/2)
			b.WriteString(mid + "│\n" + mid + "v\n")
		}
	}
	return b.String()
}

// DiagramFor draws the flow to fit w columns: the two-column diagram
// when it fits, else one column, each stage's side box (duplicates,
// exclusions) under its main box behind an arrow. A terminal pane beside
// the sources pane is narrower than the Markdown's diagram.
func (f Flow) DiagramFor(w int) string {
	if w >= FlowWidth {
		return f.Diagram()
	}
	w = max(w, 24)
	var b strings.Builder
	stages := f.Stages()
	for i, st := range stages {
		if st.Stage != "" {
			b.WriteString(st.Stage + "\n")
		}
		for _, l := range textBox(st.Main, w) {
			b.WriteString(l + "\n")
		}
		if st.Aside != nil {
			for j, l := range textBox(st.Aside, w-6) {
				prefix := "  │   "
				if j == 1 {
					prefix = "  ├─> "
				}
				b.WriteString(prefix + l + "\n")
			}
		}
		if i < len(stages)-1 {
			b.WriteString("  │\n  v\n")
		}
	}
	return b.String()
}

// nCount is PRISMA's "(n = 6)", glued by no-break spaces so a wrap keeps
// it whole (textBox turns them back into spaces).
func nCount(n int) string { return fmt.Sprintf("(n\u00a0=\u00a0%d)", n) }

// textBox frames lines in a box w runes wide; the first line is the
// title, the rest are indented; long lines wrap at words.
func textBox(lines []string, w int) []string {
	inner := w - 4
	out := []string{"┌" + strings.Repeat("─", w-2) + "┐"}
	for i, l := range lines {
		// The title and its wraps start at the edge; items are indented,
		// their wraps more.
		first, more, width := "", "", inner
		if i > 0 {
			first, more, width = "  ", "    ", inner-4
		}
		for k, part := range wrapWords(l, width) {
			text := first + part
			if k > 0 {
				text = more + part
			}
			text = strings.ReplaceAll(text, "\u00a0", " ")
			out = append(out, "│ "+text+strings.Repeat(" ", max(0, inner-utf8.RuneCountInString(text)))+" │")
		}
	}
	return append(out, "└"+strings.Repeat("─", w-2)+"┘")
}

// wrapWords wraps s at spaces into lines of at most w runes (a longer
// word is cut).
func wrapWords(s string, w int) []string {
	var out []string
	line := ""
	for _, word := range strings.Split(s, " ") { // not Fields: no-break spaces glue
		if word == "" {
			continue
		}
		for utf8.RuneCountInString(word) > w {
			r := []rune(word)
			if line != "" {
				out, line = append(out, line), ""
			}
			out, word = append(out, string(r[:w])), string(r[w:])
		}
		switch {
		case line == "":
			line = word
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= w:
			line += " " + word
		default:
			out, line = append(out, line), word
		}
	}
	if line != "" || len(out) == 0 {
		out = append(out, line)
	}
	return out
}

// Table is the flow as a Markdown table, one box per row.
func (f Flow) Table() string {
	var b strings.Builder
	b.WriteString("| Stage | Box | Count |\n|---|---|---:|\n")
	row := func(stage, box string, n int) { fmt.Fprintf(&b, "| %s | %s | %d |\n", stage, box, n) }
	stage := "Identification"
	for _, rs := range [][]RouteCount{f.Databases, f.Other} {
		for _, r := range rs {
			how := "from " + r.Route
			if !IsDatabaseRoute(r.Route) {
				how = "by " + r.Route
			}
			row(stage, fmt.Sprintf("Records identified %s (round %d)", how, max(r.Round, 1)), r.Records)
			stage = ""
		}
	}
	row(stage, "Records identified", f.Identified)
	row("", "Duplicates removed", f.Duplicates)
	row("Screening", "Records screened", f.Screened)
	for _, r := range f.ExcludedWhy {
		row("", "Records excluded: "+r.Reason, r.Count)
	}
	row("", "Reports sought for retrieval", f.Sought)
	row("", "Reports not retrieved", f.NotRetrieved)
	row("Eligibility", "Reports assessed, full text", f.AssessedFullText)
	row("", "Reports assessed, abstract only", f.AssessedAbstract)
	for _, r := range f.ReportsWhy {
		row("", "Reports excluded: "+r.Reason, r.Count)
	}
	row("Included", "Studies included (cited)", f.Included)
	return b.String()
}
