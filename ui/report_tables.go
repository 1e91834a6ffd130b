package ui

import (
	"strings"

	"charm.land/glamour/v2"
	gstyles "charm.land/glamour/v2/styles"
	"github.com/charmbracelet/x/ansi"
)

// tableMargin is the columns of the pane a table cannot use in the report's
// Markdown style (the document's margins; measured: a wider table is cut at
// the right edge, so its last column loses digits).
const tableMargin = 4

// fitTables is the report's Markdown with every table that a pane width
// columns wide cannot show whole written as a list instead, one item per
// row. Glamour wraps a wide table's cells, but it may narrow a column
// below its longest word and cut it: a count that loses its last digit is
// a wrong number (the PRISMA table's "Duplicates removed │ 4" for 42 at
// 80 columns). A list wraps instead. Tables that fit, or whose cells wrap
// with every word whole (a review's studies table at 120 columns), stay
// tables.
func fitTables(md string, width int) string {
	lines := strings.Split(md, "\n")
	var out []string
	fenced := false
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
		}
		if fenced || !isTableRow(l) || i+1 >= len(lines) || !isTableRule(lines[i+1]) {
			out = append(out, l)
			continue
		}
		j := i + 2
		for j < len(lines) && isTableRow(lines[j]) {
			j++
		}
		table := lines[i:j]
		if tableWidth(table) <= width-tableMargin || wrapsWhole(table, width) {
			out = append(out, table...)
		} else {
			out = append(out, tableAsList(table)...)
		}
		i = j - 1
	}
	return strings.Join(out, "\n")
}

// wrapsWhole says whether glamour, drawing table in a pane width columns
// wide, keeps every word of every cell whole (a header's may be clipped to
// a readable start) in at most twice the lines of the table as a list: it
// wraps cells at spaces and hyphens, and a word it cuts or breaks is
// missing from what it draws.
// Glamour draws the table alone here, in its own style: the report's
// themes change its colours, not its geometry.
func wrapsWhole(table []string, width int) bool {
	r, err := glamour.NewTermRenderer(glamour.WithStyles(gstyles.NoTTYStyleConfig), glamour.WithWordWrap(width))
	if err != nil {
		return false
	}
	out, err := r.Render(strings.Join(table, "\n") + "\n")
	if err != nil {
		return false
	}
	// Wrapped into narrow columns, a table can take many times the lines
	// of its list (a finding of six words a line, under a header): then
	// the list is the better page.
	asList, err := r.Render(strings.Join(tableAsList(table), "\n") + "\n")
	if err != nil || drawnLines(out) > 2*drawnLines(asList)+2 { // +2: the header and its rule
		return false
	}
	drawn := map[string]bool{}
	for _, w := range wrapWords(ansi.Strip(out)) {
		drawn[w] = true
	}
	for k, row := range table {
		if k == 1 { // the rule
			continue
		}
		for _, cell := range tableCells(row) {
			for _, w := range wrapWords(shownText(cell)) {
				if !drawn[w] && (k > 0 || !drawnClipped(drawn, w)) {
					return false
				}
			}
		}
	}
	return true
}

// drawnLines counts the lines of a rendering that hold anything.
func drawnLines(out string) int {
	n := 0
	for _, l := range strings.Split(ansi.Strip(out), "\n") {
		if strings.TrimSpace(l) != "" {
			n++
		}
	}
	return n
}

// drawnClipped says whether a header word was drawn clipped to at least
// its first three letters ("Answe…" over a column of "q1, q2"): a label
// still read, where a list of a dozen studies would be the worse page.
// Only headers may be clipped; a cell's word never is.
func drawnClipped(drawn map[string]bool, word string) bool {
	for d := range drawn {
		if p, ok := strings.CutSuffix(d, "…"); ok && len([]rune(p)) >= 3 && strings.HasPrefix(word, p) {
			return true
		}
	}
	return false
}

