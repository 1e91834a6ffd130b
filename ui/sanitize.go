package ui

import (
	"strings"

	"github.com/researchtui/researchtui/textkit"
)

// sanitize makes untrusted text (web pages, PDFs, model output, API fields)
// safe to draw by the project's one rule (textkit.StripControls: escape
// sequences removed whole, C0/C1 controls, DEL, bidi controls and invalid
// UTF-8 dropped), and does one thing more for the TUI: tabs become spaces,
// so width math stays right. sanitizeLine is not textkit.CleanLine either:
// it folds whitespace only where a line break has to go, and keeps a
// one-line field's spaces (and its tabs, as spaces) as they are.
func sanitize(s string) string {
	s = textkit.StripControls(s) // returns s itself when there is nothing to remove
	if strings.Contains(s, "\t") {
		s = strings.ReplaceAll(s, "\t", "    ")
	}
	return s
}

// sanitizeLine is sanitize for single-line fields (titles, names, errors):
// line breaks become spaces so one field can't forge extra rows.
func sanitizeLine(s string) string {
	s = sanitize(s)
	if strings.ContainsAny(s, "\n") {
		s = strings.Join(strings.Fields(s), " ")
	}
	return s
}
