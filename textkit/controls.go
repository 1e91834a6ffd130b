package textkit

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// CleanText makes untrusted text (API fields, web pages, PDF text) safe to
// draw in a terminal: it strips terminal control sequences (CSI, OSC, DCS and
// friends, 7- and 8-bit forms), every other C0/C1 control except \n and \t,
// bidirectional overrides and invalid UTF-8. Runs of spaces and tabs become
// one space, line ends are trimmed, and more than one blank line becomes one.
func CleanText(s string) string {
	s = StripControls(s)
	var b strings.Builder
	b.Grow(len(s))
	newlines := 0
	space := false
	for _, r := range s {
		switch {
		case r == '\n':
			newlines++
			space = false
		case r == '\t' || unicode.IsSpace(r):
			space = true
		default:
			if b.Len() > 0 {
				if newlines > 0 {
					if newlines > 2 {
						newlines = 2
					}
					b.WriteString(strings.Repeat("\n", newlines))
				} else if space {
					b.WriteByte(' ')
				}
			}
			newlines, space = 0, false
			b.WriteRune(r)
		}
	}
	return b.String()
}

// CleanLine is CleanText for one-line fields (titles, names, abstracts):
// every whitespace run, newlines included, becomes one space.
func CleanLine(s string) string {
	return strings.Join(strings.Fields(StripControls(s)), " ")
}

// StripControls is the one rule for untrusted text (model output, API
// fields, web pages, PDFs) on its way to a terminal or to a file a terminal
// may show: escape sequences (CSI, OSC, DCS… in 7- and 8-bit forms) go
// whole, other C0/C1 controls but \n and \t, DEL, bidi controls, BOMs and
// invalid UTF-8 go; \r becomes \n (CRLF one \n); all other whitespace is
// kept, so Markdown written by a model keeps its indentation. Text with
// nothing to remove is returned as it is, without a copy.
func StripControls(s string) string {
	if !strings.ContainsFunc(s, needsCleaning) && utf8.ValidString(s) {
		return s
	}
	s = validUTF8(s)
	var b strings.Builder
	b.Grow(len(s))
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == 0x1b: // ESC
			i = skipEscape(rs, i)
		case r == 0x9b: // 8-bit CSI
			i = skipCSI(rs, i+1)
		case r == 0x9d || r == 0x90 || r == 0x98 || r == 0x9e || r == 0x9f: // 8-bit OSC, DCS, SOS, PM, APC
			i = skipString(rs, i+1)
		case r == '\r':
			if i+1 < len(rs) && rs[i+1] == '\n' {
				continue
			}
			b.WriteByte('\n')
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			// drop other C0/C1 controls
		case isBidiControl(r) || r == '\ufeff':
			// drop bidi overrides/isolates and BOMs
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// validUTF8 drops invalid bytes, except that a lone byte 0x80-0x9f is
// read as the C1 control it encodes in 8-bit terminals (0x9b is CSI), so
// the sequence it starts is removed whole below, not left as text.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1 && s[i] >= 0x80 && s[i] <= 0x9f:
			b.WriteRune(rune(s[i]))
		case r == utf8.RuneError && size == 1:
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func needsCleaning(r rune) bool {
	return r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r <= 0x9f || isBidiControl(r) || r == '\ufeff'
}

func isBidiControl(r rune) bool {
	return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x200e || r == 0x200f || r == 0x061c
}

// skipEscape returns the index of the last rune of the escape sequence that
// starts at rs[i] == ESC.
func skipEscape(rs []rune, i int) int {
	if i+1 >= len(rs) {
		return i
	}
	switch rs[i+1] {
	case '[':
		return skipCSI(rs, i+2)
	case ']', 'P', 'X', '^', '_':
		return skipString(rs, i+2)
	case '(', ')', '*', '+', '-', '.', '/', '#', '%', ' ':
		// designate charset and similar: ESC, intermediate, final
		if i+2 < len(rs) {
			return i + 2
		}
		return i + 1
	default:
		return i + 1 // two-character sequence (ESC c, ESC 7, ...)
	}
}

// skipCSI skips parameter and intermediate bytes and the final byte; j is
// the first rune after the introducer.
func skipCSI(rs []rune, j int) int {
	for ; j < len(rs); j++ {
		r := rs[j]
		if r >= 0x40 && r <= 0x7e {
			return j
		}
		if r < 0x20 || r > 0x7e {
			// malformed: stop before the unexpected rune
			return j - 1
		}
	}
	return len(rs) - 1
}

// skipString skips a control string (OSC, DCS, ...) up to BEL, ST (ESC \) or
// 8-bit ST; an unterminated string runs to the end of the text.
func skipString(rs []rune, j int) int {
	for ; j < len(rs); j++ {
		switch rs[j] {
		case 0x07, 0x9c:
			return j
		case 0x1b:
			if j+1 < len(rs) && rs[j+1] == '\\' {
				return j + 1
			}
			return j
		}
	}
	return len(rs) - 1
}
