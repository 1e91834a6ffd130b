package search

import (
	"html"
	"strings"

	"github.com/researchtui/researchtui/textkit"
)

// MetaText is a metadata field as a record keeps it: HTML entities that
// the scholarly APIs leave in titles, venues and names ("Chaos, Solitons
// &amp; Fractals") decoded once, then cleaned to one line by the one rule
// for untrusted text (textkit.CleanLine, ARCHITECTURE.md §6). Applied
// where records are made, never twice.
func MetaText(s string) string {
	if strings.Contains(s, "&") {
		s = html.UnescapeString(s)
	}
	return textkit.CleanLine(s)
}
