package pipeline_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/llm/ollamafake"
	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/search"
)

// webEnv is a run over the web source alone, answered by a recorded SearxNG
// answer: thirty short snippets, each read from its abstract only.
func webEnv(t *testing.T, script *pipelinetest.Script) *pipelinetest.Env {
	t.Helper()
	body, err := os.ReadFile("testdata/searxng/search-q-python-format-json.json")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	script.Topics = []pipelinetest.Topic{
		{Question: "What makes Python easy to learn and use?", Strict: "python easy to learn", Moderate: "python learning", Broad: "python"},
		{Question: "What kinds of work is Python used for?", Strict: "python uses", Moderate: "python applications", Broad: "python"},
	}
	script.Canonical = "python"
	env := pipelinetest.NewEnv(t, script, "")
	// The model takes 200 ms to its first token, as a GPU does: the
	// snippets, read at once, wait for it and share its calls.
	env.Ollama = ollamafake.New(ollamafake.Options{Responder: script.Responder(), FirstTokenDelay: 200 * time.Millisecond})
	t.Cleanup(env.Ollama.Close)
	backend, err := llm.NewOllama(env.Ollama.URL, llm.OllamaOptions{RequestTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	env.Engine.LLM = backend
	env.Client.SetHostLimit(strings.TrimPrefix(srv.URL, "http://"), 0)
	env.Engine.Sources["web"] = search.NewWeb(env.Client, search.WebOptions{SearxNGURL: srv.URL})
	return env
}

const pythonQuestion = "Why is Python so widely used as a programming language?"

func webOptions(env *pipelinetest.Env) runopts.Options {
	opt := env.Options(pythonQuestion)
	opt.Sources = []string{"web"}
	return opt
}

// analystCalls are the analyst's calls, and how many of them analysed
// several sources at once.
func analystCalls(env *pipelinetest.Env) (all, several int) {
	for _, c := range env.Ollama.ChatCalls() {
		if pipelinetest.KindOf(c) != pipelinetest.Analyst {
			continue
		}
		all++
		if strings.Contains(c.Messages[0].Content, "SEVERAL short sources") {
			several++
		}
	}
	return all, several
}

// storedAnalyses reads every source's analysis checkpoint.
func storedAnalyses(t *testing.T, env *pipelinetest.Env, id string) map[string]pipeline.Analysis {
	t.Helper()
	names, err := env.Store.CheckpointNames(id)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]pipeline.Analysis{}
	for _, n := range names {
		key, ok := strings.CutPrefix(n, "analyse/")
		if !ok {
			continue
		}
		b, _, err := env.Store.Checkpoint(id, n)
		if err != nil {
			t.Fatal(err)
		}
		var an pipeline.Analysis
		if err := json.Unmarshal(b, &an); err != nil {
			t.Fatal(err)
		}
		out[key] = an
	}
	return out
}

// abstracts are the stored sources' texts by key.
func abstracts(t *testing.T, env *pipelinetest.Env, id string) map[string]string {
	t.Helper()
	rep, err := pipeline.LoadReport(env.Store, id)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, s := range rep.Sources {
		b, ok, err := env.Store.Source(s.Key)
		var rec search.Record
		if err != nil || !ok || json.Unmarshal(b, &rec) != nil {
			t.Fatalf("source %s: %v", s.Key, err)
		}
		out[s.Key] = rec.Abstract
	}
	return out
}

func TestShortSourcesShareAnAnalystCall(t *testing.T) {
	t.Parallel()
	env := webEnv(t, &pipelinetest.Script{})
	_, sess := pipelinetest.RunToEnd(t, env, webOptions(env))
	analyses := storedAnalyses(t, env, sess.ID)
	calls, several := analystCalls(env)
	if several == 0 || calls >= len(analyses) {
		t.Fatalf("%d analyst calls (%d for several sources) for %d sources: short sources did not share calls", calls, several, len(analyses))
	}
	// Every source keeps its own analysis, whose findings are sentences of
	// its own text, never a neighbour's in the same call.
	texts := abstracts(t, env, sess.ID)
	for key, text := range texts {
		an, ok := analyses[key]
		if !ok || len(an.KeyFindings) == 0 {
			t.Errorf("cited source %s has no analysis of its own: %+v", key, an)
			continue
		}
		for _, f := range an.KeyFindings {
			if !strings.Contains(search.InlineText(text), strings.TrimSuffix(f, "...")) {
				t.Errorf("source %s: finding %q is not from its text %q", key, f, text)
			}
		}
		// Slots named by number alone are shown by the source's own finding.
		if len(an.Slots) == 0 || an.Slots[0].ChunkID != an.Quotes[0].ChunkID {
			t.Errorf("source %s: slots %+v, not shown by its finding's chunk %+v", key, an.Slots, an.Quotes)
		}
	}
}

func TestABatchAnswerThatLeavesSourcesOutAsksForThemAlone(t *testing.T) {
	t.Parallel()
	env := webEnv(t, &pipelinetest.Script{Batch: pipelinetest.BatchFirstOnly})
	_, sess := pipelinetest.RunToEnd(t, env, webOptions(env))
	checkEveryAnalysisByTheModel(t, env, sess.ID)
}

func TestAJunkBatchAnswerCostsNoSourceItsAnalysis(t *testing.T) {
	t.Parallel()
	env := webEnv(t, &pipelinetest.Script{Batch: pipelinetest.BatchJunk})
	_, sess := pipelinetest.RunToEnd(t, env, webOptions(env))
	checkEveryAnalysisByTheModel(t, env, sess.ID)
}

// checkEveryAnalysisByTheModel requires that batched calls were made and
// that no source was summarised without the model because of them.
func checkEveryAnalysisByTheModel(t *testing.T, env *pipelinetest.Env, id string) {
	t.Helper()
	if _, several := analystCalls(env); several == 0 {
		t.Fatal("no analyst call for several sources was made")
	}
	analyses := storedAnalyses(t, env, id)
	if len(analyses) < 4 {
		t.Fatalf("%d sources analysed", len(analyses))
	}
	for key, an := range analyses {
		if an.Degraded || len(an.KeyFindings) == 0 {
			t.Errorf("source %s lost its model analysis to another source's bad answer: %+v", key, an)
		}
	}
}

func TestAWriterThatNamesFindingsGetsThemVerbatimAndCited(t *testing.T) {
	t.Parallel()
	env := webEnv(t, &pipelinetest.Script{ByReference: true})
	_, sess := pipelinetest.RunToEnd(t, env, webOptions(env))
	rep, err := pipeline.LoadReport(env.Store, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(rep.Markdown, "{F") {
		t.Fatalf("a finding label reached the report:\n%s", rep.Markdown)
	}
	// Each source's finding is in the report in its own words, cited to it,
	// and the verifier finds it supported.
	analyses := storedAnalyses(t, env, sess.ID)
	for _, s := range rep.Sources {
		f := analyses[s.Key].KeyFindings[0]
		want := strings.TrimRight(f, ".!? ") + " [" + itoa(s.N) + "]"
		if !strings.Contains(rep.Markdown, want) {
			t.Errorf("the report does not state source %d's finding %q cited to it:\n%s", s.N, want, rep.Markdown)
		}
	}
	if len(rep.Support) == 0 {
		t.Fatal("no cited sentence was verified")
	}
	for _, c := range rep.Support {
		if c.Verdict != "supported" {
			t.Errorf("a finding put in by label was judged %q: %q", c.Verdict, c.Sentence)
		}
	}
}

func TestSubQuestionsSearchedTogetherShareOneScreen(t *testing.T) {
	t.Parallel()
	// A competent screener that finds the packaging tool off topic.
	offTopic := func(title string) bool { return strings.Contains(title, "Snapcraft") }
	env := webEnv(t, &pipelinetest.Script{Screen: &pipelinetest.ScreenScript{OffTopic: offTopic}})
	_, sess := pipelinetest.RunToEnd(t, env, webOptions(env))
	calls, looks := 0, 0 // first looks, and the later looks at decisive verdicts
	for _, c := range env.Ollama.ChatCalls() {
		if pipelinetest.KindOf(c) != pipelinetest.Screener {
			continue
		}
		if strings.Contains(c.Messages[len(c.Messages)-1].Content, " look at these candidates") {
			looks++
		} else {
			calls++
		}
	}
	cands, err := pipeline.LoadCandidates(env.Store, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	screened := map[string]int{}
	rejected := 0
	for _, c := range cands {
		if c.Screen == "" {
			continue
		}
		screened[c.SubQ]++
		if offTopic(c.Title) {
			rejected++
		}
		// Each verdict reaches the candidate it was about, in its own
		// sub-question, whatever its number in the shared call.
		if off := strings.HasPrefix(c.Screen, "off topic"); off != offTopic(c.Title) {
			t.Errorf("%s %q: screen %q", c.SubQ, c.Title, c.Screen)
		}
		if offTopic(c.Title) && c.Read {
			t.Errorf("%s read %q, which the screen judged off topic", c.SubQ, c.Title)
		}
	}
	if rejected == 0 {
		t.Fatal("no off-topic candidate was screened: the test shows nothing")
	}
	if calls != 1 || looks > 2 || len(screened) != 2 {
		t.Fatalf("%d screen calls (and %d later looks) for the sub-questions %v: want one call judging both, at most two looks again", calls, looks, screened)
	}
}

// TestSharedWorkIsScreenedOnce: two overlapping sub-questions rank the same
// works at the same time; their shared screen call lists each work once
// (its verdict counts for both), so the prompt does not pay for it twice.
func TestSharedWorkIsScreenedOnce(t *testing.T) {
	t.Parallel()
	got := runRankCase(t, turingCompleteCase, &pipelinetest.Script{}, nil)
	listed := 0
	for _, c := range got.env.Ollama.ChatCalls() {
		if pipelinetest.KindOf(c) != pipelinetest.Screener {
			continue
		}
		lines := regexp.MustCompile(`(?m)^\[\d+\] (.+)$`).FindAllStringSubmatch(c.Messages[len(c.Messages)-1].Content, -1)
		seen := map[string]bool{}
		for _, l := range lines {
			if seen[l[1]] {
				t.Errorf("%q is listed twice in one screen call", l[1])
			}
			seen[l[1]] = true
			listed++
		}
	}
	if listed == 0 {
		t.Fatal("no screen call: the test shows nothing")
	}
	for _, cd := range got.cands {
		if cd.Read && cd.Reason != "read: structured data" && cd.Screen == "" && cd.Reason != "read for another sub-question" {
			t.Errorf("%s %q read without a verdict", cd.SubQ, cd.Title)
		}
	}
}
