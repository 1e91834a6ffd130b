package bib

import (
	"bytes"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/researchtui/researchtui/textkit"
)

// decodeInput turns a file's bytes into text. Reference managers write
// UTF-8, but JabRef also writes Windows-1252 ("% Encoding: Cp1252") and
// UTF-16, and old BibTeX files are Latin-1: a byte that is not UTF-8 is read
// as Windows-1252, so "Müller" survives either way instead of becoming U+FFFD.
func decodeInput(data []byte) string {
	switch {
	case len(data) >= 2 && data[0] == 0xff && data[1] == 0xfe:
		return decodeUTF16(data[2:], false)
	case len(data) >= 2 && data[0] == 0xfe && data[1] == 0xff:
		return decodeUTF16(data[2:], true)
	case len(data) >= 4 && data[0] != 0 && data[1] == 0 && data[2] != 0 && data[3] == 0:
		return decodeUTF16(data, false)
	case len(data) >= 4 && data[0] == 0 && data[1] != 0 && data[2] == 0 && data[3] != 0:
		return decodeUTF16(data, true)
	}
	s := string(data)
	s = strings.TrimPrefix(s, "\ufeff")
	if !strings.Contains(s, "\n") && strings.Contains(s, "\r") {
		s = strings.ReplaceAll(s, "\r", "\n") // classic Mac OS line ends (old EndNote)
	}
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			if c := cp1252(s[i]); c != 0 {
				b.WriteRune(c)
			}
			i++
			continue
		}
		b.WriteString(s[i : i+size])
		i += size
	}
	return b.String()
}

// inputBytes is decodeInput's text as bytes: data itself, not a copy,
// when it is UTF-8 that decodeInput would leave as it is.
func inputBytes(data []byte) []byte {
	switch {
	case len(data) >= 2 && (data[0] == 0xff && data[1] == 0xfe || data[0] == 0xfe && data[1] == 0xff),
		len(data) >= 4 && (data[1] == 0 && data[3] == 0 || data[0] == 0 && data[2] == 0),
		bytes.HasPrefix(data, []byte("\ufeff")),
		bytes.IndexByte(data, '\n') < 0 && bytes.IndexByte(data, '\r') >= 0,
		!utf8.Valid(data):
		return []byte(decodeInput(data))
	}
	return data
}

func decodeUTF16(data []byte, bigEndian bool) string {
	u := make([]uint16, len(data)/2)
	for i := range u {
		if bigEndian {
			u[i] = uint16(data[2*i])<<8 | uint16(data[2*i+1])
		} else {
			u[i] = uint16(data[2*i+1])<<8 | uint16(data[2*i])
		}
	}
	return strings.TrimPrefix(string(utf16.Decode(u)), "\ufeff")
}

// cp1252 is the character of a Windows-1252 byte (0 for the five unused).
func cp1252(c byte) rune {
	if c < 0x80 || c >= 0xa0 {
		return rune(c)
	}
	return []rune("€\x00‚ƒ„…†‡ˆ‰Š‹Œ\x00Ž\x00\x00‘’“”•–—˜™š›œ\x00žŸ")[c-0x80]
}

// isControl reports a rune textkit.StripControls removes (a control but
// \n and \t, a bidi control, a BOM): CleanLine's fast path asks it of each
// rune to tell a field that is clean already, without a copy.
func isControl(r rune) bool {
	return r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r <= 0x9f ||
		r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 ||
		r == 0x200e || r == 0x200f || r == 0x061c || r == 0xfeff
}

// CleanLine is a one-line field (a title, a name, a venue) safe to draw:
// no controls, every whitespace run one space, at most maxLine runes.
// Most fields are clean already and are returned without a copy: a
// library of 100,000 items has a million of them.
func CleanLine(s string) string {
	if isCleanLine(s) {
		return Truncate(s, maxLine)
	}
	return Truncate(strings.Join(strings.Fields(textkit.StripControls(s)), " "), maxLine)
}

// isCleanLine reports whether s is what CleanLine would make of it, cut
// aside: valid UTF-8 with no controls, words separated by one ASCII space,
// no space at either end.
func isCleanLine(s string) bool {
	space := true // a space here would start the line
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c < ' ' || c == 0x7f:
				return false
			case c == ' ' && space:
				return false
			}
			space = c == ' '
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || isControl(r) || unicode.IsSpace(r) {
			return false
		}
		space = false
		i += size
	}
	return !space || s == ""
}

