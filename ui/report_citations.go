package ui

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/themes"
)

// Reading a report by its citations: a number key or ]/[ selects a source,
// the report marks where it is cited, the sources pane (or, on narrow
// screens, a strip under the report) shows it with its quote and how it
// was read, and y/Y copy its reference or DOI.

// citeKey selects a source by its number. Digits typed one after another
// make one number while it names a source ("1", "2" is [12] in a report
// with twelve sources, [2] in one with three).
func (m *rootModel) citeKey(msg tea.KeyPressMsg) tea.Cmd {
	r := &m.report
	d := msg.String()
	n, _ := strconv.Atoi(r.citeBuf + d)
	if n < 1 || n > len(r.rep.Sources) {
		n, _ = strconv.Atoi(d)
		r.citeBuf = ""
	}
	if n < 1 || n > len(r.rep.Sources) {
		m.setNotice(fmt.Sprintf("the report cites sources [1] to [%d]", len(r.rep.Sources)), true)
		return nil
	}
	r.citeBuf += d
	if r.citeBuf != strconv.Itoa(n) {
		r.citeBuf = strconv.Itoa(n)
	}
	m.selectSource(n, -1)
	return nil
}

// selectSource selects [n] in the sources pane (and the strip under the
// report on narrow screens); mark is the citation in the text that chose
// it (-1: a number key).
func (m *rootModel) selectSource(n, mark int) {
	r := &m.report
	r.srcCursor, r.citeSel, r.citeIdx = n-1, true, mark
	m.notice = ""
	m.fitReportPane()
}

// stepCitation moves to the next (by 1) or previous (by -1) citation in the
// text, scrolls it into view and selects its source.
func (m *rootModel) stepCitation(by int) {
	r := &m.report
	r.citeBuf = ""
	marks := r.citations()
	if len(marks) == 0 {
		m.setNotice("the report has no citations", false)
		return
	}
	i := r.citeIdx
	switch {
	case i >= 0 && i < len(marks):
		i += by
	case by > 0: // from the top of the view
		i = sort.Search(len(marks), func(k int) bool { return marks[k].line >= r.vp.YOffset() })
	default: // from the bottom of the view
		i = sort.Search(len(marks), func(k int) bool { return marks[k].line >= r.vp.YOffset()+r.vp.h }) - 1
	}
	if i < 0 || i >= len(marks) {
		where := "below"
		if by < 0 {
			where = "above"
		}
		m.setNotice("no more citations "+where, false)
		return
	}
	m.selectSource(marks[i].n, i)
	if l := marks[i].line; l < r.vp.YOffset() || l >= r.vp.YOffset()+r.vp.h {
		r.vp.SetYOffset(l - r.vp.h/3)
	}
}

// copyReference sends the selected source's APA reference to the
// terminal's clipboard (OSC 52).
func (m *rootModel) copyReference(tea.KeyPressMsg) tea.Cmd {
	if s := m.report.selectedSource(); s != nil {
		return m.do(copyRefAction(*s))
	}
	return nil
}

// copyDOI sends the selected source's DOI, or its address without one.
func (m *rootModel) copyDOI(tea.KeyPressMsg) tea.Cmd {
	if s := m.report.selectedSource(); s != nil {
		return m.do(copyDOIAction(*s))
	}
	return nil
}

// copyRefAction and copyDOIAction say what y and Y copy from a source; an
// empty text carries what is missing instead.
func copyRefAction(s report.CitedSource) actCopy {
	if s.Reference == "" {
		return actCopy{what: "this source has no reference to copy"}
	}
	return actCopy{text: s.Reference, what: fmt.Sprintf("the APA reference of [%d]", s.N)}
}

func copyDOIAction(s report.CitedSource) actCopy {
	if s.DOI != "" {
		return actCopy{text: s.DOI, what: fmt.Sprintf("the DOI of [%d]", s.N)}
	}
	if u := sourceURL(s); u != "" {
		return actCopy{text: u, what: fmt.Sprintf("the address of [%d] (it has no DOI)", s.N)}
	}
	return actCopy{what: "this source has no DOI or address"}
}

// copy sends text to the terminal's clipboard and says what was sent.
func (m *rootModel) copy(text, what string) tea.Cmd {
	note := "copied " + what
	if m.opts.tmux {
		note += " (in tmux: set -g set-clipboard on)"
	}
	m.setNotice(note, false)
	return tea.SetClipboard(text)
}

// citeMark is one citation number in the rendered report: line, byte span
// in the plain line, and the source number.
type citeMark struct {
	line, from, to, n int
}

// citeInText matches [3], [1, 2], [1-3] in the rendered text.
var citeInText = regexp.MustCompile(`\[(\d+(?:\s*[,;–-]\s*\d+)*)\]`)

// refsHeading is the rendered References heading: citations end there.
var refsHeading = report.RefsHeadingPattern()

