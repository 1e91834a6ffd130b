package pipeline

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"unicode"

	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/textkit"
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
	Score    float64 `json:"score"`    // blended relevance within the pool, 0..1: the reading order
	Semantic float64 `json:"semantic"` // cosine of title+abstract with the sub-question (and question)
	Lexical  float64 `json:"lexical"`  // BM25 over the pool, as a share of the pool's best
	// Coverage is the share of the query's distinct words the candidate
	// has; Phrase the weighted share of its multi-word terms it holds
	// (rank.go). Neither depends on the rest of the pool.
	Coverage float64 `json:"coverage"`
	Phrase   float64 `json:"phrase"`
	// Relevance is the absolute score (raw similarity, coverage and
	// phrases), compared with Floor: the sub-question's floor, calibrated
	// on its first round, that every later round must clear too.
	Relevance float64 `json:"relevance"`
	Floor     float64 `json:"floor"`
	// Screen is the relevance screen's verdict on a candidate that was
	// about to be read ("on topic", "off topic: GPU hardware"); empty
	// when it was not screened (screening.go).
	Screen string `json:"screen,omitempty"`
	Read   bool   `json:"read"`
	Reason string `json:"reason"`
	// Retracted: the work was retracted (it may be read, never support).
	Retracted bool `json:"retracted,omitempty"`
	// Round is the round of research that found it (1 is the first);
	// Origin how: "search: arxiv", "knowledge base", "query: …" (a later
	// round's query), "reference of <key>" or "cites <key>".
	Round int `json:"round"`
	// Update is the living-review check that found it (update.go); 0 for
	// the run's own rounds.
	Update int    `json:"update,omitempty"`
	Origin string `json:"origin"`
	// Library names the person's library the work is in ("zotero", a
	// file's name); "" for a work only found online.
	Library string `json:"library,omitempty"`
}

// Ranking weights and cut-offs.
const (
	semanticWeight = 0.3 // the rest is lexical
	// farBelow: a candidate scoring under this share of the sub-question's
	// best is not read even when reading slots are free.
	farBelow = 0.4
	// nearBest: past a sub-question's first few, a candidate is read only
	// when it scores at least this share of the best (selectCandidates).
	nearBest = 0.6
	// flatRange: when every candidate's similarity lies within this range,
	// the embedding can't tell them apart and only the lexical score ranks.
	flatRange = 0.02
)

// Reasons a candidate was or was not read.
const (
	reasonRead       = "read: among the most relevant"
	reasonQuota      = "not read: more relevant sources filled the reading slots"
	reasonPlan       = "read: among the most relevant of the run" // reading_plan.go
	reasonFarBelow   = "not read: far less relevant than the best candidate"
	reasonNotNear    = "not read: past the few best, and not close to them"
	reasonDuplicate  = "read for another sub-question"
	reasonRunCap     = "not read: the run's reading limit was reached"
	reasonStructured = "read: structured data"
	reasonNoText     = "not read: no text to read"
	reasonBelowFloor = "not read: below the relevance floor"
	reasonUnrelated  = "not read: no word of the query, and far less similar than the best"
	reasonPastCap    = "not read: past the best candidates the screen judges"
	reasonOffTopic   = "not read: the relevance screen judged it off topic"
	reasonUnjudged   = "not read: the relevance screen did not judge it"
	reasonNotAWork   = "not read: front matter or a whole volume, not a work"
)

// candidateText is what a candidate is judged by (and, for sources read
// from their abstract, exactly the text of their one chunk, so its
// embedding is shared with the index).
func candidateText(r search.Record) string { return abstractText(r) }

// Weights of the absolute relevance: raw similarity, coverage, phrases.
const (
	relSemantic = 0.4
	relCoverage = 0.3
	relPhrase   = 0.3
)

// Floors. A sub-question's floor is floorShare of the mean relevance of
// what its first round would read (so it is calibrated on the embedding
// model in use and the question's vocabulary), never below minRelevance;
// later rounds and chased references must clear the same floor, so they
// compete with what the run has already read, not only with each other.
const (
	floorShare   = 0.7
	minRelevance = 0.12
)

