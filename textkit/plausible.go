package textkit

import (
	"strings"
	"unicode"
)

// Plausible reports whether a model's short text looks like language: most
// of its characters are letters, digits or spaces and it has at least
// minWords words of three or more letters. It catches the brace-and-
// bracket soup that a broken or tiny model writes into valid JSON.
func Plausible(s string, minWords int) bool {
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
	return LanguageWords(s) >= minWords
}

// LanguageWords counts the words of real language in s: space-separated
// words of three or more letters, and pairs of characters of scripts that
// are written without spaces.
func LanguageWords(s string) int {
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
