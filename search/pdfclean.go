package search

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/researchtui/researchtui/textkit"
)

// CleanPDFPages turns pdfium's page texts into readable text, page by page
// (the result has one string per input page, so page numbers stay):
//
//   - line ends become \n; control characters (unmapped glyphs of math
//     fonts) and terminal escapes go (textkit.CleanText);
//   - a word hyphenated across a line end is joined: pdfium marks the
//     hyphens it recognises with U+FFFE and U+0002, and a line that still
//     ends in letter + "-" before a lowercase letter is joined too (as
//     pdftotext does; "self-\nconsistent" becomes "selfconsistent");
//   - ligatures are expanded (ﬁ → fi), a spacing accent that TeX draws
//     before its letter is put on it (ˇs → š, ´c → ć), and the text is
//     normalised to NFC (pdfium gives some accents as combining marks);
//   - lines at the top or bottom of pages that repeat on most pages
//     (running heads, footers, page numbers; digits compared as one) are
//     removed. Odd and even pages are also counted apart, for books that
//     alternate author and title.
func CleanPDFPages(raw []string) []string {
	pages := make([]string, len(raw))
	for i, p := range raw {
		pages[i] = cleanPDFPage(p)
	}
	return removeRunningLines(pages)
}

var pdfLineEnds = strings.NewReplacer("\r\n", "\n", "\r", "\n")

func cleanPDFPage(s string) string {
	s = pdfLineEnds.Replace(s)
	s = joinHyphens(s)
	s = ligatures.Replace(s)
	s = composeSpacingAccents(s)
	s = norm.NFC.String(s)
	return strings.TrimSpace(textkit.CleanText(s))
}

var ligatures = strings.NewReplacer(
	"\ufb00", "ff", "\ufb01", "fi", "\ufb02", "fl", "\ufb03", "ffi", "\ufb04", "ffl", "\ufb05", "st", "\ufb06", "st",
)

// joinHyphens removes line-end hyphenation: pdfium's markers (U+FFFE, and
// U+0002 in older builds) before a lowercase letter vanish, elsewhere they
// become "-"; "letter-\nlowercase" and soft hyphens at line ends are
// joined.
func joinHyphens(s string) string {
	if !strings.ContainsAny(s, "\ufffe\u0002-\u00ad\u2010") {
		return s
	}
	rs := []rune(s)
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch r {
		case '\ufffe', '\u0002':
			j := i + 1
			for j < len(rs) && (rs[j] == '\n' || rs[j] == ' ') {
				j++
			}
			if j < len(rs) && unicode.IsLower(rs[j]) {
				i = j - 1
				continue
			}
			b.WriteByte('-')
			continue
		case '-', '\u00ad', '\u2010':
			if i > 0 && unicode.IsLetter(rs[i-1]) && i+2 < len(rs) && rs[i+1] == '\n' && unicode.IsLower(rs[i+2]) {
				i++ // drop the hyphen and the line break
				continue
			}
			if r == '\u00ad' {
				continue
			}
		}
		b.WriteRune(r)
	}
	return b.String()
}

// spacingAccents maps the spacing forms of accents to combining marks.
var spacingAccents = map[rune]rune{
	'\u00b4': '\u0301', // ´ acute
	'\u02ca': '\u0301',
	'\u02cb': '\u0300', // ˋ grave
	'\u0060': '\u0300', // ` grave (only inside a word)
	'\u02c6': '\u0302', // ˆ circumflex
	'\u005e': '\u0302', // ^ (only inside a word)
	'\u02dc': '\u0303', // ˜ tilde
	'\u00af': '\u0304', // ¯ macron
	'\u02c9': '\u0304',
	'\u02d8': '\u0306', // ˘ breve
	'\u02d9': '\u0307', // ˙ dot above
	'\u00a8': '\u0308', // ¨ diaeresis
	'\u02da': '\u030a', // ˚ ring
	'\u02dd': '\u030b', // ˝ double acute
	'\u02c7': '\u030c', // ˇ caron
	'\u00b8': '\u0327', // ¸ cedilla
	'\u02db': '\u0328', // ˛ ogonek
}