// scoreCandidates scores records against a sub-question. vecs are the
// candidates' embeddings (nil entries, or vecs nil, when embedding failed:
// then only the lexical score counts); queryVecs are the sub-question's and
// the question's embeddings (the first weighs most).
func scoreCandidates(recs []search.Record, vecs [][]float32, queryVecs [][]float32, q rankQuery) []Candidate {
	out := make([]Candidate, len(recs))
	docs := make([][]string, len(recs))
	terms := make([]docTerms, len(recs))
	for i, r := range recs {
		terms[i] = newDocTerms(candidateText(r))
		docs[i] = terms[i].words
		out[i] = Candidate{Key: r.Key, Title: r.Title, Source: r.Source, Year: r.Year, Retracted: r.Retracted, Library: r.Library}
	}
	lex := bm25(docs, q.words)
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
		c := &out[i]
		if best > 0 {
			c.Lexical = lex[i] / best
		}
		c.Coverage, c.Phrase = q.coverage(terms[i]), q.phrase(terms[i])
		c.Semantic = sem[i]
		// Words: frequency (BM25) and coverage of the query's terms, and
		// its phrases above both, so "Turing test" beats "Turing" plus
		// "language models".
		words := 0.2*c.Lexical + 0.3*c.Coverage + 0.5*c.Phrase
		if haveSem {
			c.Relevance = relSemantic*math.Max(0, sem[i]) + relCoverage*c.Coverage + relPhrase*c.Phrase
		} else {
			c.Relevance = (relCoverage*c.Coverage + relPhrase*c.Phrase) / (relCoverage + relPhrase)
		}
		switch {
		case haveSem && hi-lo > flatRange:
			// Similarities are rescaled within the pool for the order:
			// embedding models differ in where "related" starts, but
			// within one pool the order and the spread are what matter.
			c.Score = semanticWeight*(sem[i]-lo)/(hi-lo) + (1-semanticWeight)*words
		default:
			c.Score = words
		}
	}
	return out
}

// hasText reports whether a candidate has anything to read: an abstract,
// a full-text link (a PDF, or the page a web result links to, which the
// reader fetches), structured data or a local file. A title alone is not
// evidence; such a candidate is listed, never read, analysed or cited.
func hasText(r search.Record) bool {
	return r.Abstract != "" || r.PDFURL != "" || r.HasData() || r.Path != "" || (r.Source == "web" && r.URL != "")
}

// calibrateFloor is a first round's floor for a sub-question: floorShare
// of the mean relevance of the quota best readable candidates.
func calibrateFloor(cands []Candidate, recs map[string]search.Record, quota int) float64 {
	sorted := append([]Candidate(nil), cands...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Score > sorted[j].Score })
	sum, n := 0.0, 0
	for _, c := range sorted {
		if n >= max(quota, 1) {
			break
		}
		if r, ok := recs[c.Key]; ok && !hasText(r) && c.Origin != originKnowledge {
			continue
		}
		sum += c.Relevance
		n++
	}
	if n == 0 {
		return minRelevance
	}
	return math.Max(minRelevance, floorShare*sum/float64(n))
}

// selectCandidates orders candidates best first and marks which to read:
// at most quota, none far below the best, none under the floor, none
// without text. Structured-data records are always read (they are facts,
// not prose to rank). A candidate another sub-question already reads
// (claimed) counts for this one too without taking one of its places, so
// an overlapping sub-question reads its next best instead
// (reading_plan.go); claimed may be nil. The first core candidates that
// pass (shared ones included) need only the floors, as when a
// sub-question read a fixed few; any past them must also be close to the
// best (nearBest), so reading more never reaches for the marginal ones.
func selectCandidates(cands []Candidate, recs map[string]search.Record, quota, core int, floor float64, claimed func(string) bool) []Candidate {
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].Score > cands[j].Score })
	best := 0.0
	for _, c := range cands {
		if r, ok := recs[c.Key]; !ok || hasText(r) || c.Origin == originKnowledge {
			best = c.Score
			break
		}
	}
	taken, passed := 0, 0
	for i := range cands {
		c := &cands[i]
		c.Floor = floor
		r, known := recs[c.Key]
		switch {
		case r.HasData():
			c.Read, c.Reason = true, reasonStructured
			continue
		case known && !hasText(r) && c.Origin != originKnowledge:
			c.Reason = reasonNoText
			continue
		case c.Relevance < floor:
			c.Reason = belowFloor(c.Relevance, floor)
			continue
		case best > 0 && c.Score < farBelow*best:
			c.Reason = reasonFarBelow
			continue
		case passed >= core && best > 0 && c.Score < nearBest*best:
			c.Reason = reasonNotNear
			continue
		}
		passed++
		switch {
		case claimed != nil && claimed(c.Key):
			c.Read, c.Reason = true, reasonDuplicate
		case taken >= quota:
			c.Reason = reasonQuota
		default:
			c.Read, c.Reason = true, reasonRead
			taken++
		}
	}
	return cands
}

// belowFloor is the reason of a candidate under a floor, its numbers
// with as many decimals as it takes for them to differ.
func belowFloor(rel, floor float64) string {
	if fmt.Sprintf("%.2f", rel) == fmt.Sprintf("%.2f", floor) {
		return fmt.Sprintf("%s (%.3f < %.3f)", reasonBelowFloor, rel, floor)
	}
	return fmt.Sprintf("%s (%.2f < %.2f)", reasonBelowFloor, rel, floor)
}

// originKnowledge marks candidates from the local knowledge base, which
// were read before (their text is in the store even without an abstract).
const originKnowledge = report.RouteKnowledge

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

// rankTerms is what a sub-question's candidates are judged by: the
// sub-question, its queries and the canonical term (whose phrases weigh
// most).
func rankTerms(sq SubQuestion, canonical string) rankQuery {
	return newRankQuery(canonical, sq.Question, sq.Queries.Strict, sq.Queries.Moderate)
}

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
