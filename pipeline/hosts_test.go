package pipeline_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/search"
)

// refusingHosts counts download attempts and refuses every connection.
type refusingHosts struct {
	mu       sync.Mutex
	attempts map[string]int
	inner    docHosts
}

func (r *refusingHosts) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.attempts[req.URL.Hostname()]++
	r.mu.Unlock()
	req.URL.Host = "www.nature.com" // docHosts refuses this one
	return r.inner.RoundTrip(req)
}

// TestUnreachableHostIsGivenUpForTheRun: every arXiv PDF lives on one host,
// and that host refuses connections. The first download finds out (with
// the client's retries); the other links on that host are not tried, and
// those sources are read from their abstracts.
func TestUnreachableHostIsGivenUpForTheRun(t *testing.T) {
	t.Parallel()
	env := pipelinetest.NewEnv(t, nil, "")
	hosts := &refusingHosts{attempts: map[string]int{}}
	env.Client.SetHostLimit("arxiv.org", 50*time.Millisecond) // serialised, as arXiv's own 3 s are
	env.Engine.Fetcher = search.NewFetcher(env.Client, search.FetchOptions{Transport: hosts})
	evs, _ := pipelinetest.RunToEnd(t, env, env.Options(question))
	pdfs := 0
	for _, ev := range evs {
		if ev.Source != nil && ev.Type == "document_read" && strings.Contains(ev.Message, "given up earlier") {
			pdfs++
		}
	}
	if pdfs < 2 {
		t.Fatalf("%d sources skipped the dead host; the run needs several arXiv PDFs for this test", pdfs)
	}
	if n := hosts.attempts["arxiv.org"]; n != 1 {
		t.Errorf("arxiv.org was tried %d times; once is enough to know it is down", n)
	}
}
