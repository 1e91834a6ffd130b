package ui

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// sanitize makes untrusted text (web pages, PDFs, model output, API fields)
// safe to draw: terminal escape sequences are removed whole (so an OSC
// title-setter or a screen clear cannot act), then any remaining C0/C1
// control characters, DEL and bidi overrides are dropped. Newlines survive;
// tabs become spaces so width math stays right. ui does not import search,
// so it carries its own sanitizer.
func sanitize(s string) string {
	if isClean(s) {
		return s
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if strings.ContainsAny(s, "\x1b\u009b\u009d\u0090") {
		s = ansi.Strip(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteRune(r)
		case r == '\t':
			b.WriteString("    ")
		case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
			// control: dropped
		case isBidiControl(r):
			// reordering controls can disguise text: dropped
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
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

// isClean is the fast path: most text has nothing to remove, and the run
// screen sanitizes every streamed delta.
func isClean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\n':
		case c < 0x20, c == 0x7f:
			return false
		case c >= 0x80:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size <= 1 {
				return false
			}
			if r < 0xa0 || isBidiControl(r) {
				return false
			}
			i += size - 1
		}
	}
	return true
}

func isBidiControl(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c
}
