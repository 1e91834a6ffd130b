package zotero

import (
	"strings"
	"unicode/utf8"

	"github.com/researchtui/researchtui/search/bib"
)

// What a library holds is untrusted text: a title pasted from a web page
// can carry terminal escapes, bidi overrides and broken UTF-8. Every string
// of an Item passes here: valid UTF-8 without control characters (the rule
// of search.StripControls, ARCHITECTURE.md §6, repeated because this
// package imports only search/bib), one-line fields with whitespace runs as
// one space, an abstract keeping its paragraphs (one "\n" between them, as
// search/bib keeps them), and bounds on sizes.
const (
	maxLine  = 4 << 10  // runes of a one-line field
	maxText  = 64 << 10 // runes of an abstract
	maxList  = 1_000    // tags, collections or files of one item
	maxNames = 10_000   // authors or editors of one item
)

func clean(it *bib.Item) {
	it.ID = cleanLine(it.ID)
	it.Type = cleanLine(it.Type)
	if it.Type == "" {
		it.Type = "document"
	}
	it.Title = cleanLine(it.Title)
	it.Authors = cleanNames(it.Authors)
	it.Editors = cleanNames(it.Editors)
	for _, p := range []*string{&it.Date, &it.Venue, &it.Volume, &it.Issue, &it.Pages, &it.Publisher,
		&it.DOI, &it.ISBN, &it.ISSN, &it.URL, &it.Language} {
		*p = cleanLine(*p)
	}
	it.Abstract = cleanText(it.Abstract)
	it.Tags = cleanList(it.Tags, cleanLine)
	it.Collections = cleanList(it.Collections, cleanLine)
	it.Files = cleanList(it.Files, cleanPath)
}

// cleanLine is a one-line field safe to show: no controls, every
// whitespace run one space, at most maxLine runes.
func cleanLine(s string) string {
	return truncate(strings.Join(strings.Fields(stripControls(s)), " "), maxLine)
}

// cleanText is an abstract: no controls but the newline between
// paragraphs, spaces collapsed within lines, no blank lines.
func cleanText(s string) string {
	var out []string
	for l := range strings.SplitSeq(stripControls(s), "\n") {
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			out = append(out, l)
		}
	}
	return truncate(strings.Join(out, "\n"), maxText)
}

// cleanPath is a file path: a path that needs cleaning is not a path to
// a file Zotero wrote but an attack or damage, so it is dropped whole.
func cleanPath(s string) string {
	if !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return isControl(r) || r == '\n' || r == '\t' }) ||
		utf8.RuneCountInString(s) > maxLine {
		return ""
	}
	return s
}

func cleanNames(names []bib.Name) []bib.Name {
	var out []bib.Name
	for _, n := range names {
		n = bib.Name{Family: cleanLine(n.Family), Given: cleanLine(n.Given), Literal: cleanLine(n.Literal)}
		if n.Literal != "" {
			n.Family, n.Given = "", ""
		}
		if n.Family == "" && n.Given == "" && n.Literal == "" {
			continue
		}
		if len(out) == maxNames {
			break
		}
		out = append(out, n)
	}
	return out
}

// cleanList cleans and drops empty and repeated entries, keeping order.
func cleanList(list []string, clean func(string) string) []string {
	var out []string
	seen := make(map[string]bool, len(list))
	for _, s := range list {
		s = clean(s)
		if s == "" || seen[s] {
			continue
		}
		if len(out) == maxList {
			break
		}
		seen[s] = true
		out = append(out, s)
	}
	return out
}

func truncate(s string, runes int) string {
	if len(s) <= runes {
		return s
	}
	n := 0
	for i := range s {
		if n == runes {
			return s[:i]
		}
		n++
	}
	return s
}

// stripControls removes escape sequences (CSI, OSC, DCS and the rest, 7-
// and 8-bit) whole, every other control but \n and \t, bidi overrides and
// byte-order marks, and invalid UTF-8; \r is a line end.
func stripControls(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, isControl) {
		return s
	}
	s = strings.ToValidUTF8(s, "")
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == 0x1b: // ESC
			i = skipEscape(s, i)
		case r == 0x9b: // 8-bit CSI
			i = skipCSI(s, i)
		case r == 0x90 || r == 0x98 || r == 0x9d || r == 0x9e || r == 0x9f: // DCS, SOS, OSC, PM, APC
			i = skipString(s, i)
		case r == '\r':
			if !strings.HasPrefix(s[i:], "\n") {
				b.WriteByte('\n')
			}
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case isControl(r):
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isControl(r rune) bool {
	return r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r <= 0x9f ||
		r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 ||
		r == 0x200e || r == 0x200f || r == 0x061c || r == 0xfeff
}

// skipEscape returns the index after the escape sequence whose ESC ends
// just before s[i].
func skipEscape(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '[':
		return skipCSI(s, i+1)
	case ']', 'P', 'X', '^', '_':
		return skipString(s, i+1)
	case '(', ')', '*', '+', '-', '.', '/', '#', '%', ' ':
		return min(i+2, len(s))
	}
	_, size := utf8.DecodeRuneInString(s[i:])
	return i + size
}

// skipCSI skips parameter and intermediate bytes and the final byte.
func skipCSI(s string, i int) int {
	for i < len(s) {
		c := s[i]
		i++
		if c >= 0x40 && c <= 0x7e || c < 0x20 || c >= 0x80 {
			return i
		}
	}
	return i
}

// skipString skips an OSC/DCS-like string up to BEL or ST (ESC \ or 0x9c).
func skipString(s string, i int) int {
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == 0x07 || r == 0x9c:
			return i
		case r == 0x1b:
			if i < len(s) && s[i] == '\\' {
				return i + 1
			}
			return i
		}
	}
	return i
}
