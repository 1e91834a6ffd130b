// Package texttest holds what tests of untrusted text share: a hostile
// string and a check that none of its controls reached what a person sees.
package texttest

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// Evil is what a hostile model or web page writes: an OSC 52 clipboard
// write, a screen clear, an OSC 8 link, an 8-bit CSI, a BEL and bidi
// overrides that reorder what a reader sees.
const Evil = "\x1b]52;c;ZXZpbA==\x07\x1b[2J\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\\u009b31m\u202egnp.exe\u202c\u2066x\u2069\a"

// Hostile finds what a terminal would act on or reorder in s, a program's
// output: ESC, BEL and other C0 controls (but \n, \t and \r), DEL, C1
// controls (as runes or raw bytes) and bidi controls. It returns the text
// around the first one, or "" when there is none.
func Hostile(s string) string { return hostile(s, "\n\t\r") }

// SGR matches the styling a TUI draws itself (Select Graphic Rendition).
var SGR = regexp.MustCompile(`\x1b\[[0-9;:]*m`)

// HostileView is Hostile for a drawn TUI view: the view's own SGR styling
// is allowed, and \t and \r are not (in a cell grid they move the cursor).
func HostileView(view string) string { return hostile(SGR.ReplaceAllString(view, ""), "\n") }

func hostile(s, allowed string) string {
	around := func(i int) string { return s[max(0, i-40):min(len(s), i+40)] }
	for i, r := range s {
		switch {
		case r < 0x20 && !strings.ContainsRune(allowed, r), r == 0x7f, r >= 0x80 && r <= 0x9f:
			return around(i)
		case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
			return around(i)
		case r == utf8.RuneError && s[i] >= 0x80 && s[i] <= 0x9f: // a raw C1 byte (0x9b is CSI)
			return around(i)
		}
	}
	return ""
}
