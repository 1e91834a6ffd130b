package report

import (
	"strings"

	"github.com/researchtui/researchtui/textkit"
)

// A revision rewrites only the sections the accepted requests name: on one
// GPU every generated token is waited for, and rewriting a whole report to
// change two sections costs the person most of a minute. The writer
// returns those sections, each under its "## " heading, and the code
// splices them into the previous draft.

// Section is one "## " section of a report: its heading line and body.
type Section struct {
	Heading string // the line, "## Consensus"; "" for the text before the first
	Body    string
}

// SplitSections cuts Markdown at its "## " headings (deeper headings stay
// inside their section).
func SplitSections(md string) []Section {
	var out []Section
	cur := Section{}
	var body strings.Builder
	for _, line := range strings.SplitAfter(md, "\n") {
		if strings.HasPrefix(line, "## ") {
			cur.Body = body.String()
			out = append(out, cur)
			body.Reset()
			cur = Section{Heading: strings.TrimRight(line, "\r\n")}
			continue
		}
		body.WriteString(line)
	}
	cur.Body = body.String()
	return append(out, cur)
}

func joinSections(ss []Section) string {
	var b strings.Builder
	for _, s := range ss {
		if s.Heading != "" {
			b.WriteString(s.Heading + "\n")
		}
		b.WriteString(s.Body)
	}
	return b.String()
}

// HeadingKey normalises a heading for matching: "## 2. Consensus:" and
// "consensus" are the same section.
func HeadingKey(h string) string {
	h = strings.TrimLeft(strings.TrimSpace(h), "# ")
	return strings.Join(textkit.ContentWords(h), " ")
}

// RevisionTargets are the headings (as written in the draft) of the
// sections named (a reviewer's requests name them loosely), or nil when
// the whole report must be rewritten: a name matches no section the
// draft has, or asks for something across the report.
func RevisionTargets(draft string, named []string) []string {
	if len(named) == 0 {
		return nil
	}
	byKey := map[string]string{}
	for _, s := range SplitSections(draft) {
		if s.Heading != "" {
			byKey[HeadingKey(s.Heading)] = s.Heading
		}
	}
	var out []string
	seen := map[string]bool{}
	for _, name := range named {
		k := HeadingKey(name)
		h, ok := byKey[k]
		if !ok {
			h, ok = closestHeading(k, byKey)
		}
		if !ok {
			return nil
		}
		if !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	return out
}

// closestHeading finds the heading a loosely named section means: most of
// the request's words in it ("summary" → "Executive summary").
func closestHeading(k string, byKey map[string]string) (string, bool) {
	if k == "" {
		return "", false
	}
	best, bestScore := "", 0.0
	for hk, h := range byKey {
		if s := textkit.Overlap(k, textkit.WordSet(hk)); s > bestScore {
			best, bestScore = h, s
		}
	}
	return best, bestScore >= 0.5
}

// SpliceSections puts the revised sections into the draft, each in place
// of the section of the same heading; a revised section the draft lacks is
// added before the first of Consensus, Contradictions and Research gaps
// (or at the end). ok is false when the revision holds no section.
func SpliceSections(draft, revised string) (string, bool) {
	var got []Section
	for _, s := range SplitSections(revised) {
		if s.Heading != "" {
			got = append(got, s)
		}
	}
	if len(got) == 0 {
		return draft, false
	}
	secs := SplitSections(draft)
	for _, g := range got {
		g.Body = "\n" + strings.TrimSpace(g.Body) + "\n\n"
		k := HeadingKey(g.Heading)
		placed := false
		for i := range secs {
			if secs[i].Heading != "" && HeadingKey(secs[i].Heading) == k {
				secs[i] = g
				placed = true
				break
			}
		}
		if placed {
			continue
		}
		at := len(secs)
		for i, s := range secs {
			switch HeadingKey(s.Heading) {
			case "consensus", "contradictions", "research gaps":
				at = i
			}
			if at == i {
				break
			}
		}
		secs = append(secs[:at], append([]Section{g}, secs[at:]...)...)
	}
	return strings.TrimSpace(joinSections(secs)) + "\n", true
}
