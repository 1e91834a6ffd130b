package pipeline

import (
	"strings"
	"unicode"

	"github.com/researchtui/researchtui/textkit"
)

// Lexical relevance that knows phrases. Single-word BM25 let "Turing" plus
// "language models" outweigh the phrase "Turing test"; a candidate is now
// also judged by which of the query's distinct terms it covers and which
// of its multi-word terms (adjacent content words of the sub-question, its
// queries, and the planner's canonical term) it contains as phrases. Both
// are shares of the query, so they mean the same in every pool.

// rankQuery is what a sub-question's candidates are judged by.
type rankQuery struct {
	words   []string           // distinct stemmed content words
	phrases map[string]float64 // "stem stem" → weight (the canonical term's weigh double)
}

// canonicalWeight is how much more a phrase of the planner's canonical
// term counts than one of the sub-question's or its queries'.
const canonicalWeight = 2

// newRankQuery builds the query from the canonical term and other texts
// (the sub-question, its queries).
func newRankQuery(canonical string, texts ...string) rankQuery {
	q := rankQuery{phrases: map[string]float64{}}
	seen := map[string]bool{}
	add := func(text string, weight float64) {
		toks := rankTokens(text)
		for i, t := range toks {
			if t == "" {
				continue
			}
			if !seen[t] {
				seen[t] = true
				q.words = append(q.words, t)
			}
			if i > 0 && toks[i-1] != "" {
				p := toks[i-1] + " " + t
				q.phrases[p] = max(q.phrases[p], weight)
			}
		}
	}
	add(canonical, canonicalWeight)
	for _, t := range texts {
		add(t, 1)
	}
	return q
}

// rankTokens are text's words for ranking: lower-case, split at anything
// that is not a letter or digit (so "Turing-complete" is two words),
// stemmed, with "" where a stop word or one-letter word breaks a phrase.
func rankTokens(s string) []string {
	ws := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	out := make([]string, len(ws))
	for i, w := range ws {
		if len(w) > 1 && !textkit.IsStopword(w) {
			out[i] = stem(w)
		}
	}
	return out
}

// docTerms is one candidate's text as ranking sees it.
type docTerms struct {
	words   []string // content stems, in order (for BM25)
	has     map[string]bool
	phrases map[string]bool
}

func newDocTerms(text string) docTerms {
	toks := rankTokens(text)
	d := docTerms{has: map[string]bool{}, phrases: map[string]bool{}}
	for i, t := range toks {
		if t == "" {
			continue
		}
		d.words = append(d.words, t)
		d.has[t] = true
		if i > 0 && toks[i-1] != "" {
			d.phrases[toks[i-1]+" "+t] = true
		}
	}
	return d
}

// coverage is the share of the query's distinct words the document has.
func (q rankQuery) coverage(d docTerms) float64 {
	if len(q.words) == 0 {
		return 0
	}
	n := 0
	for _, w := range q.words {
		if d.has[w] {
			n++
		}
	}
	return float64(n) / float64(len(q.words))
}

// phrase is the weighted share of the query's phrases the document holds.
func (q rankQuery) phrase(d docTerms) float64 {
	var got, all float64
	for p, w := range q.phrases {
		all += w
		if d.phrases[p] {
			got += w
		}
	}
	if all == 0 {
		return 0
	}
	return got / all
}
