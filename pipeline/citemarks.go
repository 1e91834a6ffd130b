package pipeline

import (
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/researchtui/researchtui/textkit"
)

// citeGroup matches [3], [1, 2], [1-3] and [1–3], but not Markdown links
// like [1](url) (checked by the caller).
var citeGroup = regexp.MustCompile(`\[(\d+(?:\s*[,;–-]\s*\d+)*)\]`)

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

// citationCheck is the result of resolving a draft's citations against the
// numbered sources.
type citationCheck struct {
	text    string // the draft with citations renumbered by first use
	order   []int  // old numbers (1-based) in their new order
	markers int    // citation numbers in the text
	removed int    // numbers that resolved to nothing, dropped
}

// parseGroup expands "1, 3-5" into 1,3,4,5.
func parseGroup(s string) []int {
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

// stripReferences removes a references section the model wrote, up to the
// next heading of the same or a higher level: references come from code.
func stripReferences(md string) string {
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

// checkCitations resolves every [n] against n sources: valid ones are
// renumbered in order of first use, invalid ones are removed.
func checkCitations(md string, n int) citationCheck { return checkCitationsPinned(md, n, 0) }

// checkCitationsPinned is checkCitations with sources 1..pinned keeping
// their numbers (a follow-up keeps the report's references where they
// were); later sources are numbered after them in order of first use.
func checkCitationsPinned(md string, n, pinned int) citationCheck {
	res := citationCheck{}
	newNum := map[int]int{}
	for i := 1; i <= min(pinned, n); i++ {
		res.order = append(res.order, i)
		newNum[i] = i
	}
	var b strings.Builder
	last := 0
	for _, m := range citeGroup.FindAllStringSubmatchIndex(md, -1) {
		start, end := m[0], m[1]
		if end < len(md) && md[end] == '(' { // a Markdown link, not a citation
			continue
		}
		var kept []int
		for _, num := range parseGroup(md[m[2]:m[3]]) {
			res.markers++
			if num < 1 || num > n {
				res.removed++
				continue
			}
			if _, ok := newNum[num]; !ok {
				res.order = append(res.order, num)
				newNum[num] = len(res.order)
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
	res.text = b.String()
	res.markers -= res.removed
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

// sentences splits Markdown prose into sentences, good enough to check the
// claims that carry citations.
func sentences(md string) []string {
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
		if len(merged) > 0 && strings.TrimSpace(citeGroup.ReplaceAllString(s, "")) == "" {
			merged[len(merged)-1] += " " + s
			continue
		}
		merged = append(merged, s)
	}
	return merged
}

// citedSentences returns each sentence with citations and the numbers it cites.
func citedSentences(md string) []struct {
	text string
	nums []int
} {
	var out []struct {
		text string
		nums []int
	}
	for _, s := range sentences(md) {
		var nums []int
		for _, m := range citeGroup.FindAllStringSubmatch(s, -1) {
			nums = append(nums, parseGroup(m[1])...)
		}
		if len(nums) > 0 {
			out = append(out, struct {
				text string
				nums []int
			}{citeGroup.ReplaceAllString(s, ""), nums})
		}
	}
	return out
}

// supportThreshold is the share of a sentence's content words that must
// appear in a cited source's evidence for the claim to count as supported.
const supportThreshold = 0.3

// sourceWords is the vocabulary of a numbered source's evidence: its
// abstract, its quotes and its retrieved chunks.
func (o *orchestrator) sourceWords(n int) map[string]bool {
	if n < 1 || n > len(o.st.Analyses) {
		return nil
	}
	an := o.st.Analyses[n-1]
	rec, _ := o.loadSource(an.SourceKey)
	var b strings.Builder
	b.WriteString(rec.Title + " " + rec.Abstract + " ")
	for _, q := range an.Quotes {
		b.WriteString(q.Text + " ")
	}
	for _, f := range an.KeyFindings {
		b.WriteString(f + " ")
	}
	for _, cs := range o.st.Contexts {
		for _, c := range cs {
			if c.SourceKey == an.SourceKey {
				b.WriteString(c.Text + " ")
			}
		}
	}
	return textkit.WordSet(b.String())
}

// grounding counts the cited sentences whose words are found in at least
// one cited source, and lists those that are not.
func (o *orchestrator) grounding(md string) (supported, total int, weak []string) {
	cache := map[int]map[string]bool{}
	for _, cs := range citedSentences(md) {
		total++
		ok := false
		for _, n := range cs.nums {
			if _, have := cache[n]; !have {
				cache[n] = o.sourceWords(n)
			}
			if textkit.Overlap(cs.text, cache[n]) >= supportThreshold {
				ok = true
				break
			}
		}
		if ok {
			supported++
		} else {
			weak = append(weak, strings.TrimSpace(cs.text))
		}
	}
	return supported, total, weak
}

func (o *orchestrator) unsupportedSentences(md string) []string {
	_, _, weak := o.grounding(md)
	return weak
}

// The read side (pipeline/history) cuts sentences and reads citations
// exactly as the run did, so an exported report marks the sentences the
// verifier judged.

// CiteGroups are the byte ranges of the citation groups ("[3]", "[1, 2]",
// "[1-3]") in s, as regexp submatch indexes: the group with its brackets,
// then its inside. A group followed by "(" is a Markdown link, which the
// caller skips.
func CiteGroups(s string) [][]int { return citeGroup.FindAllStringSubmatchIndex(s, -1) }

// StripCitations removes the citation groups from s.
func StripCitations(s string) string { return citeGroup.ReplaceAllString(s, "") }

// ParseCiteGroup expands the inside of a citation group, "1, 3-5", into
// 1,3,4,5.
func ParseCiteGroup(s string) []int { return parseGroup(s) }

// LineSentences cuts a line into sentences by byte range, as the verifier
// does (verify.go).
func LineSentences(line string) [][2]int { return lineSentences(line) }

// CountCitedSentences is the number of sentences of a report's Markdown
// that cite a source.
func CountCitedSentences(md string) int { return len(citedSentences(md)) }
