package pipeline_test

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/search"
)

// stuckHosts serves the recorded arXiv PDF at once, except for the paths
// hang says hang: those send nothing until the request is given up.
type stuckHosts struct {
	pdf    []byte
	hang   func(path string) bool
	hung   atomic.Int32
	served atomic.Int32
}

func (s *stuckHosts) RoundTrip(req *http.Request) (*http.Response, error) {
	if s.hang(req.URL.Path) {
		s.hung.Add(1)
		<-req.Context().Done()
		return nil, req.Context().Err()
	}
	s.served.Add(1)
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/pdf"}},
		Body: io.NopCloser(bytes.NewReader(s.pdf)), ContentLength: int64(len(s.pdf)), Request: req}, nil
}

func stuckEnv(t *testing.T, hang func(string) bool) (*pipelinetest.Env, *stuckHosts) {
	pdf, err := os.ReadFile("../../shared/fixtures/pdf/arxiv-1111.2011v2.pdf")
	if err != nil {
		t.Skip("needs ../shared/fixtures beside the checkout: ", err)
	}
	env := pipelinetest.NewEnv(t, nil, "")
	hosts := &stuckHosts{pdf: pdf, hang: hang}
	env.Client.SetHostLimit("arxiv.org", 0)
	// Only the grace period and the deadline may cut a download here, not
	// the progress rule, however slow the machine.
	env.Engine.Fetcher = search.NewFetcher(env.Client, search.FetchOptions{Transport: hosts,
		Progress: search.ProgressRule{FirstByte: time.Hour, Window: time.Hour, MinBytes: 1}})
	return env, hosts
}

// TestAStragglerGetsAGracePeriodThenTheAbstract: one PDF never arrives.
// Once every other source of its sub-question is analysed, it gets the
// grace period, then the run goes on from its abstract and says so.
func TestAStragglerGetsAGracePeriodThenTheAbstract(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var stuck string
	env, hosts := stuckEnv(t, func(path string) bool {
		mu.Lock()
		defer mu.Unlock()
		if stuck == "" {
			stuck = path // the first PDF asked for
		}
		return path == stuck
	})
	opt := env.Options(question)
	opt.Grace = 200 * time.Millisecond
	evs, sess := pipelinetest.RunToEnd(t, env, opt)
	if hosts.hung.Load() != 1 || hosts.served.Load() == 0 {
		t.Fatalf("%d downloads hung, %d served", hosts.hung.Load(), hosts.served.Load())
	}
	graced := false
	for _, ev := range evs {
		if ev.Type == pipeline.DocumentRead && strings.Contains(ev.Message, "skipped after 200ms grace") {
			graced = true
		}
	}
	if !graced {
		t.Error("no source says it was skipped after the grace period")
	}
	rep, _ := pipeline.LoadReport(env.Store, sess.ID)
	if !strings.Contains(rep.Markdown, "Not read in full:") || !strings.Contains(rep.Markdown, "grace") {
		t.Errorf("the method note does not name what was not read:\n%s", rep.Markdown)
	}
}

// TestDeadlineStopsNewWorkAndWrites: every PDF hangs and the deadline
// comes first. Downloads are cut, nothing new is analysed or reviewed, and
// a report is written from what there is, naming what was left unread.
func TestDeadlineStopsNewWorkAndWrites(t *testing.T) {
	t.Parallel()
	env, _ := stuckEnv(t, func(string) bool { return true })
	opt := env.Options(question)
	opt.Deadline = 300 * time.Millisecond
	opt.Grace = time.Hour // only the deadline cuts
	_, sess := pipelinetest.RunToEnd(t, env, opt)
	rep, err := pipeline.LoadReport(env.Store, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if calls(env, pipelinetest.Reviewer) != 0 {
		t.Errorf("%d review calls after the deadline", calls(env, pipelinetest.Reviewer))
	}
	if !strings.Contains(rep.Markdown, "skipped at the deadline") {
		t.Errorf("the method note does not say what the deadline cut:\n%s", rep.Markdown)
	}
	if sess.Report == "" {
		t.Error("no report was written")
	}
}
