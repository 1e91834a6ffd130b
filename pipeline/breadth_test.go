package pipeline_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/search/sourcefake"
)

// overlappingTuring are three sub-questions about one topic, so their
// candidates overlap: the issue's "three sub-questions each read the same
// top 3 candidates".
var overlappingTuring = []pipelinetest.Topic{
	{Question: "How do large language models perform in Turing tests?", Strict: "large language models Turing test", Moderate: "LLM Turing test", Broad: "Turing test"},
	{Question: "Do chatbots such as ChatGPT pass the Turing test?", Strict: "chatbot ChatGPT Turing test", Moderate: "chatbot Turing test", Broad: "Turing test"},
	{Question: "What do Turing test results with GPT-4 show about machine intelligence?", Strict: "GPT-4 Turing test intelligence", Moderate: "GPT-4 Turing test", Broad: "Turing test"},
}

// TestOverlappingSubQuestionsReadMoreUnderRateLimits: every source on,
// Semantic Scholar (the recorded pool) answering 429 to every first
// try of a request (half of them), three sub-questions that overlap. One reading plan for the run
// means each reads its next best unread candidate instead of the same
// top three: at least 6 distinct sources cited (3 before), none off topic.
func TestOverlappingSubQuestionsReadMoreUnderRateLimits(t *testing.T) {
	t.Parallel()
	body429, err := os.ReadFile("../search/testdata/semanticscholar/error-429-too-many-requests.json")
	if err != nil {
		t.Fatal(err)
	}
	// The screen judges as a careful reader would: the recorded arXiv and
	// OpenAlex answers (software testing, chemistry tools) share words with
	// the question and are the screen's to reject.
	careful := &pipelinetest.ScreenScript{OffTopic: func(title string) bool { return !turingTestCase.on(title) }}
	// The reviewer approves: the targeted research a revision request
	// starts (revise.go) reads without the screen, which is not what this
	// test is about.
	script := &pipelinetest.Script{Topics: overlappingTuring, Canonical: "Turing test", Screen: careful}
	env := pipelinetest.NewEnv(t, script, "")
	ranked := sourcefake.NewWith(sourcefake.Options{Pool: "turing"})
	defer ranked.Close()
	target, _ := url.Parse(ranked.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	// Every request is first answered 429 and then, retried, served: half
	// the requests fail, and which ones does not hang on the order in which
	// concurrent searches arrive.
	var n, limited atomic.Int32
	var mu sync.Mutex
	tried := map[string]bool{}
	s2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		mu.Lock()
		first := !tried[r.URL.String()]
		tried[r.URL.String()] = true
		mu.Unlock()
		if first {
			limited.Add(1)
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write(body429)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer s2.Close()
	env.Client.SetHostLimit(strings.TrimPrefix(s2.URL, "http://"), 0)
	env.Engine.Sources["semanticscholar"] = search.NewSemanticScholar(env.Client, s2.URL+"/s2", "")
	opt := env.Options("How well do large language models and chatbots do in Turing tests?")
	opt.Sources = []string{"arxiv", "openalex", "semanticscholar"}
	_, sess := pipelinetest.RunToEnd(t, env, opt)
	rep, err := pipeline.LoadReport(env.Store, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	var off []string
	for _, s := range rep.Sources {
		if !turingTestCase.on(s.Title) {
			off = append(off, s.Title)
		}
	}
	if os.Getenv("DUMP") != "" {
		cands, _ := pipeline.LoadCandidates(env.Store, sess.ID)
		for _, c := range cands {
			if c.Read || c.Screen != "" {
				t.Logf("%s %.2f rel %.2f fl %.2f %.40s | %s | %s", c.SubQ, c.Score, c.Relevance, c.Floor, c.Title, c.Screen, c.Reason)
			}
		}
	}
	t.Logf("%d sources cited (%d off topic: %q); Semantic Scholar answered 429 %d times of %d", len(rep.Sources), len(off), off, limited.Load(), n.Load())
	if limited.Load() == 0 {
		t.Fatal("Semantic Scholar never answered 429: the world is not the one this test is about")
	}
	if len(rep.Sources) < 6 || 5*len(off) > len(rep.Sources) {
		t.Errorf("%d distinct sources cited, %d off topic; want ≥6 and ≥80%% on topic", len(rep.Sources), len(off))
	}
	// Each sub-question's narrowing is in the report's funnel and its
	// Method section: a shared source counts for every sub-question it
	// was read for.
	if len(rep.Funnel.BySubQ) != 3 {
		t.Fatalf("funnel by sub-question: %+v", rep.Funnel.BySubQ)
	}
	for _, f := range rep.Funnel.BySubQ {
		if f.Read == 0 || f.Relevant < f.Read || f.Read < f.Analysed || f.Analysed < f.Cited || f.Found < f.Relevant {
			t.Errorf("sub-question funnel %+v does not narrow", f)
		}
		if !strings.Contains(rep.Markdown, f.ID+" (") {
			t.Errorf("the Method section does not give %s's counts", f.ID)
		}
	}
	b, _ := json.Marshal(rep.Funnel)
	if !strings.Contains(string(b), `"by_subq":[{"id":"q1"`) {
		t.Errorf("funnel JSON: %s", b)
	}
}

// patternsQuestion asks for a review of the Turing pool's pattern-formation
// papers: most of the pool is about Turing patterns in biology, chemistry
// and physics (namesake in rank_test.go tells the rest, where a title
// about patterns in a material is on topic here).
var patternsQuestion = "What is known about Turing patterns and Turing instabilities in reaction-diffusion systems?"

// TestReviewIncludesThePool: a --kind review takes every candidate the
// screen judges on topic (up to 60), not a dozen: over the recorded pool,
// ranked by each query, with a screen wrong on one title in ten, at least
// 20 on-topic works are included, each a row of the studies table, at
// most 15% namesakes.
func TestReviewIncludesThePool(t *testing.T) {
	t.Parallel()
	screen := &pipelinetest.ScreenScript{OffTopic: func(title string) bool {
		return namesake(title) && !strings.Contains(strings.ToLower(title), "pattern")
	}, ErrorRate: 0.1, Seed: 7}
	script := &pipelinetest.Script{RevisionRounds: 1, Canonical: "Turing patterns", Screen: screen, Topics: []pipelinetest.Topic{
		{Question: "How do Turing patterns form in reaction-diffusion systems?", Strict: "Turing patterns reaction-diffusion", Moderate: "Turing pattern formation", Broad: "Turing patterns"},
		{Question: "When do Turing instabilities and Turing-Hopf bifurcations arise?", Strict: "Turing instability Turing-Hopf bifurcation", Moderate: "Turing instability", Broad: "Turing patterns"},
	}}
	env := pipelinetest.NewEnv(t, script, "")
	env.Engine.Sources["semanticscholar"] = rankCase{}.rankedS2(t, env.Client, 0)
	opt := env.Options(patternsQuestion)
	opt.Sources = []string{"semanticscholar"}
	opt.Kind = runopts.KindReview
	_, sess := pipelinetest.RunToEnd(t, env, opt)
	rep, err := pipeline.LoadReport(env.Store, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(rep.Markdown, "## "+report.StudiesHeading+"\n")
	if !ok {
		t.Fatalf("no studies table in the review:\n%s", rep.Markdown)
	}
	table, _, _ = strings.Cut(table, "\n## ")
	var on int
	var off []string
	for _, s := range rep.Sources {
		if namesake(s.Title) && !strings.Contains(strings.ToLower(s.Title), "pattern") {
			off = append(off, s.Title)
		} else {
			on++
		}
		if !strings.Contains(table, fmt.Sprintf("[%d] |", s.N)) {
			t.Errorf("source [%d] %q has no row in the studies table", s.N, s.Title)
		}
	}
	t.Logf("review: %d sources included, %d on topic; PRISMA included %d", len(rep.Sources), on, rep.Flow.Included)
	if on < 20 || 100*on < 85*len(rep.Sources) {
		t.Errorf("the review included %d on-topic works of %d (namesakes %q); want ≥20 at precision ≥0.85", on, len(rep.Sources), off)
	}

	// A follow-up keeps one studies table, built again with every source,
	// and its rows are not counted or checked as cited sentences: the
	// scripted follow-up section cites at most three.
	r, err := env.Engine.Ask(t.Context(), sess.ID, "What do Turing patterns look like in zebrafish skin?", nil)
	if err != nil {
		t.Fatal(err)
	}
	pipelinetest.Drive(t, r, nil)
	if _, err := r.Wait(); err != nil {
		t.Fatal(err)
	}
	after, err := pipeline.LoadReport(env.Store, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(after.Markdown, "## "+report.StudiesHeading+"\n"); n != 1 {
		t.Errorf("%d studies tables after the follow-up, want 1", n)
	}
	if grew := after.Metrics.Citations - rep.Metrics.Citations; grew > 3 {
		t.Errorf("citations went from %d to %d over a follow-up that cites at most 3: the table's rows were counted", rep.Metrics.Citations, after.Metrics.Citations)
	}
	_, table, _ = strings.Cut(after.Markdown, "## "+report.StudiesHeading+"\n")
	table, _, _ = strings.Cut(table, "\n## ")
	for _, s := range after.Sources {
		if !strings.Contains(table, fmt.Sprintf("[%d] |", s.N)) {
			t.Errorf("after the follow-up, source [%d] has no row in the studies table", s.N)
		}
	}
}

// TestTitleOnlyWorksAreLookedUp: Crossref lists works by DOI and title
// only (its recorded answer for "ecology": 20 works, no abstract; Semantic
// Scholar's search answers its recorded "turing" pool), and a
// title is never read. Before they are judged, the run asks Semantic
// Scholar for their abstracts in one batch request per ranking (its real
// /paper/batch answer replayed: about other works, so it must attach
// nothing), and never asks for a work twice.
func TestTitleOnlyWorksAreLookedUp(t *testing.T) {
	t.Parallel()
	crossref, err := os.ReadFile("../search/testdata/crossref/works-query-ecology-select-DOI-title.json")
	if err != nil {
		t.Fatal(err)
	}
	batch, err := os.ReadFile("../search/testdata/semanticscholar/paper-batch-4ids-allfields.json")
	if err != nil {
		t.Fatal(err)
	}
	pool, err := os.ReadFile("../search/sourcefake/testdata/semanticscholar/paper-search-turing-allfields-limit100.json")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var asked [][]string
	s2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/paper/batch") {
			var req struct{ IDs []string }
			json.NewDecoder(r.Body).Decode(&req)
			mu.Lock()
			asked = append(asked, req.IDs)
			mu.Unlock()
			w.Write(batch)
			return
		}
		w.Write(pool) // its recorded search for "turing"
	}))
	defer s2.Close()
	cr := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(crossref)
	}))
	defer cr.Close()
	script := &pipelinetest.Script{RevisionRounds: 1, Canonical: "Turing patterns", Topics: []pipelinetest.Topic{
		{Question: "How do Turing patterns shape vegetation in arid ecosystems?", Strict: "Turing patterns vegetation ecology", Moderate: "vegetation patterns ecology", Broad: "ecology"},
	}}
	env := pipelinetest.NewEnv(t, script, "")
	for _, u := range []string{s2.URL, cr.URL} {
		env.Client.SetHostLimit(strings.TrimPrefix(u, "http://"), 0)
	}
	env.Engine.Sources["semanticscholar"] = search.NewSemanticScholar(env.Client, s2.URL, "")
	env.Engine.Sources["crossref"] = search.NewCrossref(env.Client, cr.URL, "")
	opt := env.Options("How do Turing patterns shape vegetation in arid ecosystems?")
	opt.Sources = []string{"crossref", "semanticscholar"}
	r, err := env.Engine.Start(t.Context(), opt)
	if err != nil {
		t.Fatal(err)
	}
	pipelinetest.Drive(t, r, nil)
	sess, _ := r.Wait()
	cands, err := pipeline.LoadCandidates(env.Store, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) == 0 {
		t.Fatal("no work known by title only was looked up")
	}
	seen := map[string]bool{}
	for _, ids := range asked {
		for _, id := range ids {
			if !strings.HasPrefix(id, "DOI:10.") || seen[id] {
				t.Errorf("asked %q (again: %v); want each title-only work once, by its DOI", id, seen[id])
			}
			seen[id] = true
		}
	}
	if len(seen) < 10 {
		t.Errorf("looked up %d works; Crossref listed 20 by title only", len(seen))
	}
	rep, err := pipeline.LoadReport(env.Store, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Funnel.TitleOnlyLookedUp != len(seen) || rep.Funnel.AbstractsFound != 0 || !strings.Contains(rep.Markdown, "known by title only, 0 had an abstract") {
		t.Errorf("funnel %+v; the Method section should say how many title-only works were looked up", rep.Funnel)
	}
	for _, c := range cands {
		if c.Source == "crossref" && c.Read {
			t.Errorf("%q was read though the lookup found no abstract for it", c.Title)
		}
	}
}
