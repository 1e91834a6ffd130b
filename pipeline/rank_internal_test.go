package pipeline

import (
	"strings"
	"testing"

	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/search"
)

func TestSelectCandidatesQuotaAndFarBelow(t *testing.T) {
	cands := []Candidate{{Key: "c", Score: 0.30}, {Key: "a", Score: 0.9}, {Key: "d", Score: 0.1}, {Key: "b", Score: 0.8}, {Key: "e", Score: 0.75}, {Key: "data", Score: 0}}
	recs := map[string]search.Record{"data": {Key: "data", Data: map[string]any{"band_gap": 1.1}}}
	got := selectCandidates(cands, recs, 2, 2, 0, nil)
	want := map[string]string{"a": reasonRead, "b": reasonRead, "e": reasonQuota, "c": reasonFarBelow, "d": reasonFarBelow, "data": reasonStructured}
	for _, c := range got {
		if c.Reason != want[c.Key] {
			t.Errorf("%s: %q, want %q", c.Key, c.Reason, want[c.Key])
		}
	}
	if got[0].Key != "a" || got[1].Key != "b" {
		t.Errorf("not best first: %v", got)
	}
	// With free slots, a candidate far below the best is still not read.
	got = selectCandidates([]Candidate{{Key: "a", Score: 0.9}, {Key: "c", Score: 0.3}}, nil, 5, 5, 0, nil)
	if got[1].Read || got[1].Reason != reasonFarBelow {
		t.Errorf("far-below candidate: %+v", got[1])
	}
}

// TestSelectCandidatesSharedAndNearBest: a candidate another sub-question
// reads counts for this one without taking its place, so it reads its next
// best; past the first few (core, shared ones counted), only candidates
// close to the best are read, however many places are free.
func TestSelectCandidatesSharedAndNearBest(t *testing.T) {
	claimed := func(k string) bool { return k == "a" || k == "b" }
	cands := []Candidate{{Key: "a", Score: 0.9}, {Key: "b", Score: 0.85}, {Key: "c", Score: 0.8}, {Key: "d", Score: 0.6}, {Key: "e", Score: 0.5}}
	got := selectCandidates(cands, nil, 2, 3, 0, claimed)
	want := map[string]string{"a": reasonDuplicate, "b": reasonDuplicate, "c": reasonRead, "d": reasonRead, "e": reasonNotNear}
	for _, c := range got {
		if c.Reason != want[c.Key] || c.Read != (c.Reason == reasonRead || c.Reason == reasonDuplicate) {
			t.Errorf("%s: read %v, %q; want %q", c.Key, c.Read, c.Reason, want[c.Key])
		}
	}
}

func TestScoreCandidatesLexicalWhenEmbeddingsCantTell(t *testing.T) {
	recs := []search.Record{
		{Key: "x", Title: "Neural Turing Machines", Abstract: "We extend neural networks with external memory."},
		{Key: "y", Title: "Studies of Turing pattern formation in zebrafish skin", Abstract: "Pigment patterns on zebrafish skin form by reaction and diffusion."},
	}
	terms := rankTerms(SubQuestion{Question: "How do Turing patterns form in zebrafish skin?"}, "Turing patterns")
	same := []float32{1, 0}
	// Identical similarities: the embedding says nothing; words decide.
	got := scoreCandidates(recs, [][]float32{same, same}, [][]float32{same}, terms)
	if got[1].Score <= got[0].Score {
		t.Errorf("zebrafish paper %.2f ≤ namesake %.2f", got[1].Score, got[0].Score)
	}
	// No embeddings at all (the embedding model failed): lexical only.
	got = scoreCandidates(recs, nil, nil, terms)
	if got[1].Score <= got[0].Score || got[1].Phrase == 0 || got[0].Phrase != 0 {
		t.Errorf("lexical-only scores %.2f, %.2f", got[0].Score, got[1].Score)
	}
}

func TestBM25FavoursRareTermsAndStems(t *testing.T) {
	docs := [][]string{
		stems([]string{"turing", "test", "chatbots"}),
		stems([]string{"turing", "patterns", "skin"}),
		stems([]string{"turing", "machines"}),
	}
	s := bm25(docs, stems([]string{"turing", "pattern"}))
	if !(s[1] > s[0] && s[1] > s[2]) {
		t.Errorf("bm25 %v: the document with the rare term (stemmed) should win", s)
	}
	// The floor is calibrated on as many candidates as a sub-question
	// read before the reading plan, so reading more never lowers it.
	if floorCalibration(runopts.DepthTable[runopts.DepthStandard], 4) != 3 || floorCalibration(runopts.DepthTable[runopts.DepthStandard], 2) != 5 || floorCalibration(runopts.DepthTable[runopts.DepthQuick], 2) != 3 {
		t.Error("floorCalibration changed: the floors would move")
	}
	if firstShare(12, 4) != 3 || firstShare(12, 5) != 3 || firstShare(60, 2) != 30 || firstShare(6, 6) != 2 {
		t.Error("firstShare does not share the run's target out")
	}
}

