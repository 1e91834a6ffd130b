package pipeline

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/researchtui/researchtui/pipeline/report"
)

// A sentence can hold a passage's words and still not say what it says:
// "The best-performing GPT-4 prompt passed in 49 [2]." where the source
// says 49.7% of games, or "Although this problem is well-studied for
// decomposable distances, i [17]." cut mid-word (issue 46). Such a
// sentence is not supported, whatever its words.

// number is a number as a sentence writes it: 49, 49.7, 1,000, 3.5e-4.
var number = regexp.MustCompile(`\d[\d,]*(?:\.\d+)?`)

// numbersHeld says whether every number of sentence (citations, and years
// from 1900 to 2099, which a writer adds when it names a work, aside)
// stands in passage as the same number: "49" is not held by "49.7%".
func numbersHeld(sentence, passage string) bool {
	s := report.CiteGroup.ReplaceAllString(sentence, " ")
	have := map[string]bool{}
	for _, n := range number.FindAllString(passage, -1) {
		have[normNumber(n)] = true
	}
	for _, loc := range number.FindAllStringIndex(s, -1) {
		n := normNumber(s[loc[0]:loc[1]])
		if isYear(n) || have[n] {
			continue
		}
		if loc[0] > 0 && unicode.IsLetter(rune(s[loc[0]-1])) {
			continue // part of a name: "GPT4", "H2O", "L2"
		}
		return false
	}
	return true
}

// normNumber drops thousands separators and a trailing comma or stop.
func normNumber(n string) string {
	return strings.ReplaceAll(strings.TrimRight(n, ",."), ",", "")
}

func isYear(n string) bool {
	return len(n) == 4 && (strings.HasPrefix(n, "19") || strings.HasPrefix(n, "20"))
}

// fragmentEnd is a sentence that ends on a cut word: one letter (not "a"
// or "I") before its citation or stop.
var fragmentEnd = regexp.MustCompile(`(?:^|\s)([b-zB-HJ-Z])\s*(?:\[[\d,;\s–-]+\]\s*)*[.!?]?\s*$`)

// fragment says whether sentence is a piece of one: it starts inside
// LaTeX or a bracket ("O}\left(n^{2}\right)$ time…"), or ends on a cut
// word ("… distances, i [17].").
func fragment(sentence string) bool {
	s := strings.TrimSpace(report.StripListMarker(sentence))
	if s == "" {
		return false
	}
	switch s[0] {
	case '}', ')', ']', '\\', '$', '^', '_':
		return true
	}
	return lowerStart(s) || fragmentEnd.MatchString(s) || unbalanced(report.CiteGroup.ReplaceAllString(s, ""))
}

// nameParticles open a family name written in lower case.
var nameParticles = map[string]bool{"van": true, "von": true, "de": true, "der": true, "den": true, "du": true, "da": true,
	"di": true, "del": true, "della": true, "le": true, "la": true, "ten": true, "ter": true, "dos": true, "das": true, "bin": true, "al": true}

// lowerStart says a sentence starts mid-sentence of its source: on a
// word in lower case ("dimensions were then computed …"), not on a term
// written so (mRNA, k-means, p-values, iOS, e.g.).
func lowerStart(s string) bool {
	w, rest, _ := strings.Cut(s, " ")
	if w == "" || strings.ContainsAny(w, "-.0123456789'’") {
		return false
	}
	for p, words := w, strings.Fields(rest); nameParticles[p] && len(words) > 0; p, words = words[0], words[1:] {
		if r := []rune(words[0]); unicode.IsUpper(r[0]) {
			return false // "van der Waals showed …", "de Gennes found …": a name
		}
	}
	for i, r := range w {
		if i == 0 && !unicode.IsLower(r) || unicode.IsUpper(r) {
			return false
		}
	}
	return true
}

// unbalanced says a sentence closes a brace it never opened, or holds an
// odd number of "$": it was cut out of LaTeX ("O}\left(n^{2}\right)$").
func unbalanced(s string) bool {
	depth := 0
	for _, r := range s {
		switch r {
		case '{':
			depth++
		case '}':
			if depth == 0 {
				return true
			}
			depth--
		}
	}
	// An odd "$" means math cut in two only where there is math: "$5 a
	// run" is a price.
	return strings.Count(s, "$")%2 == 1 && strings.ContainsAny(s, `\^{}`)
}
