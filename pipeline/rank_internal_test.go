package pipeline

import (
	"testing"

	"github.com/researchtui/researchtui/search"
)

func TestSelectCandidatesQuotaAndFarBelow(t *testing.T) {
	cands := []Candidate{{Key: "c", Score: 0.30}, {Key: "a", Score: 0.9}, {Key: "d", Score: 0.1}, {Key: "b", Score: 0.8}, {Key: "e", Score: 0.75}, {Key: "data", Score: 0}}
	recs := map[string]search.Record{"data": {Key: "data", Data: map[string]any{"band_gap": 1.1}}}
	got := selectCandidates(cands, recs, 2, 0)
	want := map[string]string{"a": reasonRead, "b": reasonRead, "e": reasonQuota, "c": reasonQuota, "d": reasonQuota, "data": reasonStructured}
	for _, c := range got {
		if c.Reason != want[c.Key] {
			t.Errorf("%s: %q, want %q", c.Key, c.Reason, want[c.Key])
		}
	}
	if got[0].Key != "a" || got[1].Key != "b" {
		t.Errorf("not best first: %v", got)
	}
	// With free slots, a candidate far below the best is still not read.
	got = selectCandidates([]Candidate{{Key: "a", Score: 0.9}, {Key: "c", Score: 0.3}}, nil, 5, 0)
	if got[1].Read || got[1].Reason != reasonFarBelow {
		t.Errorf("far-below candidate: %+v", got[1])
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
	if readQuota(depthPlan{ReadPerSubQ: 5, AnalyseMax: 12}, 4) != 3 || readQuota(depthPlan{ReadPerSubQ: 5, AnalyseMax: 12}, 2) != 5 {
		t.Error("readQuota does not share the run's limit out")
	}
}
