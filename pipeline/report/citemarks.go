package report

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// CiteGroup matches [3], [1, 2], [1-3] and [1–3], but not Markdown links
// like [1](url) (checked by the caller).
var CiteGroup = regexp.MustCompile(`\[(\d+(?:\s*[,;–-]\s*\d+)*)\]`)

// refHeading matches a references section the model wrote anyway.
var refHeading = regexp.MustCompile(`(?im)^#{1,6}\s*(references|bibliography|sources|works cited|citations|` + headingAlternatives(ReferencesHeadings()) + `)\s*$`)

// headingAlternatives is a regexp alternation of headings, quoted.
func headingAlternatives(hs []string) string {
	q := make([]string, len(hs))
	for i, h := range hs {
		q[i] = regexp.QuoteMeta(h)
	}
	return strings.Join(q, "|")
}

// RefsHeadingPattern matches a line that is a References heading in any
// of the report languages (with or without its #s): where citations end.
func RefsHeadingPattern() *regexp.Regexp {
	return regexp.MustCompile(`(?im)^[#\s]*(` + headingAlternatives(ReferencesHeadings()) + `)\s*$`)
}

// CitationCheck is the result of resolving a draft's citations against the
// numbered sources.
type CitationCheck struct {
	Text    string // the draft with citations renumbered by first use
	Order   []int  // old numbers (1-based) in their new order
	Markers int    // citation numbers in the text
	Removed int    // numbers that resolved to nothing, dropped
}

// ParseCiteGroup expands "1, 3-5" into 1,3,4,5.
func ParseCiteGroup(s string) []int {
	var out []int
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ';' }) {
		part = strings.TrimSpace(part)
		part = strings.ReplaceAll(part, "–", "-")
		if a, b, ok := strings.Cut(part, "-"); ok {
			x, err1 := strconv.Atoi(strings.TrimSpace(a))
			y, err2 := strconv.Atoi(strings.TrimSpace(b))
			if err1 == nil && err2 == nil && x <= y && y-x < 20 {
				for i := x; i <= y; i++ {
					out = append(out, i)
				}
			}
			continue
		}
		if n, err := strconv.Atoi(part); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// StripReferences removes a references section the model wrote, up to the
// next heading of the same or a higher level: references come from code.
func StripReferences(md string) string {
	loc := refHeading.FindStringIndex(md)
	if loc == nil {
		return md
	}
	level := strings.Count(strings.Fields(md[loc[0]:loc[1]])[0], "#")
	rest := md[loc[1]:]
	end := len(rest)
	for i, line := range strings.SplitAfter(rest, "\n") {
		_ = i
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") {
			l := len(trimmed) - len(strings.TrimLeft(trimmed, "#"))
			if l <= level {
				end = strings.Index(rest, line)
				break
			}
		}
	}
	return strings.TrimRight(md[:loc[0]]+rest[end:], "\n ") + "\n"
}

// CheckCitations resolves every [n] against n sources: valid ones are
// renumbered in order of first use, invalid ones are removed.
func CheckCitations(md string, n int) CitationCheck { return CheckCitationsPinned(md, n, 0) }

// CheckCitationsPinned is CheckCitations with sources 1..pinned keeping
// their numbers (a follow-up keeps the report's references where they
// were); later sources are numbered after them in order of first use.
func CheckCitationsPinned(md string, n, pinned int) CitationCheck {
	res := CitationCheck{}
	newNum := map[int]int{}
	for i := 1; i <= min(pinned, n); i++ {
		res.Order = append(res.Order, i)
		newNum[i] = i
	}
	var b strings.Builder
	last := 0
	for _, m := range CiteGroup.FindAllStringSubmatchIndex(md, -1) {
		start, end := m[0], m[1]
		if end < len(md) && md[end] == '(' { // a Markdown link, not a citation
			continue
		}
		var kept []int
		for _, num := range ParseCiteGroup(md[m[2]:m[3]]) {
			res.Markers++
			if num < 1 || num > n {
				res.Removed++
				continue
			}
			if _, ok := newNum[num]; !ok {
				res.Order = append(res.Order, num)
				newNum[num] = len(res.Order)
			}
			kept = append(kept, newNum[num])
		}
		b.WriteString(md[last:start])
		if len(kept) == 0 {
			// Drop the marker and the space before it.
			s := b.String()
			b.Reset()
			b.WriteString(strings.TrimRight(s, " "))
		} else {
			b.WriteString(formatGroup(kept))
		}
		last = end
	}
	b.WriteString(md[last:])
	res.Text = b.String()
	res.Markers -= res.Removed
	return res
}

