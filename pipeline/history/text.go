package history

import "github.com/researchtui/researchtui/textkit"

// wordSet is the set of s's content words.
func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range textkit.ContentWords(s) {
		m[w] = true
	}
	return m
}