// composeSpacingAccents puts a spacing accent followed by a letter onto
// that letter when Unicode has the composed letter (TeX draws \v{s} as ˇ
// then s; pdfium reports both glyphs). ASCII ` and ^ count only between
// two letters.
func composeSpacingAccents(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { _, ok := spacingAccents[r]; return ok }) {
		return s
	}
	rs := []rune(s)
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(rs); i++ {
		mark, ok := spacingAccents[rs[i]]
		if ok && i+1 < len(rs) && unicode.IsLetter(rs[i+1]) && (rs[i] > 0x7f || i > 0 && unicode.IsLetter(rs[i-1])) {
			base := rs[i+1]
			switch base {
			case 'ı':
				base = 'i'
			case 'ȷ':
				base = 'j'
			}
			c := norm.NFC.String(string([]rune{base, mark}))
			if utf8.RuneCountInString(c) == 1 {
				b.WriteString(c)
				i++
				continue
			}
		}
		b.WriteRune(rs[i])
	}
	return b.String()
}

// runningZone is how many lines at the top and at the bottom of a page are
// looked at for running heads and footers.
const runningZone = 3

var digitsRe = regexp.MustCompile(`\d+`)
var romanRe = regexp.MustCompile(`^(?i)[ivxlcdm]+$`)

// runningKey is the form in which a head or footer line is compared across
// pages: lowercase, every number alike, roman page numbers alike.
func runningKey(line string) string {
	k := strings.ToLower(strings.Join(strings.Fields(line), " "))
	if romanRe.MatchString(k) {
		return "#"
	}
	return digitsRe.ReplaceAllString(k, "#")
}

// removeRunningLines drops the lines in the top and bottom zones of pages
// whose key appears in those zones on more than half of the pages (at least
// three), or on more than half of the odd or of the even pages.
func removeRunningLines(pages []string) []string {
	n := len(pages)
	if n < 3 {
		return pages
	}
	lines := make([][]string, n)
	zones := make([][]int, n)
	all := map[string]int{}
	parity := [2]map[string]int{{}, {}}
	for p, text := range pages {
		lines[p] = strings.Split(text, "\n")
		var nonEmpty []int
		for i, l := range lines[p] {
			if strings.TrimSpace(l) != "" {
				nonEmpty = append(nonEmpty, i)
			}
		}
		var zone []int
		if len(nonEmpty) <= 2*runningZone {
			zone = nonEmpty
		} else {
			zone = append(append(zone, nonEmpty[:runningZone]...), nonEmpty[len(nonEmpty)-runningZone:]...)
		}
		zones[p] = zone
		seen := map[string]bool{}
		for _, i := range zone {
			k := runningKey(lines[p][i])
			if seen[k] || len(strings.Fields(k)) > 20 {
				continue
			}
			seen[k] = true
			all[k]++
			parity[p%2][k]++
		}
	}
	groups := [2]int{(n + 1) / 2, n / 2}
	running := func(p int, k string) bool {
		if c := all[k]; c >= 3 && 2*c > n {
			return true
		}
		g := p % 2
		c := parity[g][k]
		return c >= 3 && 2*c > groups[g]
	}
	out := make([]string, n)
	for p := range pages {
		drop := map[int]bool{}
		for _, i := range zones[p] {
			if running(p, runningKey(lines[p][i])) {
				drop[i] = true
			}
		}
		if len(drop) == 0 {
			out[p] = pages[p]
			continue
		}
		kept := lines[p][:0:0]
		for i, l := range lines[p] {
			if !drop[i] {
				kept = append(kept, l)
			}
		}
		out[p] = strings.TrimSpace(strings.Join(kept, "\n"))
	}
	return out
}

// referencesHeadingRe matches a line that is only a references heading,
// numbered or not, in the languages papers are commonly written in.
var referencesHeadingRe = regexp.MustCompile(`(?i)^(?:(?:\d+|[ivxlc]+|[a-z])[.)]?\s+)?(?:references|reference list|references and notes|references cited|bibliography|literature cited|works cited|cited literature|literatur|literaturverzeichnis|quellenverzeichnis|références|références bibliographiques|bibliographie|referencias|bibliografía|bibliografia|riferimenti bibliografici|referências|referências bibliográficas|литература|список литературы|библиография|参考文献|參考文獻|参考资料|文献)\s*:?$`)

