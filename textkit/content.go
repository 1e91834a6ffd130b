package textkit

import (
	"strings"
	"unicode"
)

// stopwords are the words that carry no topic: dropped from keyword
// queries and from every word-overlap measure.
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

// IsStopword reports whether w (lower case) is a word that carries no
// topic.
func IsStopword(w string) bool { return stopwords[w] }

// Words splits text into lower-case alphanumeric words (hyphens kept).
func Words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-'
	})
}

// ContentWords are the words that carry meaning: no stopwords, no
// one-letter words.
func ContentWords(s string) []string {
	var out []string
	for _, w := range Words(s) {
		w = strings.Trim(w, "-")
		if len(w) > 1 && !stopwords[w] {
			out = append(out, w)
		}
	}
	return out
}

// WordSet is the set of s's content words.
func WordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range ContentWords(s) {
		m[w] = true
	}
	return m
}

// Overlap is the fraction of a's content words that appear in bWords.
func Overlap(a string, bWords map[string]bool) float64 {
	aw := ContentWords(a)
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
