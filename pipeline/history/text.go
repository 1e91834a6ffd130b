package history

import "github.com/researchtui/researchtui/pipeline"

// wordSet is the set of s's content words.
func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range pipeline.ContentWords(s) {
		m[w] = true
	}
	return m
}

// truncateRunes cuts s to at most n runes, marking the cut.
func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
