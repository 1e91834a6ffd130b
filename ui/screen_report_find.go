package ui

import (
	"strings"

	"charm.land/lipgloss/v2"
)

// Finding text in the open report: the matches of the query, the one in
// view, and their highlight.

func (r *reportModel) recomputeMatches() {
	r.matches = r.matches[:0]
	q := strings.ToLower(strings.TrimSpace(r.query))
	if q == "" {
		return
	}
	r.ensurePlain()
	for i, l := range r.plain {
		if strings.Contains(strings.ToLower(l), q) {
			r.matches = append(r.matches, i)
		}
	}
	if r.matchIdx >= len(r.matches) {
		r.matchIdx = 0
	}
}

func (r *reportModel) jumpToMatch() {
	if len(r.matches) == 0 {
		return
	}
	r.vp.SetYOffset(max(r.matches[r.matchIdx]-2, 0))
}

func (r *reportModel) stepMatch(by int) {
	if n := len(r.matches); n > 0 {
		r.matchIdx = (r.matchIdx + by + n) % n
		r.jumpToMatch()
	}
}

// highlightMatch redraws the current match's line from its plain text with
// the matched words marked (reverse video, so it shows in every theme and
// with NO_COLOR).
func highlightMatch(mark lipgloss.Style, plain, query string) string {
	mark = mark.Reverse(true)
	lower := strings.ToLower(plain)
	i := strings.Index(lower, strings.ToLower(query))
	if i < 0 || len(lower) != len(plain) { // case folding changed the byte offsets
		return mark.Render(plain)
	}
	j := i + len(query)
	return plain[:i] + mark.Render(plain[i:j]) + plain[j:]
}
