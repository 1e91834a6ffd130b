package pipeline_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/search"
)

// recordingSource answers from memory and remembers what it was asked.
type recordingSource struct {
	name    string
	mu      sync.Mutex
	queries []string
	// results answers a query with how many records to return.
	results func(query string) int
	pdfURL  string // given to every record, when set
}

func (s *recordingSource) Name() string { return s.name }

func (s *recordingSource) Search(_ context.Context, q string, limit int) ([]search.Record, error) {
	s.mu.Lock()
	s.queries = append(s.queries, q)
	s.mu.Unlock()
	n := min(s.results(q), limit)
	var out []search.Record
	for i := 0; i < n; i++ {
		out = append(out, search.Record{
			Source: s.name, Title: fmt.Sprintf("%s study %d of %s", s.name, i+1, q), Year: 2020 + i,
			Abstract: fmt.Sprintf("A %s study of %s. Testing shows clear results in trial %d.", s.name, q, i+1),
			PDFURL:   s.pdfURL,
		})
	}
	return out, nil
}

func (s *recordingSource) asked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.queries)
}

func TestIntentRoutesSourcesWhenNoneAreNamed(t *testing.T) {
	t.Parallel()
	env := pipelinetest.NewEnv(t, &pipelinetest.Script{Intent: "biomedical"}, "")
	srcs := map[string]*recordingSource{}
	env.Engine.Sources = map[string]search.Source{}
	for _, name := range []string{"arxiv", "openalex", "pubmed", "semanticscholar", "crossref"} {
		srcs[name] = &recordingSource{name: name, results: func(string) int { return 4 }}
		env.Engine.Sources[name] = srcs[name]
	}
	opt := env.Options(question)
	opt.Sources = nil // none named: the planner routes by intent
	pipelinetest.RunToEnd(t, env, opt)
	for _, name := range []string{"pubmed", "semanticscholar", "openalex"} {
		if len(srcs[name].asked()) == 0 {
			t.Errorf("a biomedical question did not search %s", name)
		}
	}
	for _, name := range []string{"arxiv", "crossref"} {
		if n := len(srcs[name].asked()); n != 0 {
			t.Errorf("%s was searched %d times; the route's first three suffice", name, n)
		}
	}
}

func TestQueriesWidenWhenAStrictQueryFindsTooLittle(t *testing.T) {
	t.Parallel()
	env := pipelinetest.NewEnv(t, &pipelinetest.Script{SubQuestions: 1}, "")
	src := &recordingSource{name: "arxiv", results: func(q string) int {
		if q == "software testing techniques" { // the strict tier
			return 1
		}
		return 5
	}}
	env.Engine.Sources = map[string]search.Source{"arxiv": src}
	opt := env.Options(question)
	opt.Sources = []string{"arxiv"}
	pipelinetest.RunToEnd(t, env, opt)
	got := src.asked()
	want := []string{"software testing techniques", "software testing"}
	if !slices.Equal(got, want) {
		t.Errorf("queries %q, want strict then moderate %q (and no broad: moderate found enough)", got, want)
	}
}

func TestFailedDownloadsAreSummarisedOnce(t *testing.T) {
	t.Parallel()
	gone := httptest.NewServer(http.NotFoundHandler())
	defer gone.Close()
	env := pipelinetest.NewEnv(t, &pipelinetest.Script{}, "")
	client := search.NewClient(search.ClientOptions{Retries: -1})
	env.Engine.Fetcher = search.NewFetcher(client, search.FetchOptions{AllowPrivate: true})
	env.Engine.Sources = map[string]search.Source{"arxiv": &recordingSource{name: "arxiv", pdfURL: gone.URL + "/paper.pdf", results: func(string) int { return 3 }}}
	opt := env.Options(question)
	opt.Sources = []string{"arxiv"}
	evs, _ := pipelinetest.RunToEnd(t, env, opt)
	summaries := 0
	for _, ev := range evs {
		if ev.Type == pipeline.Warning && strings.Contains(ev.Message, "full texts could not be downloaded") {
			summaries++
			if !strings.Contains(ev.Message, "404") {
				t.Errorf("the warning does not say why: %q", ev.Message)
			}
		}
	}
	if summaries != 1 {
		t.Errorf("%d summary warnings, want exactly 1", summaries)
	}
}
