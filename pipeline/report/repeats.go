package report

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/researchtui/researchtui/textkit"
)

// A writer that states a finding in the summary and again in its section,
// or uses one finding label twice, gives the reader the same sentence
// twice (issue 46: 13 cited sentences, 9 distinct). dropRepeats keeps the
// first and drops the later ones, moving any citation a repeat had that
// the first lacks onto the first.

// minRepeatWords is the shortest sentence counted as a repeat: a short
// one ("Results vary.") may fairly come back.
const minRepeatWords = 6

// citeNumber is one number of a citation group.
var citeNumber = regexp.MustCompile(`\d+`)

// DropRepeats returns md without the sentences that repeat an earlier one
// (the same words, citations and case aside), and how many it dropped.
// Headings, tables, lists' markers and code are left as they are.
func DropRepeats(md string) (string, int) {
	type at struct{ line, i int }
	lines := strings.Split(md, "\n")
	parts := make([][]string, len(lines)) // a prose line's sentences; nil: kept whole
	first := map[string]at{}
	dropped := 0
	fenced := false
	for li, line := range lines {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fenced = !fenced
			continue
		}
		if fenced || t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "|") || strings.HasPrefix(line, "    ") {
			continue
		}
		ss := Sentences(line)
		parts[li] = ss
		for si, s := range ss {
			key := repeatKey(s)
			if len(strings.Fields(key)) < minRepeatWords {
				continue
			}
			if f, ok := first[key]; ok {
				parts[f.line][f.i] = withCitations(parts[f.line][f.i], citeNums(s))
				parts[li][si] = ""
				dropped++
				continue
			}
			first[key] = at{li, si}
		}
	}
	if dropped == 0 {
		return md, 0
	}
	for li, ss := range parts {
		if ss == nil {
			continue
		}
		indent := lines[li][:len(lines[li])-len(strings.TrimLeft(lines[li], " \t"))]
		var kept []string
		for _, s := range ss {
			if s != "" {
				kept = append(kept, strings.TrimSpace(s))
			}
		}
		lines[li] = indent + strings.Join(kept, " ")
		if len(kept) == 0 {
			lines[li] = ""
		}
	}
	return strings.Join(lines, "\n"), dropped
}

// repeatKey is a sentence as compared for repeats: no citations or list
// marker, lower case, words only.
func repeatKey(s string) string {
	s = CiteGroup.ReplaceAllString(s, " ")
	s = strings.TrimLeft(strings.TrimSpace(s), "-*+0123456789. ")
	return strings.Join(textkit.Words(s), " ")
}

// citeNums are the numbers a sentence cites.
func citeNums(s string) []int {
	var out []int
	for _, g := range CiteGroup.FindAllString(s, -1) {
		for _, n := range citeNumber.FindAllString(g, -1) {
			if v, err := strconv.Atoi(n); err == nil && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	return out
}

// withCitations adds to sentence s the numbers of add it does not cite,
// in its last citation group (or a new one before its final stop).
func withCitations(s string, add []int) string {
	have := citeNums(s)
	var more []string
	for _, n := range add {
		if !slices.Contains(have, n) {
			more = append(more, strconv.Itoa(n))
		}
	}
	if len(more) == 0 {
		return s
	}
	if locs := CiteGroup.FindAllStringIndex(s, -1); len(locs) > 0 {
		last := locs[len(locs)-1]
		g := s[last[0]:last[1]]
		return s[:last[0]] + strings.TrimSuffix(g, "]") + ", " + strings.Join(more, ", ") + "]" + s[last[1]:]
	}
	trimmed := strings.TrimRight(s, " ")
	end := ""
	if n := len(trimmed); n > 0 && strings.ContainsRune(".!?", rune(trimmed[n-1])) {
		trimmed, end = trimmed[:n-1], trimmed[n-1:]
	}
	return trimmed + " [" + strings.Join(more, ", ") + "]" + end
}