func formatGroup(nums []int) string {
	sort.Ints(nums)
	var parts []string
	prev := -1
	for _, x := range nums {
		if x == prev {
			continue
		}
		prev = x
		parts = append(parts, strconv.Itoa(x))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// Sentences splits Markdown prose into sentences, good enough to check the
// claims that carry citations.
func Sentences(md string) []string {
	var out []string
	for _, line := range strings.Split(md, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		start := 0
		for i := 0; i < len(line); i++ {
			c := line[i]
			if (c == '.' || c == '!' || c == '?') && (i+1 == len(line) || line[i+1] == ' ') && !abbreviation(line[:i+1]) {
				// keep "[3]." attached to its sentence
				out = append(out, strings.TrimSpace(line[start:i+1]))
				start = i + 1
			}
		}
		if rest := strings.TrimSpace(line[start:]); rest != "" {
			out = append(out, rest)
		}
	}
	// "… etc. [1]" splits before its citation: a piece that is only
	// citations belongs to the sentence before it.
	merged := out[:0]
	for _, s := range out {
		if len(merged) > 0 && strings.TrimSpace(CiteGroup.ReplaceAllString(s, "")) == "" {
			merged[len(merged)-1] += " " + s
			continue
		}
		merged = append(merged, s)
	}
	return merged
}

// CitedSentence is a sentence that cites, without its citations, and
// the numbers it cites.
type CitedSentence struct {
	Text string
	Nums []int
}

// CitedSentences returns each sentence with citations and the numbers it cites.
func CitedSentences(md string) []CitedSentence {
	var out []CitedSentence
	for _, s := range Sentences(md) {
		var nums []int
		for _, m := range CiteGroup.FindAllStringSubmatch(s, -1) {
			nums = append(nums, ParseCiteGroup(m[1])...)
		}
		if len(nums) > 0 {
			out = append(out, CitedSentence{CiteGroup.ReplaceAllString(s, ""), nums})
		}
	}
	return out
}

// CiteGroups are the byte ranges of the citation groups ("[3]", "[1, 2]",
// "[1-3]") in s, as regexp submatch indexes: the group with its brackets,
// then its inside. A group followed by "(" is a Markdown link, which the
// caller skips.
func CiteGroups(s string) [][]int { return CiteGroup.FindAllStringSubmatchIndex(s, -1) }

// StripCitations removes the citation groups from s.
func StripCitations(s string) string { return CiteGroup.ReplaceAllString(s, "") }

// CountCitedSentences is the number of sentences of a report's Markdown
// that cite a source.
func CountCitedSentences(md string) int { return len(CitedSentences(md)) }

// CitedSpan is a sentence of a draft that carries citations, by byte range.
type CitedSpan struct {
	Start, End int
	Text       string // without its citations
	Nums       []int
}

// CitedSpans finds the cited sentences of a Markdown draft (headings and
// a references section aside).
func CitedSpans(md string) []CitedSpan {
	var out []CitedSpan
	off := 0
	for _, line := range strings.SplitAfter(md, "\n") {
		lineStart := off
		off += len(line)
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		for _, seg := range LineSentences(line) {
			nums := groupNums(line[seg[0]:seg[1]])
			if len(nums) == 0 {
				continue
			}
			text := strings.TrimSpace(StripListMarker(CiteGroup.ReplaceAllString(line[seg[0]:seg[1]], "")))
			text = strings.ReplaceAll(strings.ReplaceAll(text, " .", "."), "..", ".")
			out = append(out, CitedSpan{Start: lineStart + seg[0], End: lineStart + seg[1], Text: text, Nums: nums})
		}
	}
	return out
}

// LineSentences cuts a line into sentences by byte range, the line break
// left out. A piece that is only citations ("… etc. [1]") belongs to the
// sentence before it.
func LineSentences(line string) [][2]int {
	end := len(strings.TrimRight(line, "\r\n"))
	var segs [][2]int
	start := 0
	for i := 0; i < end; i++ {
		c := line[i]
		if (c == '.' || c == '!' || c == '?') && (i+1 == end || line[i+1] == ' ') && !abbreviation(line[:i+1]) {
			segs = append(segs, [2]int{start, i + 1})
			start = i + 1
		}
	}
	if start < end {
		segs = append(segs, [2]int{start, end})
	}
	var merged [][2]int
	for _, sg := range segs {
		if len(merged) > 0 && strings.Trim(CiteGroup.ReplaceAllString(line[sg[0]:sg[1]], ""), " .!?") == "" {
			merged[len(merged)-1][1] = sg[1]
			continue
		}
		merged = append(merged, sg)
	}
	return merged
}

// abbreviations end with a stop that ends no sentence: "Gao et al.
// (2023) show", "e.g. stripes".
var abbreviations = map[string]bool{"et al.": true, "e.g.": true, "i.e.": true, "cf.": true, "vs.": true, "fig.": true, "eq.": true, "ref.": true, "approx.": true}

// abbreviation says whether s ends with one of them.
func abbreviation(s string) bool {
	low := strings.ToLower(s)
	for a := range abbreviations {
		if strings.HasSuffix(low, a) && (len(low) == len(a) || !isAlnum(rune(low[len(low)-len(a)-1]))) {
			return true
		}
	}
	return false
}

// groupNums are the citation numbers in s (Markdown links aside).
func groupNums(s string) []int {
	var nums []int
	for _, m := range CiteGroup.FindAllStringSubmatchIndex(s, -1) {
		if m[1] < len(s) && s[m[1]] == '(' {
			continue
		}
		nums = append(nums, ParseCiteGroup(s[m[2]:m[3]])...)
	}
	return nums
}

// StripListMarker takes a list item's marker ("- ", "2. ", "(3) ") off s.
func StripListMarker(s string) string {
	t := strings.TrimSpace(s)
	if m := listMarker.FindString(t); m != "" {
		return t[len(m):]
	}
	return t
}

// Recite replaces a sentence's citation groups by one group of nums at the
// place of the last (none when nums is empty).
func Recite(seg string, nums []int) string {
	locs := CiteGroup.FindAllStringIndex(seg, -1)
	var keep [][]int
	for _, l := range locs {
		if l[1] < len(seg) && seg[l[1]] == '(' {
			continue
		}
		keep = append(keep, l)
	}
	if len(keep) == 0 {
		return seg
	}
	var b strings.Builder
	last := 0
	for i, l := range keep {
		b.WriteString(strings.TrimRight(seg[last:l[0]], " "))
		if i == len(keep)-1 && len(nums) > 0 {
			b.WriteString(" " + formatGroup(append([]int(nil), nums...)))
		}
		last = l[1]
	}
	b.WriteString(seg[last:])
	return b.String()
}

// TidyDraft removes what repairs leave behind on the lines they touched:
// empty list items or lines, doubled spaces and " .".
func TidyDraft(md string, touched map[int]bool) string {
	var out []string
	for i, line := range strings.Split(md, "\n") {
		if !touched[i] {
			out = append(out, line)
			continue
		}
		t := strings.TrimSpace(line)
		if t == "" {
			continue
		}
		if t == "-" || t == "*" || t == "+" {
			continue
		}
		// Inside the text (not its indentation), a removed citation or
		// sentence leaves doubled spaces and " ." behind.
		indent := len(line) - len(strings.TrimLeft(line, " \t"))
		body := strings.ReplaceAll(line[indent:], " .", ".")
		for strings.Contains(body, "  ") {
			body = strings.ReplaceAll(body, "  ", " ")
		}
		out = append(out, strings.TrimRight(line[:indent]+body, " "))
	}
	return strings.Join(out, "\n")
}
