package report

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/researchtui/researchtui/textkit"
)

// Text from outside (titles, venues and authors from the open web, and the
// model's prose, which quotes abstracts) reaches a Markdown report that is
// exported, rendered in a terminal and opened in browsers. It must stay
// text: no image that loads when the file is opened, no link whose words
// hide where it goes, no raw HTML for a Markdown viewer to run.

// MDText is untrusted text made safe for one line of Markdown, a table
// cell included: one line, and every character Markdown could read as
// syntax (links, images, emphasis, raw HTML, a cell's bars) escaped.
func MDText(s string) string {
	s = textkit.CleanLine(s)
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\`*_{}[]<>!|~", r) { // "(" is safe once "]" is escaped
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// MDURL is a reference's address as Markdown may print it: http(s) only,
// with every character that could close or open Markdown syntax
// percent-encoded; anything else is left out.
func MDURL(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	return MDPathEscape(u.String())
}

// MDPathEscape percent-encodes what Markdown (or a terminal) could read
// as syntax inside an address.
func MDPathEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r <= ' ' || r == 0x7f || strings.ContainsRune("\\`*_{}[]<>!|~()\"'", r):
			for _, c := range []byte(string(r)) {
				fmt.Fprintf(&b, "%%%02X", c)
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// PlainReference is a reference's Markdown as plain text, for a terminal
// line or the clipboard: escapes undone, italics markers dropped.
func PlainReference(md string) string {
	var b strings.Builder
	escaped := false
	for _, r := range md {
		switch {
		case escaped:
			b.WriteRune(r)
			escaped = false
		case r == '\\':
			escaped = true
		case r == '*':
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