// citations are the report's citation marks in reading order, up to the
// References section, found in the plain rendering once per rendering.
func (r *reportModel) citations() []citeMark {
	if r.marks != nil || len(r.vp.lines) == 0 {
		return r.marks
	}
	r.ensurePlain()
	r.marks = []citeMark{}
	for i, l := range r.plain {
		if refsHeading.MatchString(l) {
			break
		}
		for _, loc := range citeInText.FindAllStringSubmatchIndex(l, -1) {
			for _, n := range citeNumbers(l[loc[2]:loc[3]]) {
				if n >= 1 && n <= len(r.rep.Sources) {
					r.marks = append(r.marks, citeMark{line: i, from: loc[0], to: loc[1], n: n})
				}
			}
		}
	}
	return r.marks
}

// citeNumbers expands "1, 3-5" into 1, 3, 4, 5.
func citeNumbers(s string) []int {
	var out []int
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ';' }) {
		part = strings.ReplaceAll(strings.TrimSpace(part), "–", "-")
		if a, b, ok := strings.Cut(part, "-"); ok {
			x, err1 := strconv.Atoi(strings.TrimSpace(a))
			y, err2 := strconv.Atoi(strings.TrimSpace(b))
			for i := x; err1 == nil && err2 == nil && i <= y && y-x < 20; i++ {
				out = append(out, i)
			}
			continue
		}
		if n, err := strconv.Atoi(part); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// markCitations redraws the visible lines that cite the selected source
// with those citations in reverse video (in every theme, and with
// NO_COLOR); the citation ]/[ stands on is also underlined.
func (m *rootModel) markCitations(lines []string) []string {
	r := &m.report
	n := r.srcCursor + 1
	top := r.vp.YOffset()
	var byLine map[int][]citeMark
	for i, c := range r.citations() {
		if c.n != n || c.line < top || c.line >= top+len(lines) {
			continue
		}
		if byLine == nil {
			byLine = map[int][]citeMark{}
			lines = append([]string(nil), lines...)
		}
		if i == r.citeIdx {
			c.n = -1 // the current one
		}
		byLine[c.line] = append(byLine[c.line], c)
	}
	mark := m.st.Selected.Reverse(true)
	for l, cs := range byLine {
		plain, styled := r.plain[l], lines[l-top]
		var b strings.Builder
		at, atCol := 0, 0
		for _, c := range cs {
			if c.from < at {
				continue // a group already marked
			}
			from := atCol + ansi.StringWidth(plain[at:c.from])
			to := from + ansi.StringWidth(plain[c.from:c.to])
			// The report's own styling stays around the mark: ansi.Cut
			// keeps the escape sequences before its cut, so the text
			// after a mark (whose style ends with a reset) gets its
			// colours back.
			b.WriteString(ansi.Cut(styled, atCol, from))
			st := mark
			if c.n == -1 {
				st = st.Underline(true)
			}
			b.WriteString(st.Render(plain[c.from:c.to]))
			at, atCol = c.to, to
		}
		b.WriteString(ansi.TruncateLeft(styled, atCol, ""))
		lines[l-top] = b.String()
	}
	return lines
}

// sourceStrip is the selected source under the report on narrow screens:
// number, title, authors and year, how it was read, and its quote.
func (m *rootModel) sourceStrip(w int) string {
	st := m.st
	if m.report.selectedSource() == nil {
		return fitLines(nil, w, stripHeight)
	}
	shown, label := m.report.shownSource(m.report.srcCursor)
	s := &shown
	num := fmt.Sprintf("[%d] ", s.N)
	lines := []string{st.Subtle.Render(strings.Repeat("─", w))}
	lines = append(lines, st.Accent.Render(num)+st.Text.Bold(true).Render(trunc(orUntitled(s.Title), w-len(num))))
	meta := sourceMeta(*s, false)
	tag := joinTags(noticeTag(st, *s), readTag(st, s.Read))
	lines = append(lines, strings.Repeat(" ", len(num))+st.Muted.Render(trunc(meta, max(w-len(num)-ansi.StringWidth(tag)-3, 10)))+tagSep(meta, tag)+tag)
	if s.Quote != "" {
		if label != "" {
			lines[len(lines)-1] += st.Muted.Render(" · " + label)
		}
		ql := strings.Split(wrapText("“"+s.Quote+"”", max(w-len(num)-2, 10)), "\n")
		if len(ql) > 2 {
			ql = append(ql[:1], trunc(ql[1]+" …", max(w-len(num)-2, 10)))
		}
		for _, l := range ql {
			lines = append(lines, strings.Repeat(" ", len(num))+st.Thinking.Render("│ "+l))
		}
	}
	return fitLines(lines, w, stripHeight)
}

// readTag says how a source was read; empty when the report doesn't say.
func readTag(st *themes.Styles, read string) string {
	switch read {
	case report.ReadFullText:
		return st.Success.Render("full text")
	case report.ReadAbstract:
		return st.Warning.Render("abstract only")
	}
	return ""
}

func tagSep(meta, tag string) string {
	if meta == "" || tag == "" {
		return ""
	}
	return " · "
}
