package textkit

import (
	"strconv"
	"strings"
)

// Clip cuts s to at most n runes, the last of them "…" when it cut
// (n must be at least 1).
func Clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// ClipWords is s in at most n runes, cut after a whole word and marked
// "…" when it is longer; a first word longer than half of n is cut
// inside, as Clip cuts.
func ClipWords(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	cut := string(r[:n-1])
	if i := strings.LastIndexByte(cut, ' '); i >= 0 && len([]rune(cut[:i])) > n/2 {
		cut = strings.TrimRight(cut[:i], " ,;:")
	}
	return cut + "…"
}

// Plural counts in words: "1 chunk", "3 chunks", "0 chunks".
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// FirstNonEmpty is the first of ss that is not "", or "".
func FirstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