// referenceEntryRe matches the start of a numbered reference: "[12] ",
// "12. Author" or a bare "12 Author" (REVTeX).
var referenceEntryRe = regexp.MustCompile(`^\s*(?:\[(\d{1,3})\]|(\d{1,3})\.?)\s+\S`)

var refYearRe = regexp.MustCompile(`\b(1[6-9]|20)\d\d[a-z]?\b`)

// ReferencesStart finds where a paper's references (bibliography) begin in
// its pages as returned by PDFPagesWithin: the page index into pages and
// the byte offset into that page's text of the start of the references
// heading (or of the first entry when there is no heading, as in REVTeX
// papers). Everything from there to the end of the document is the
// reference list, unless appendices follow it. ok is false when no
// reference list is recognised.
//
// A heading counts when a line holds only "References", "Bibliography" or
// the like (numbered or not; several languages) and the lines after it
// look like references (years or numbered entries); the last such heading
// wins, so a table of contents does not. Without a heading, a run of
// numbered entries 1, 2, 3, … with years in the second half of the
// document is taken. Retrieval can use it to down-weight the reference
// list, which matches many queries by its titles alone.
func ReferencesStart(pages []string) (page, offset int, ok bool) {
	type line struct {
		page, off int
		text      string
	}
	var ls []line
	for p, text := range pages {
		off := 0
		for _, l := range strings.SplitAfter(text, "\n") {
			ls = append(ls, line{p, off, strings.TrimSpace(l)})
			off += len(l)
		}
	}
	looksLikeRefs := func(from int) bool {
		years, entries := 0, 0
		for i := from; i < len(ls) && i < from+30; i++ {
			if refYearRe.MatchString(ls[i].text) {
				years++
			}
			if referenceEntryRe.MatchString(ls[i].text) {
				entries++
			}
		}
		return years >= 3 || entries >= 3
	}
	for i := len(ls) - 1; i >= 0; i-- {
		if referencesHeadingRe.MatchString(ls[i].text) && looksLikeRefs(i+1) {
			return ls[i].page, ls[i].off, true
		}
	}
	// No heading: the first run of entries numbered 1, 2, 3 (each within a
	// few lines of the last) in the second half of the document.
	for i := len(ls) / 2; i < len(ls); i++ {
		if entryNumber(ls[i].text) != 1 {
			continue
		}
		want, last := 2, i
		for j := i + 1; j < len(ls) && j <= last+8 && want <= 3; j++ {
			if entryNumber(ls[j].text) == want {
				want, last = want+1, j
			}
		}
		if want > 3 && looksLikeRefs(i) {
			return ls[i].page, ls[i].off, true
		}
	}
	return 0, 0, false
}

func entryNumber(s string) int {
	m := referenceEntryRe.FindStringSubmatch(s)
	if m == nil {
		return 0
	}
	d := m[1] + m[2]
	n := 0
	for _, c := range d {
		n = n*10 + int(c-'0')
	}
	return n
}

// appendixHeadingRe matches a short line that starts an appendix, which
// some papers put after their reference list.
var appendixHeadingRe = regexp.MustCompile(`(?i)^(?:[a-z]\.?\s+)?(?:appendix|appendices|supplementary (?:material|information|materials)|supporting information)\b.{0,60}$`)

// referencesEnd finds where a reference list that starts at (page, off)
// ends: at the first appendix heading after it, or the end of the document
// (len(pages), 0).
func referencesEnd(pages []string, page, off int) (int, int) {
	for p := page; p < len(pages); p++ {
		text, base := pages[p], 0
		if p == page {
			text, base = text[off:], off
		}
		pos := 0
		for _, l := range strings.SplitAfter(text, "\n") {
			if pos > 0 && appendixHeadingRe.MatchString(strings.TrimSpace(l)) {
				return p, base + pos
			}
			pos += len(l)
		}
	}
	return len(pages), 0
}
