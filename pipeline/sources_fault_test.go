package pipeline_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/store"
)

// A run with one source down (connection refused), one answering 429 with
// a minute's Retry-After, and one slower than its timeout still produces a
// report from the others, says which failed, and takes no longer than the
// timeouts allow.
func TestRunSurvivesDownRateLimitedAndSlowSources(t *testing.T) {
	t.Parallel()
	env := pipelinetest.NewEnv(t, nil, "")

	// down: a port that was just closed
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	downURL := "http://" + ln.Addr().String()
	ln.Close()

	// rate limited for a minute, with Semantic Scholar's real 429 body
	body429, err := os.ReadFile("../search/testdata/semanticscholar/error-429-too-many-requests.json")
	if err != nil {
		t.Fatal(err)
	}
	var hits429 atomic.Int32
	limited := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits429.Add(1)
		w.Header().Set("Retry-After", "60")
		w.WriteHeader(http.StatusTooManyRequests)
		w.Write(body429)
	}))
	defer limited.Close()

	// slow: answers long after the client's timeout
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(20 * time.Second):
		}
	}))
	defer slow.Close()

	const timeout = 400 * time.Millisecond
	client := search.NewClient(search.ClientOptions{
		Timeout: timeout, Retries: 1, BaseBackoff: 10 * time.Millisecond, MaxRetryAfter: time.Second,
	})
	for _, u := range []string{downURL, limited.URL, slow.URL} {
		client.SetHostLimit(strings.TrimPrefix(u, "http://"), 0)
	}
	env.Engine.Sources["pubmed"] = search.NewPubMed(client, downURL, "", "")
	env.Engine.Sources["semanticscholar"] = search.NewSemanticScholar(client, limited.URL, "")
	env.Engine.Sources["crossref"] = search.NewCrossref(client, slow.URL, "")

	opt := env.Options(question)
	opt.Sources = []string{"arxiv", "openalex", "pubmed", "semanticscholar", "crossref"}
	start := time.Now()
	r, err := env.Engine.Start(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	evs := pipelinetest.Drive(t, r, nil)
	sess, err := r.Wait()
	took := time.Since(start)
	if err != nil || sess.Status != store.StatusCompleted {
		t.Fatalf("status %q err %v, want completed", sess.Status, err)
	}
	rep, err := pipeline.LoadReport(env.Store, sess.ID)
	if err != nil || len(rep.Sources) == 0 || !strings.Contains(rep.Markdown, "## References") {
		t.Fatalf("no usable report: %v\n%s", err, rep.Markdown)
	}
	// The Method says the sources that failed did not answer, not that
	// they found nothing.
	for _, name := range []string{"pubmed", "semanticscholar", "crossref"} {
		if !strings.Contains(rep.Markdown, name+" (did not answer)") {
			t.Errorf("the Method does not say %s did not answer:\n%s", name, rep.Markdown)
		}
	}
	failed := map[string]string{}
	for _, ev := range evs {
		if ev.Type != pipeline.Warning {
			continue
		}
		for _, name := range []string{"pubmed", "semanticscholar", "crossref"} {
			if strings.HasPrefix(ev.Message, name+" failed") {
				failed[name] = ev.Message
			}
		}
	}
	for _, name := range []string{"pubmed", "semanticscholar", "crossref"} {
		if failed[name] == "" {
			t.Errorf("no warning says %s failed", name)
		} else {
			t.Logf("warning: %s", failed[name])
		}
	}
	if !strings.Contains(failed["semanticscholar"], "429") || !strings.Contains(failed["pubmed"], "connection refused") ||
		!strings.Contains(failed["crossref"], "no answer within 400ms") {
		t.Errorf("warnings do not say why: %q / %q", failed["semanticscholar"], failed["pubmed"])
	}
	// The slow source costs at most (1 + Retries) timeouts plus backoff per
	// search; sub-questions search in parallel. The rate-limited one is not
	// waited out (Retry-After 60 s > MaxRetryAfter), not retried, and once
	// it has answered 429 it cools down: at most one request per sub-question
	// searching at that moment, never one per query tier.
	subqs := int32(env.Script.SubQuestions)
	if subqs == 0 {
		subqs = 2 // the script's default
	}
	if n := hits429.Load(); n < 1 || n > subqs {
		t.Errorf("the rate-limited source was asked %d times", n)
	}
	for _, s := range rep.Sources {
		if s.Source == "pubmed" || s.Source == "semanticscholar" || s.Source == "crossref" {
			t.Errorf("a source from a failed service: %+v", s)
		}
	}
	t.Logf("run with three failing sources took %s (timeout %s)", took.Round(time.Millisecond), timeout)
	if took > 20*time.Second { // under a second here; a minute if the 429 were waited out
		t.Errorf("took %s", took)
	}
}