// cleanText is a multi-line field (an abstract): no controls, spaces
// collapsed within lines, paragraphs kept, at most one blank line in a row.
func cleanText(s string) string {
	if isCleanLine(s) {
		return Truncate(s, maxText) // one clean line: nothing to collapse
	}
	lines := strings.Split(textkit.StripControls(s), "\n")
	out := lines[:0]
	blank := false
	for _, l := range lines {
		l = strings.Join(strings.Fields(l), " ")
		if l == "" {
			blank = len(out) > 0
			continue
		}
		if blank {
			out = append(out, "")
			blank = false
		}
		out = append(out, l)
	}
	return Truncate(strings.Join(out, "\n"), maxText)
}

// cleanPath is a file path: no controls or line breaks (a path with a
// newline is an attack, not a file), spaces inside kept as they are.
func cleanPath(s string) string {
	if strings.ContainsAny(s, "\n\r") {
		return "" // mended, it would name another file: dropped
	}
	s = strings.Map(func(r rune) rune {
		if r == '\t' {
			return -1
		}
		return r
	}, textkit.StripControls(s))
	return Truncate(strings.TrimSpace(s), maxLine)
}

// Truncate cuts s to at most runes runes.
func Truncate(s string, runes int) string {
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

// cleanList cleans, drops empty and repeated entries, and caps a list.
func cleanList(list []string, clean func(string) string) []string {
	if len(list) == 0 {
		return nil
	}
	out := make([]string, 0, min(len(list), maxList))
	seen := make(map[string]bool, min(len(list), maxList))
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
	if len(out) == 0 {
		return nil
	}
	return out
}

func cleanNames(names []Name) []Name {
	if len(names) == 0 {
		return nil
	}
	out := make([]Name, 0, min(len(names), maxNames))
	for _, n := range names {
		n = Name{Family: CleanLine(n.Family), Given: CleanLine(n.Given), Literal: CleanLine(n.Literal), Suffix: CleanLine(n.Suffix)}
		if n.Literal != "" {
			n.Family, n.Given, n.Suffix = "", "", ""
		}
		if n.Family == "" && n.Given == "" && n.Literal == "" {
			continue
		}
		if len(out) == maxNames {
			break
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Clean makes every string of an item safe to show and store, whichever
// reader made it: the one place the rule for untrusted text is applied.
func (it *Item) Clean() {
	it.ID = CleanLine(it.ID)
	it.Type = CleanLine(it.Type)
	if it.Type == "" {
		it.Type = "document"
	}
	it.Title = CleanLine(it.Title)
	it.Authors = cleanNames(it.Authors)
	it.Editors = cleanNames(it.Editors)
	it.Date = CleanLine(it.Date)
	if it.Year < -9999 || it.Year > 9999 {
		it.Year = 0
	}
	if it.Date == "" && it.Year != 0 {
		it.Date = yearString(it.Year)
	}
	for _, p := range []*string{&it.Venue, &it.Volume, &it.Issue, &it.Pages, &it.Publisher,
		&it.DOI, &it.ISBN, &it.ISSN, &it.URL, &it.Language} {
		*p = CleanLine(*p)
	}
	it.Abstract = cleanText(it.Abstract)
	it.Tags = cleanList(it.Tags, CleanLine)
	it.Collections = cleanList(it.Collections, CleanLine)
	it.Files = cleanList(it.Files, cleanPath)
}

func yearString(y int) string {
	if y < 0 {
		return fmt.Sprintf("-%04d", -y)
	}
	return fmt.Sprintf("%04d", y)
}

// splitList splits a keyword-like field on any of seps, into at most
// twice maxList parts (a million keywords in one field are an attack).
func splitList(s, seps string) []string {
	var out []string
	for len(out) < 2*maxList {
		i := strings.IndexAny(s, seps)
		if i < 0 {
			break
		}
		if f := s[:i]; strings.TrimSpace(f) != "" {
			out = append(out, f)
		}
		s = s[i+1:]
	}
	if strings.TrimSpace(s) != "" && len(out) < 2*maxList {
		out = append(out, s)
	}
	return out
}

// isLowerWord reports whether a word's first letter is lower case: how
// BibTeX tells a particle ("van", "de la") from a given or family name.
func isLowerWord(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) {
			return unicode.IsLower(r)
		}
	}
	return false
}
