package pipeline

import (
	"strings"

	"github.com/researchtui/researchtui/textkit"
)

// A revision rewrites only the sections the accepted requests name: on one
// GPU every generated token is waited for, and rewriting a whole report to
// change two sections costs the person most of a minute. The writer
// returns those sections, each under its "## " heading, and the code
// splices them into the previous draft.

// mdSection is one "## " section of a report: its heading line and body.
type mdSection struct {
	heading string // the line, "## Consensus"; "" for the text before the first
	body    string
}

// splitSections cuts Markdown at its "## " headings (deeper headings stay
// inside their section).
func splitSections(md string) []mdSection {
	var out []mdSection
	cur := mdSection{}
	var body strings.Builder
	for _, line := range strings.SplitAfter(md, "\n") {
		if strings.HasPrefix(line, "## ") {
			cur.body = body.String()
			out = append(out, cur)
			body.Reset()
			cur = mdSection{heading: strings.TrimRight(line, "\r\n")}
			continue
		}
		body.WriteString(line)
	}
	cur.body = body.String()
	return append(out, cur)
}

func joinSections(ss []mdSection) string {
	var b strings.Builder
	for _, s := range ss {
		if s.heading != "" {
			b.WriteString(s.heading + "\n")
		}
		b.WriteString(s.body)
	}
	return b.String()
}

// headingKey normalises a heading for matching: "## 2. Consensus:" and
// "consensus" are the same section.
func headingKey(h string) string {
	h = strings.TrimLeft(strings.TrimSpace(h), "# ")
	return strings.Join(textkit.ContentWords(h), " ")
}

// revisionTargets are the headings (as written in the draft) of the
// sections the requests name, or nil when the whole report must be
// rewritten: a request names no section the draft has, or asks for
// something across the report.
func revisionTargets(draft string, reqs []RevisionRequest) []string {
	if len(reqs) == 0 {
		return nil
	}
	byKey := map[string]string{}
	for _, s := range splitSections(draft) {
		if s.heading != "" {
			byKey[headingKey(s.heading)] = s.heading
		}
	}
	var out []string
	seen := map[string]bool{}
	for _, r := range reqs {
		k := headingKey(r.Section)
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

// spliceSections puts the revised sections into the draft, each in place
// of the section of the same heading; a revised section the draft lacks is
// added before the first of Consensus, Contradictions and Research gaps
// (or at the end). ok is false when the revision holds no section.
func spliceSections(draft, revised string) (string, bool) {
	var got []mdSection
	for _, s := range splitSections(stripThink(revised)) {
		if s.heading != "" {
			got = append(got, s)
		}
	}
	if len(got) == 0 {
		return draft, false
	}
	secs := splitSections(draft)
	for _, g := range got {
		g.body = "\n" + strings.TrimSpace(g.body) + "\n\n"
		k := headingKey(g.heading)
		placed := false
		for i := range secs {
			if secs[i].heading != "" && headingKey(secs[i].heading) == k {
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
			switch headingKey(s.heading) {
			case "consensus", "contradictions", "research gaps":
				at = i
			}
			if at == i {
				break
			}
		}
		secs = append(secs[:at], append([]mdSection{g}, secs[at:]...)...)
	}
	return strings.TrimSpace(joinSections(secs)) + "\n", true
}
