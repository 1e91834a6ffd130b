package pipeline

import (
	"strings"
	"unicode"

	"github.com/researchtui/researchtui/textkit"
)

// keywords returns up to n distinct content words of s, in order.
func keywords(s string, n int) string {
	seen := map[string]bool{}
	var out []string
	for _, w := range textkit.ContentWords(s) {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
			if len(out) == n {
				break
			}
		}
	}
	return strings.Join(out, " ")
}

// cleanQuery makes a model-written query safe to send: one line, no
// boolean syntax or quotes, bounded length.
func cleanQuery(s string) string {
	s = textkit.CleanLine(s)
	s = strings.NewReplacer(`"`, " ", "'", " ", "(", " ", ")", " ", " AND ", " ", " OR ", " ", " NOT ", " ").Replace(s)
	f := strings.Fields(s)
	if len(f) > 10 {
		f = f[:10]
	}
	return strings.Join(f, " ")
}

// plausible reports whether a model's short text looks like language: most
// of its characters are letters, digits or spaces and it has at least
// minWords words of three or more letters. It catches the brace-and-
// bracket soup that a broken or tiny model writes into valid JSON.
func plausible(s string, minWords int) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return false
	}
	good, all := 0, 0
	for _, r := range s {
		all++
		if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsSpace(r) || strings.ContainsRune("-,.?'():;/", r) {
			good++
		}
	}
	if float64(good) < 0.85*float64(all) {
		return false
	}
	return languageWords(s) >= minWords
}

// languageWords counts the words of real language in s: space-separated
// words of three or more letters, and pairs of characters of scripts that
// are written without spaces.
func languageWords(s string) int {
	n := 0
	for _, w := range strings.Fields(s) {
		letters, ideographs := 0, 0
		for _, r := range w {
			switch {
			case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
				ideographs++ // scripts written without spaces: two count as a word
			case unicode.IsLetter(r):
				letters++
			}
		}
		if letters >= 3 {
			n++
		}
		n += ideographs / 2
	}
	return n
}
