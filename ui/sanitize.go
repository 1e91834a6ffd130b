package ui

import (
	"strings"

	"github.com/researchtui/researchtui/pipeline"
)

// sanitize makes untrusted text (web pages, PDFs, model output, API fields)
// safe to draw by the project's one rule (pipeline.SafeText: escape
// sequences removed whole, C0/C1 controls, DEL, bidi controls and invalid
// UTF-8 dropped); tabs then become spaces so width math stays right.
func sanitize(s string) string {
	s = pipeline.SafeText(s) // returns s itself when there is nothing to remove
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
