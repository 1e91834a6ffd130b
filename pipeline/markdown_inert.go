package pipeline

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

// mdText is untrusted text made safe for one line of Markdown, a table
// cell included: one line, and every character Markdown could read as
// syntax (links, images, emphasis, raw HTML, a cell's bars) escaped.
func mdText(s string) string {
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

// mdURL is a reference's address as Markdown may print it: http(s) only,
// with every character that could close or open Markdown syntax
// percent-encoded; anything else is left out.
func mdURL(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	return mdPathEscape(u.String())
}

// mdPathEscape percent-encodes what Markdown (or a terminal) could read
// as syntax inside an address.
func mdPathEscape(s string) string {
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

// inertProse keeps the model's Markdown (headings, lists, emphasis,
// tables, [n] citations) but takes from it what could load or hide
// anything: raw HTML and autolinks, images, and links, whose words then
// show as written. Code blocks are left as they are: nothing in them is
// read as Markdown. Text already escaped stays as it is, so a follow-up
// can pass the report through again.
func inertProse(md string) string {
	lines := strings.Split(md, "\n")
	fenced := false
	for i, l := range lines {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fenced = !fenced
			continue
		}
		if !fenced {
			lines[i] = inertLine(l)
		}
	}
	return strings.Join(lines, "\n")
}

// inertLine escapes "<" where raw HTML or an autolink would begin, "![",
// and "](" or "]:" where a link's address would.
func inertLine(l string) string {
	var b strings.Builder
	for i := 0; i < len(l); i++ {
		c := l[i]
		var next byte
		if i+1 < len(l) {
			next = l[i+1]
		}
		switch {
		case c == '\\' && next != 0:
			b.WriteByte(c)
			b.WriteByte(next)
			i++
			continue
		case c == '<' && (isASCIILetter(next) || strings.IndexByte("/!?", next) >= 0):
			b.WriteString(`\<`)
			continue
		case c == '!' && next == '[':
			b.WriteString(`!\[`)
			i++
			continue
		case c == ']' && (next == '(' || next == ':'):
			b.WriteString(`\]`)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

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