// A Materials Project record's properties skip vector filtering and reach
// the writer as a data block.
func TestStructuredDataReachesTheWriter(t *testing.T) {
	t.Parallel()
	env := pipelinetest.NewEnv(t, nil, "")
	raw, err := os.ReadFile("../search/testdata/materials/summary-Fe2O3.json")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(raw) }))
	defer srv.Close()
	client := search.NewClient(search.ClientOptions{})
	client.SetHostLimit(strings.TrimPrefix(srv.URL, "http://"), 0)
	// the scripted planner's queries name no formula, so ask for Fe2O3 whatever the query
	env.Engine.Sources["materials"] = fixedQuery{search.NewMaterialsProject(client, srv.URL, "k"), "Fe2O3"}
	opt := env.Options(question)
	opt.Sources = []string{"materials", "arxiv", "openalex"}
	r, err := env.Engine.Start(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	pipelinetest.Drive(t, r, nil)
	sess, err := r.Wait()
	if err != nil || sess.Status != store.StatusCompleted {
		t.Fatalf("status %q err %v", sess.Status, err)
	}
	var brief string
	for _, call := range env.Ollama.ChatCalls() {
		for _, m := range call.Messages {
			if strings.Contains(m.Content, "Structured data (computed properties") {
				brief = m.Content
			}
		}
	}
	if brief == "" {
		t.Fatal("no writer call saw the structured data block")
	}
	for _, want := range []string{"Fe2O3 (mp-19770): computed properties", "band_gap = 2.05", "energy_above_hull = 0", `symmetry = {"crystal_system":"Trigonal"`} {
		if !strings.Contains(brief, want) {
			t.Errorf("brief lacks %q", want)
		}
	}
	rep, err := pipeline.LoadReport(env.Store, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range rep.Sources {
		found = found || s.Source == "materials"
	}
	if !found {
		t.Error("the materials record is not among the report's sources")
	}
}

type fixedQuery struct {
	search.Source
	q string
}

func (f fixedQuery) Search(ctx context.Context, _ string, limit int) ([]search.Record, error) {
	return f.Source.Search(ctx, f.q, limit)
}

// A run whose every named source is off is refused at once, saying why,
// instead of planning a search of nothing; one source that answers is
// enough to start.
func TestARunWithEverySourceOffIsRefused(t *testing.T) {
	t.Parallel()
	env := pipelinetest.NewEnv(t, nil, "")
	env.Engine.SourcesOff = map[string]string{"web": "no engine: set RESEARCHTUI_SEARXNG_URL"}
	opt := env.Options(question)
	opt.Sources = []string{"web"}
	_, err := env.Engine.Start(context.Background(), opt)
	if !errors.Is(err, runopts.ErrBadInput) || !strings.Contains(err.Error(), "no source to search: web: no engine") {
		t.Fatalf("start with only web, which is off: %v", err)
	}
	if ss, _ := env.Store.ListSessions(); len(ss) != 0 {
		t.Errorf("a refused run left %d sessions", len(ss))
	}
	opt = env.Options(question)
	opt.Sources = []string{"web", "arxiv"}
	r, err := env.Engine.Start(context.Background(), opt)
	if err != nil {
		t.Fatalf("start with web and arxiv: %v", err)
	}
	r.Cancel()
	r.Wait()
}
