package pipeline_test

import (
	"os"
	"strings"
	"testing"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/search"
)

// namesake reports titles about another "Turing" than the biology one: the
// Turing test, Turing machines and completeness, the NVIDIA GPU, Turing-type
// catalysts, Megatron-Turing, the man himself.
func namesake(title string) bool {
	t := strings.ToLower(title)
	for _, w := range []string{"test", "machine", "complete", "gpu", "catalyst", "megatron", "trap", "computab", "church", "quantum", "enigma", "chatbot", "benchmark", "consciousness", "encryption", "obfuscation", "probabilistic", "neural", "stark", "zinc", "membrane", "bismuth", "strain", "thz", "resonator"} {
		if strings.Contains(t, w) {
			return true
		}
	}
	return t == "alan turing"
}

// TestRankingReadsOnTopicSources searches a recorded Semantic Scholar answer
// for "turing" (100 real papers, most of them namesakes: the Turing test,
// Turing machines, GPUs, catalysts) with a question about Turing patterns in
// biological development. The API's own order starts with five namesakes;
// the sources read and cited must be the pattern-formation papers.
func TestRankingReadsOnTopicSources(t *testing.T) {
	t.Parallel()
	script := &pipelinetest.Script{
		Topics: []pipelinetest.Topic{
			{Question: "How do Turing reaction-diffusion patterns form in animal skin pigmentation, such as zebrafish stripes?", Strict: "Turing patterns skin pigmentation", Moderate: "Turing pattern", Broad: "Turing"},
			{Question: "Which Turing-type mechanisms pattern digits, limbs and organs during development?", Strict: "Turing mechanism digit limb morphogenesis", Moderate: "Turing morphogenesis", Broad: "Turing"},
		},
		Canonical: "Turing patterns",
	}
	env := pipelinetest.NewEnv(t, script, "")
	env.Engine.Sources["semanticscholar"] = search.NewSemanticScholar(env.Client, env.Sources.SemanticScholarURL(), "")
	opt := env.Options("How do Turing patterns form in biological development, from skin pigmentation to digit patterning?")
	opt.Sources = []string{"semanticscholar"}

	// The API's own order, which reading used to follow.
	apiOrder, err := env.Engine.Sources["semanticscholar"].Search(t.Context(), "Turing patterns skin pigmentation", 30)
	if err != nil {
		t.Fatal(err)
	}
	firstNamesakes := 0
	for _, r := range apiOrder[:5] {
		if namesake(r.Title) {
			firstNamesakes++
		}
	}
	if firstNamesakes < 4 {
		t.Fatalf("the recording's first five results hold %d namesakes; this test needs an API order that misleads", firstNamesakes)
	}

	_, sess := pipelinetest.RunToEnd(t, env, opt)
	cands, err := pipeline.LoadCandidates(env.Store, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	var read []pipeline.Candidate
	for _, c := range cands {
		if c.Reason == "" {
			t.Errorf("candidate %q has no reason", c.Title)
		}
		if c.Read {
			read = append(read, c)
		}
	}
	found := uniqueKeys(cands)
	if len(found) < 30 || len(uniqueKeys(read)) < 5 {
		t.Fatalf("%d candidates, %d read; want an over-fetched pool (≥30) and ≥5 read", len(found), len(uniqueKeys(read)))
	}
	if os.Getenv("DUMP") != "" {
		for _, cd := range cands {
			t.Logf("%v r%d %s sc %.2f rel %.2f fl %.2f sem %.2f cov %.2f ph %.2f %.60s | %s", namesake(cd.Title), cd.Round, cd.SubQ, cd.Score, cd.Relevance, cd.Floor, cd.Semantic, cd.Coverage, cd.Phrase, cd.Title, cd.Reason)
		}
	}
	for _, c := range read {
		if namesake(c.Title) {
			t.Errorf("read a namesake: %q (score %.2f)", c.Title, c.Score)
		}
	}
	rep, err := pipeline.LoadReport(env.Store, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Sources) < 4 {
		t.Errorf("the report cites %d sources, want ≥4", len(rep.Sources))
	}
	for _, s := range rep.Sources {
		if namesake(s.Title) || !strings.Contains(strings.ToLower(s.Title), "turing") {
			t.Errorf("cited an off-topic source: %q", s.Title)
		}
	}
	f := rep.Funnel
	if f.Found != len(found) || f.Read != len(uniqueKeys(read)) || f.Cited != len(rep.Sources) || f.Analysed < f.Cited {
		t.Errorf("funnel %+v does not match %d candidates, %d read, %d cited", f, len(found), len(uniqueKeys(read)), len(rep.Sources))
	}
}

func uniqueKeys(cs []pipeline.Candidate) map[string]bool {
	m := map[string]bool{}
	for _, c := range cs {
		m[c.Key] = true
	}
	return m
}