// TestFloorHoldsAcrossPools: the first round's pool sets the floor; a later
// pool of unrelated papers (as citation chasing brings) is scored against
// the same query and reads nothing, though compared only with each other
// its best would be read. A title alone is never read.
func TestFloorHoldsAcrossPools(t *testing.T) {
	q := rankTerms(SubQuestion{Question: "How do large language models perform in Turing tests?", Queries: Queries{Strict: "large language models Turing test"}}, "Turing test")
	first := []search.Record{
		{Key: "a", Title: "Large Language Models Pass the Turing Test", Abstract: "We evaluated large language models in a randomised three-party Turing test."},
		{Key: "b", Title: "Does GPT-4 pass the Turing test?", Abstract: "We ran a public online Turing test with a large language model."},
		{Key: "c", Title: "Neural Turing Machines", Abstract: "We extend neural networks with external memory."},
		{Key: "t", Title: "ChatGPT broke the Turing test"},
	}
	later := []search.Record{
		{Key: "x", Title: "Do Firms Want to Borrow More? Testing Credit Constraints", Abstract: "We test for credit constraints using a directed lending program."},
		{Key: "y", Title: "What do we know about the impact of microfinance?", Abstract: "A review of microfinance evaluations and their models."},
	}
	byKey := func(rs []search.Record) map[string]search.Record {
		m := map[string]search.Record{}
		for _, r := range rs {
			m[r.Key] = r
		}
		return m
	}
	c1 := scoreCandidates(first, nil, nil, q)
	floor := calibrateFloor(c1, byKey(first), 3)
	c1 = selectCandidates(c1, byKey(first), 3, 3, floor, nil)
	read := map[string]string{}
	for _, c := range c1 {
		read[c.Key] = c.Reason
	}
	if read["a"] != reasonRead || read["b"] != reasonRead || read["t"] != reasonNoText || !strings.HasPrefix(read["c"], reasonBelowFloor) {
		t.Errorf("first round: %v (floor %.2f)", read, floor)
	}
	c2 := scoreCandidates(later, nil, nil, q)
	if alone := selectCandidates(append([]Candidate(nil), c2...), byKey(later), 3, 3, 0, nil); !alone[0].Read {
		t.Fatalf("compared only with each other, the later pool's best is not read either: %+v", alone[0])
	}
	for _, c := range selectCandidates(c2, byKey(later), 3, 3, floor, nil) {
		if c.Read || !strings.HasPrefix(c.Reason, reasonBelowFloor) {
			t.Errorf("later round read %q (relevance %.2f, floor %.2f): %s", c.Title, c.Relevance, floor, c.Reason)
		}
	}
}

func TestPhrasesAndCoverage(t *testing.T) {
	q := newRankQuery("Turing test", "How do large language models and chatbots perform in Turing tests?")
	phrase := newDocTerms("Does GPT-4 pass the Turing test? A large language model was tested.")
	words := newDocTerms("Megatron-Turing NLG: training a large language model. We test it on benchmarks.")
	if q.phrase(phrase) <= q.phrase(words) {
		t.Errorf("phrase score %.2f for the Turing-test paper ≤ %.2f for the namesake", q.phrase(phrase), q.phrase(words))
	}
	if q.coverage(words) == 0 || q.coverage(newDocTerms("Household economics")) != 0 {
		t.Error("coverage counts the query's words present")
	}
}

func TestHasText(t *testing.T) {
	for _, c := range []struct {
		r    search.Record
		want bool
	}{
		{search.Record{Title: "Do Husbands and Wives Pool Their Resources?"}, false},
		{search.Record{Title: "t", URL: "https://doi.org/10.1/x", Source: "semanticscholar"}, false}, // a landing page is not read
		{search.Record{Title: "t", Abstract: "a"}, true},
		{search.Record{Title: "t", PDFURL: "https://x/y.pdf"}, true},
		{search.Record{Title: "t", URL: "https://blog.example/post", Source: "web"}, true},
		{search.Record{Title: "t", Path: "/corpus/paper.pdf"}, true},
		{search.Record{Title: "t", Data: map[string]any{"band_gap": 1.1}}, true},
	} {
		if got := hasText(c.r); got != c.want {
			t.Errorf("hasText(%+v) = %v, want %v", c.r, got, c.want)
		}
	}
}

// The Method's sentence per sub-question escapes the planner's text too.
func TestSubQuestionNoteIsInert(t *testing.T) {
	note := subQuestionNote([]SubQuestionFunnel{{ID: "q1", Question: "What ![t](http://t/p.png) <img src=x> says?", Found: 3, Relevant: 2, Read: 1}})
	if !strings.Contains(note, `\!\[t\]`) || !strings.Contains(note, `\<img`) {
		t.Errorf("unescaped: %q", note)
	}
}