// wrapWords are the pieces a table cell may be wrapped between: words,
// split at spaces and after hyphens, without the table's rules.
func wrapWords(s string) []string {
	var out []string
	for _, f := range strings.Fields(s) {
		for _, w := range strings.SplitAfter(f, "-") {
			if w = strings.Trim(w, "│|─┼"); w != "" {
				out = append(out, w)
			}
		}
	}
	return out
}

func isTableRow(l string) bool {
	l = strings.TrimSpace(l)
	return len(l) > 1 && l[0] == '|' && l[len(l)-1] == '|'
}

func isTableRule(l string) bool {
	if !isTableRow(l) {
		return false
	}
	return strings.Trim(strings.TrimSpace(l), "|-: ") == ""
}

// tableCells splits a row into its cells, keeping escaped bars ("\|")
// inside their cell.
func tableCells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimSuffix(strings.TrimPrefix(row, "|"), "|")
	var cells []string
	var b strings.Builder
	for i := 0; i < len(row); i++ {
		switch {
		case row[i] == '\\' && i+1 < len(row):
			b.WriteByte(row[i])
			b.WriteByte(row[i+1])
			i++
		case row[i] == '|':
			cells = append(cells, strings.TrimSpace(b.String()))
			b.Reset()
		default:
			b.WriteByte(row[i])
		}
	}
	return append(cells, strings.TrimSpace(b.String()))
}

// tableWidth is how wide glamour draws a table: each column as wide as its
// widest cell (as shown: escapes and emphasis marks take no room), plus a
// separator and padding per column.
func tableWidth(table []string) int {
	var widths []int
	for k, row := range table {
		if k == 1 { // the rule
			continue
		}
		for c, cell := range tableCells(row) {
			w := ansi.StringWidth(shownText(cell))
			if c >= len(widths) {
				widths = append(widths, w)
			} else if w > widths[c] {
				widths[c] = w
			}
		}
	}
	total := 1
	for _, w := range widths {
		total += w + 3
	}
	return total
}

// shownText is a cell as it appears: Markdown's escapes and emphasis
// marks take no room.
func shownText(cell string) string {
	var b strings.Builder
	for i := 0; i < len(cell); i++ {
		switch {
		case cell[i] == '\\' && i+1 < len(cell):
			i++
			b.WriteByte(cell[i])
		case cell[i] == '*' || cell[i] == '_' || cell[i] == '`':
		default:
			b.WriteByte(cell[i])
		}
	}
	return b.String()
}

// tableAsList writes a table's rows as list items. A table of counts (its
// last column all numbers, like the PRISMA table) gives "cells — cells
// (n = count)", PRISMA's own notation, its empty cells left out; any other
// gives "first cell — header: value · header: value".
func tableAsList(table []string) []string {
	head := tableCells(table[0])
	rows := make([][]string, 0, len(table)-2)
	counts := true
	for _, row := range table[2:] {
		cells := tableCells(row)
		rows = append(rows, cells)
		if !isCount(cells[len(cells)-1]) {
			counts = false
		}
	}
	var out []string
	above := ""
	for _, cells := range rows {
		// A blank first cell means "as above" (the PRISMA table names its
		// stage on a group's first row only): a list item stands alone, so
		// it says the stage again.
		if cells[0] == "" && len(cells) > 1 {
			cells[0] = above
		}
		above = cells[0]
		if counts && len(cells) >= 2 {
			var names []string
			for _, c := range cells[:len(cells)-1] {
				if c != "" {
					names = append(names, c)
				}
			}
			out = append(out, "- "+strings.Join(names, " — ")+" (n = "+cells[len(cells)-1]+")")
			continue
		}
		first := cells[0]
		if first == "" {
			first = "—"
		}
		var parts []string
		for c := 1; c < len(cells); c++ {
			name := ""
			if c < len(head) && head[c] != "" {
				name = head[c] + ": "
			}
			parts = append(parts, name+cells[c])
		}
		out = append(out, "- "+first+" — "+strings.Join(parts, " · "))
	}
	return append(out, "")
}

// isCount says a cell holds a number ("42", "1,234", "0.91").
func isCount(cell string) bool {
	return cell != "" && strings.Trim(cell, "0123456789,.") == ""
}
