package pipeline

import (
	"math"
	"sort"
	"strings"

	"github.com/researchtui/researchtui/search"
)

// Candidate is one search result considered for a sub-question, with its
// relevance score and why it was or was not read. Every candidate is kept
// (checkpoint "candidates", `sessions show --json`), so a person can see
// what was passed over and why.
type Candidate struct {
	Key      string  `json:"key"`
	SubQ     string  `json:"subq"`
	Title    string  `json:"title"`
	Source   string  `json:"source"`
	Year     int     `json:"year,omitempty"`
	Score    float64 `json:"score"`    // blended relevance, 0..1
	Semantic float64 `json:"semantic"` // cosine of title+abstract with the sub-question (and question)
	Lexical  float64 `json:"lexical"`  // BM25 over the pool, as a share of the pool's best
	Read     bool    `json:"read"`
	Reason   string  `json:"reason"`
	// Round is the round of research that found it (1 is the first);
	// Origin how: "search: arxiv", "knowledge base", "query: …" (a later
	// round's query), "reference of <key>" or "cites <key>".
	Round  int    `json:"round"`
	Origin string `json:"origin"`
}

// Ranking weights and cut-offs.
const (
	semanticWeight = 0.7 // the rest is lexical
	// farBelow: a candidate scoring under this share of the sub-question's
	// best is not read even when reading slots are free.
	farBelow = 0.4
	// flatRange: when every candidate's similarity lies within this range,
	// the embedding can't tell them apart and only the lexical score ranks.
	flatRange = 0.02
)

// Reasons a candidate was or was not read.
const (
	reasonRead       = "read: among the most relevant"
	reasonQuota      = "not read: more relevant sources filled the reading slots"
	reasonFarBelow   = "not read: far less relevant than the best candidate"
	reasonDuplicate  = "read for another sub-question"
	reasonRunCap     = "not read: the run's reading limit was reached"
	reasonStructured = "read: structured data"
)

// candidateText is what a candidate is judged by (and, for sources read
// from their abstract, exactly the text of their one chunk, so its
// embedding is shared with the index).
func candidateText(r search.Record) string { return abstractText(r) }

// scoreCandidates scores records against a sub-question. vecs are the
// candidates' embeddings (nil entries, or vecs nil, when embedding failed:
// then only the lexical score counts); queryVecs are the sub-question's and
// the question's embeddings (the first weighs most).
func scoreCandidates(recs []search.Record, vecs [][]float32, queryVecs [][]float32, terms []string) []Candidate {
	out := make([]Candidate, len(recs))
	docs := make([][]string, len(recs))
	for i, r := range recs {
		docs[i] = stems(contentWords(candidateText(r)))
		out[i] = Candidate{Key: r.Key, Title: r.Title, Source: r.Source, Year: r.Year}
	}
	lex := bm25(docs, stems(terms))
	best := 0.0
	for _, s := range lex {
		best = math.Max(best, s)
	}
	sem := make([]float64, len(recs))
	lo, hi := math.Inf(1), math.Inf(-1)
	haveSem := false
	for i := range recs {
		if i >= len(vecs) || vecs[i] == nil || len(queryVecs) == 0 {
			continue
		}
		s := 0.0
		wsum := 0.0
		for j, q := range queryVecs {
			w := 1.0
			if j > 0 {
				w = 0.4 // the whole question matters, the sub-question more
			}
			s += w * cosine(vecs[i], q)
			wsum += w
		}
		sem[i] = s / wsum
		lo, hi = math.Min(lo, sem[i]), math.Max(hi, sem[i])
		haveSem = true
	}
	for i := range out {
		if best > 0 {
			out[i].Lexical = lex[i] / best
		}
		out[i].Semantic = sem[i]
		switch {
		case haveSem && hi-lo > flatRange:
			// Similarities are rescaled within the pool: embedding models
			// differ in where "related" starts, but within one pool the
			// order and the spread are what matter.
			out[i].Score = semanticWeight*(sem[i]-lo)/(hi-lo) + (1-semanticWeight)*out[i].Lexical
		default:
			out[i].Score = out[i].Lexical
		}
	}
	return out
}

// selectCandidates orders candidates best first and marks which to read:
// at most quota, none far below the best. Structured-data records are
// always read (they are facts, not prose to rank).
func selectCandidates(cands []Candidate, recs map[string]search.Record, quota int) []Candidate {
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].Score > cands[j].Score })
	best := 0.0
	if len(cands) > 0 {
		best = cands[0].Score
	}
	taken := 0
	for i := range cands {
		c := &cands[i]
		switch {
		case recs[c.Key].HasData():
			c.Read, c.Reason = true, reasonStructured
		case taken >= quota:
			c.Reason = reasonQuota
		case best > 0 && c.Score < farBelow*best:
			c.Reason = reasonFarBelow
		default:
			c.Read, c.Reason = true, reasonRead
			taken++
		}
	}
	return cands
}

func cosine(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// bm25 scores each document of a small pool for the query terms (Okapi
// BM25, k1 1.2, b 0.75, IDF from the pool itself).
func bm25(docs [][]string, terms []string) []float64 {
	const k1, b = 1.2, 0.75
	n := float64(len(docs))
	out := make([]float64, len(docs))
	if n == 0 || len(terms) == 0 {
		return out
	}
	df := map[string]int{}
	tfs := make([]map[string]int, len(docs))
	total := 0
	for i, d := range docs {
		tfs[i] = map[string]int{}
		for _, w := range d {
			tfs[i][w]++
		}
		for w := range tfs[i] {
			df[w]++
		}
		total += len(d)
	}
	avg := math.Max(float64(total)/n, 1)
	seen := map[string]bool{}
	for _, t := range terms {
		if seen[t] {
			continue
		}
		seen[t] = true
		if df[t] == 0 {
			continue
		}
		idf := math.Log(1 + (n-float64(df[t])+0.5)/(float64(df[t])+0.5))
		for i, d := range docs {
			tf := float64(tfs[i][t])
			if tf == 0 {
				continue
			}
			out[i] += idf * tf * (k1 + 1) / (tf + k1*(1-b+b*float64(len(d))/avg))
		}
	}
	return out
}

// stems folds plurals and a few common endings so "patterns" meets
// "pattern" and "forming" meets "form"; crude, but only for ranking.
func stems(ws []string) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = stem(w)
	}
	return out
}

func stem(w string) string {
	for _, suf := range []string{"ies", "ing", "ed", "s"} {
		if strings.HasSuffix(w, suf) && len(w)-len(suf) >= 4 && !strings.HasSuffix(w, "ss") {
			w = strings.TrimSuffix(w, suf)
			if suf == "ies" {
				w += "y"
			}
			return w
		}
	}
	return w
}

// rankTerms are the words a sub-question's candidates are judged by: the
// sub-question, its queries and the canonical term.
func rankTerms(sq SubQuestion, canonical string) []string {
	return contentWords(strings.Join([]string{sq.Question, sq.Queries.Strict, sq.Queries.Moderate, canonical}, " "))
}
