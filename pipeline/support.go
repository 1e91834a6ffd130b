package pipeline

import (
	"math"

	"strings"

	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/textkit"
)

// Evidence matching: does a source say what a sentence says? The verifier
// decides by matching wherever matching can decide, and asks the model
// only about the sentences in between (verify.go).
//
// A source's passages are its chunks' sentences, alone and in pairs (a
// writer often joins two). A sentence's support in a passage is the
// IDF-weighted share of its content words (stemmed) that the passage
// contains: words every source uses weigh little, and words no source uses
// ("settles", "whole field") weigh most, so a sweeping claim finds no
// passage that covers it.

// Support thresholds on that share.
const (
	clearMatch = 0.7  // the sentence restates the passage: supported without a model
	clearMiss  = 0.35 // no passage comes close: not supported without a model
	// reciteMargin: another source's passage must cover this much more of
	// the sentence than the cited source's best to take its citation by
	// matching alone.
	reciteMargin = 0.2
)

// Evidence is a piece of a source's text that a sentence is checked against.
type Evidence struct {
	SourceKey string `json:"source_key"`
	ChunkID   string `json:"chunk_id"`
	Text      string `json:"text"`
}

type passageUnit struct {
	Evidence
	words map[string]bool // stemmed content words
}

// evidenceIndex holds the passages of the sources a report may cite, by
// source, and the document frequencies of their words.
type evidenceIndex struct {
	bySource map[string][]passageUnit
	df       map[string]int
	n        int
}

// newEvidenceIndex builds the index from each source's text pieces (its
// chunks' texts, by chunk ID).
func newEvidenceIndex(texts map[string][]ContextChunk) *evidenceIndex {
	ix := &evidenceIndex{bySource: map[string][]passageUnit{}, df: map[string]int{}}
	for key, chunks := range texts {
		for _, c := range chunks {
			var prev string
			for _, s := range search.Sentences(c.Text) {
				s = textkit.CleanLine(s)
				if s == "" {
					continue
				}
				ix.add(key, c.ID, s)
				if prev != "" {
					ix.add(key, c.ID, prev+" "+s)
				}
				prev = s
			}
		}
	}
	return ix
}

func (ix *evidenceIndex) add(key, chunkID, text string) {
	u := passageUnit{Evidence: Evidence{SourceKey: key, ChunkID: chunkID, Text: text}, words: stemSet(text)}
	ix.bySource[key] = append(ix.bySource[key], u)
	for w := range u.words {
		ix.df[w]++
	}
	ix.n++
}

func stemSet(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range stems(textkit.ContentWords(s)) {
		out[w] = true
	}
	return out
}

// idf weighs a word by how few passages hold it; a word no passage holds
// weighs most.
func (ix *evidenceIndex) idf(w string) float64 {
	return math.Log(1 + float64(ix.n+1)/float64(ix.df[w]+1))
}

// match is a sentence's best passage in one source and how much of the
// sentence it covers (0..1).
type match struct {
	Evidence
	Score float64
}

// best finds the passage of source key that covers most of the sentence.
func (ix *evidenceIndex) best(sentence, key string) match {
	ws := stemSet(sentence)
	total := 0.0
	for w := range ws {
		total += ix.idf(w)
	}
	var out match
	if total == 0 {
		return out
	}
	for _, u := range ix.bySource[key] {
		got := 0.0
		for w := range ws {
			if u.words[w] {
				got += ix.idf(w)
			}
		}
		if s := got / total; s > out.Score {
			out = match{Evidence: u.Evidence, Score: s}
		}
	}
	return out
}

// leading are a source's first n passages, in order.
func (ix *evidenceIndex) leading(key string, n int) []Evidence {
	var out []Evidence
	for _, u := range ix.bySource[key] {
		if len(out) == n {
			break
		}
		out = append(out, u.Evidence)
	}
	return out
}

// bestElsewhere is the best passage among all sources but those in skip.
func (ix *evidenceIndex) bestElsewhere(sentence string, skip map[string]bool) match {
	var out match
	for key := range ix.bySource {
		if skip[key] {
			continue
		}
		if m := ix.best(sentence, key); m.Score > out.Score || (m.Score == out.Score && m.SourceKey < out.SourceKey) {
			out = m
		}
	}
	return out
}

// Grounding with --verify off: a cited sentence counts as supported when
// enough of its words appear in what its source said.

// supportThreshold is the share of a sentence's content words that must
// appear in a cited source's evidence for the claim to count as supported.
const supportThreshold = 0.3

// sourceWords is the vocabulary of a numbered source's evidence: its
// abstract, its quotes and its retrieved chunks.
// grounding counts the cited sentences whose words are found in at least
// one cited source, and lists those that are not.
// The read side (pipeline/history) cuts sentences and reads citations
// exactly as the run did, so an exported report marks the sentences the
// verifier judged.
func (o *orchestrator) sourceWords(n int) map[string]bool {
	if n < 1 || n > len(o.st.Analyses) {
		return nil
	}
	an := o.st.Analyses[n-1]
	rec, _ := o.loadSource(an.SourceKey)
	var b strings.Builder
	b.WriteString(rec.Title + " " + rec.Abstract + " ")
	for _, q := range an.Quotes {
		b.WriteString(q.Text + " ")
	}
	for _, f := range an.KeyFindings {
		b.WriteString(f + " ")
	}
	for _, cs := range o.st.Contexts {
		for _, c := range cs {
			if c.SourceKey == an.SourceKey {
				b.WriteString(c.Text + " ")
			}
		}
	}
	return textkit.WordSet(b.String())
}

func (o *orchestrator) grounding(md string) (supported, total int, weak []string) {
	cache := map[int]map[string]bool{}
	for _, cs := range report.CitedSentences(md) {
		total++
		ok := false
		for _, n := range cs.Nums {
			if _, have := cache[n]; !have {
				cache[n] = o.sourceWords(n)
			}
			if textkit.Overlap(cs.Text, cache[n]) >= supportThreshold {
				ok = true
				break
			}
		}
		if ok {
			supported++
		} else {
			weak = append(weak, strings.TrimSpace(cs.Text))
		}
	}
	return supported, total, weak
}

func (o *orchestrator) unsupportedSentences(md string) []string {
	_, _, weak := o.grounding(md)
	return weak
}
