package pipeline

import (
	"strings"
	"unicode"

	"github.com/researchtui/researchtui/textkit"
)

// stopwords are dropped from keyword queries.
var stopwords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the and or of in on for to with by from at as is are was were be been being
	what which who whom whose how why when where do does did can could should would will may might must
	this that these those it its their there than then about into over under between among vs versus
	i we you they he she me my our your his her them us not no yes also such any all some more most
	use used using effect effects role impact recent current state art review`) {
		stopwords[w] = true
	}
}

// words splits text into lower-case alphanumeric words.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-'
	})
}

// contentWords are the words that carry meaning: no stopwords, no
// one-letter words.
func contentWords(s string) []string {
	var out []string
	for _, w := range words(s) {
		w = strings.Trim(w, "-")
		if len(w) > 1 && !stopwords[w] {
			out = append(out, w)
		}
	}
	return out
}

// keywords returns up to n distinct content words of s, in order.
func keywords(s string, n int) string {
	seen := map[string]bool{}
	var out []string
	for _, w := range contentWords(s) {
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

// overlap is the fraction of a's content words that appear in b's.
func overlap(a string, bWords map[string]bool) float64 {
	aw := contentWords(a)
	if len(aw) == 0 {
		return 0
	}
	hit := 0
	for _, w := range aw {
		if bWords[w] {
			hit++
		}
	}
	return float64(hit) / float64(len(aw))
}

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range contentWords(s) {
		m[w] = true
	}
	return m
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
