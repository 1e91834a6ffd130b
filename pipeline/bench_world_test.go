package pipeline_test

import (
	"bytes"
	"context"
	"hash/fnv"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/llm/ollamafake"
	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/search/sourcefake"
	"github.com/researchtui/researchtui/store"
)

// realWorld is the world users live in (ARCHITECTURE.md §7): an 8B model on a
// consumer GPU (20 ms a token, 300 ms to the first), one request at a time
// (Ollama's default OLLAMA_NUM_PARALLEL), APIs that answer in 300 ms,
// arXiv's 3 s spacing on its API and on its PDF host, PDFs that take
// 0.5-1 s to download, and a publisher host that refuses connections.
type realWorld struct {
	ollama   *ollamafake.Server
	arxiv    *sourcefake.Server
	openalex *sourcefake.Server
	docs     *docHosts
	engine   *pipeline.Engine
}

const (
	worldToken      = 20 * time.Millisecond
	worldFirstToken = 300 * time.Millisecond
	worldAPI        = 300 * time.Millisecond
	worldArxivGap   = 3 * time.Second
)

func newRealWorld(tb testing.TB, script *pipelinetest.Script, parallel int) *realWorld {
	tb.Helper()
	return newWorld(tb, ollamafake.Options{Responder: script.Responder(), TokenDelay: worldToken,
		FirstTokenDelay: worldFirstToken, Parallel: parallel, EmbedDelay: 50 * time.Millisecond})
}

// newWorld is realWorld with the model server configured by opt.
func newWorld(tb testing.TB, opt ollamafake.Options) *realWorld {
	tb.Helper()
	parallel := opt.Parallel
	pdf, err := os.ReadFile("../../shared/fixtures/pdf/arxiv-1111.2011v2.pdf")
	if err != nil {
		tb.Skip("needs ../shared/fixtures beside the checkout: ", err)
	}
	w := &realWorld{docs: &docHosts{pdf: pdf}}
	w.ollama = ollamafake.New(opt)
	tb.Cleanup(w.ollama.Close)
	w.arxiv = sourcefake.NewWith(sourcefake.Options{Latency: worldAPI})
	tb.Cleanup(w.arxiv.Close)
	w.openalex = sourcefake.NewWith(sourcefake.Options{Latency: worldAPI})
	tb.Cleanup(w.openalex.Close)
	st, err := store.Open(tb.TempDir()+"/researchtui.db", store.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	backend, err := llm.NewOllama(w.ollama.URL, llm.OllamaOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	// The client's real defaults (retries, backoff, arXiv's limit on
	// arxiv.org); the fake arXiv API gets arXiv's spacing too.
	client := search.NewClient(search.ClientOptions{})
	client.SetHostLimit(strings.TrimPrefix(w.arxiv.URL, "http://"), worldArxivGap)
	fetcher := search.NewFetcher(client, search.FetchOptions{Transport: w.docs})
	w.engine = &pipeline.Engine{
		Store: st, LLM: backend, Fetcher: fetcher, ModelParallel: parallel,
		Sources: map[string]search.Source{
			"arxiv":    search.NewArxiv(client, w.arxiv.ArxivURL()),
			"openalex": search.NewOpenAlex(client, w.openalex.OpenAlexURL(), ""),
		},
	}
	return w
}

// docHosts simulates the hosts documents come from: arxiv.org serves the
// recorded arXiv PDF after 0.5-1 s, www.nature.com refuses connections,
// anything else has no such document.
type docHosts struct {
	pdf []byte

	mu        sync.Mutex
	downloads int
	refused   int
}

func (d *docHosts) RoundTrip(req *http.Request) (*http.Response, error) {
	switch req.URL.Hostname() {
	case "arxiv.org":
		h := fnv.New32a()
		io.WriteString(h, req.URL.Path)
		delay := 500*time.Millisecond + time.Duration(h.Sum32()%500)*time.Millisecond
		select {
		case <-time.After(delay):
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
		d.mu.Lock()
		d.downloads++
		d.mu.Unlock()
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/pdf"}},
			Body: io.NopCloser(bytes.NewReader(d.pdf)), ContentLength: int64(len(d.pdf)), Request: req}, nil
	case "www.nature.com":
		d.mu.Lock()
		d.refused++
		d.mu.Unlock()
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	}
	return &http.Response{StatusCode: 404, Body: io.NopCloser(strings.NewReader("not found")), Request: req}, nil
}

// BenchmarkRealWorldRun runs a standard session in realWorld, with the
// scripted model's short answers and with answers as long as an 8B
// model's (pipelinetest.Script.Realistic), and reports
// model utilisation (the share of the wall time in which the model server
// is generating or embedding; queueing doesn't count) and wall time ÷ the
// lower bound max(model busy time, the arXiv PDF chain: the first search
// answer, then one download per 3 s).
//
//	go test -run '^$' -bench RealWorld -benchtime 1x -count 3 ./pipeline/
func BenchmarkRealWorldRun(b *testing.B) {
	worlds := []struct {
		name      string
		realistic bool
		parallel  int
		gaps      bool
		deadline  time.Duration
	}{
		{"answers=short/parallel=1", false, 1, false, 0},              // the scripted model's terse answers
		{"answers=8B/parallel=1", true, 1, false, 0},                  // answers as long as an 8B model's
		{"answers=8B/parallel=2", true, 2, false, 0},                  // OLLAMA_NUM_PARALLEL=2
		{"answers=8B/gaps", true, 1, true, 0},                         // a gap remains: one follow-up round
		{"answers=8B/deadline=30s", true, 1, false, 30 * time.Second}, // --deadline 30s
	}
	for _, wd := range worlds {
		realistic, parallel := wd.realistic, wd.parallel
		b.Run(wd.name, func(b *testing.B) {
			var wall, busy, bound, cpu time.Duration
			var pdfs, refused, chats int
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				script := &pipelinetest.Script{RevisionRounds: 1, Realistic: realistic}
				if wd.gaps {
					script.MissingSlot, script.GapQueries = "open problems", []string{"del_maestro luttinger liquids"}
				}
				w := newRealWorld(b, script, parallel)
				b.StartTimer()
				start, cpu0 := time.Now(), processCPU()
				r, err := w.engine.Start(context.Background(), runopts.Options{Question: "How is software testing studied, and how are language models given tools for chemistry?",
					Model: pipelinetest.Model, EmbedModel: pipelinetest.EmbedModel, Sources: []string{"arxiv", "openalex"}, MaxRevisions: 2, Deadline: wd.deadline})
				if err != nil {
					b.Fatal(err)
				}
				pipelinetest.ApproveAll(b, r, 0)
				el := time.Since(start)
				cpu += processCPU() - cpu0
				b.StopTimer()
				wall += el
				busy += w.ollama.Busy()
				chats += len(w.ollama.ChatCalls())
				w.docs.mu.Lock()
				pdfs += w.docs.downloads
				refused += w.docs.refused
				chain := worldAPI + time.Duration(max(w.docs.downloads-1, 0))*worldArxivGap + time.Second
				w.docs.mu.Unlock()
				bound += max(w.ollama.Busy(), chain)
			}
			b.ReportMetric(float64(busy)/float64(wall), "model-util")
			b.ReportMetric(float64(wall)/float64(bound), "wall/bound")
			b.ReportMetric(float64(wall)/float64(b.N)/1e9, "wall-s")
			b.ReportMetric(float64(pdfs)/float64(b.N), "pdfs")
			b.ReportMetric(float64(refused)/float64(b.N), "refused")
			b.ReportMetric(float64(chats)/float64(b.N), "chat-calls")
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s")
		})
	}
}

// BenchmarkRealWorldFollowUp: in realWorld with 8B-length answers, a run,
// then a follow-up its sources answer (covered) and one they don't
// (uncovered); wall time and chat calls of each.
//
//	go test -run '^$' -bench RealWorldFollowUp -benchtime 1x ./pipeline/
func BenchmarkRealWorldFollowUp(b *testing.B) {
	for i := 0; i < b.N; i++ {
		script := &pipelinetest.Script{RevisionRounds: 1, Realistic: true,
			FollowUpTopics: []pipelinetest.Topic{{Question: "What is known about Luttinger liquids of helium in nanopores?", Strict: "luttinger liquid helium nanopores", Moderate: "luttinger liquid", Broad: "helium"}},
			GapQueries:     []string{"del_maestro luttinger liquids"}}
		w := newRealWorld(b, script, 1)
		measure := func(start func() (*pipeline.Run, error)) (time.Duration, int) {
			calls := len(w.ollama.ChatCalls())
			t0 := time.Now()
			r, err := start()
			if err != nil {
				b.Fatal(err)
			}
			pipelinetest.ApproveAll(b, r, 0)
			return time.Since(t0), len(w.ollama.ChatCalls()) - calls
		}
		var id string
		runWall, runCalls := measure(func() (*pipeline.Run, error) {
			r, err := w.engine.Start(context.Background(), runopts.Options{Question: "How is software testing studied, and how are language models given tools for chemistry?",
				Model: pipelinetest.Model, EmbedModel: pipelinetest.EmbedModel, Sources: []string{"arxiv", "openalex"}, MaxRevisions: 2})
			if r != nil {
				id = r.ID()
			}
			return r, err
		})
		// The scripted planner plans the first follow-up topic; the covered
		// question is answered by the run's own sources only when the topic
		// is the run's, so the two follow-ups use two scripts' worth of topics.
		uncWall, uncCalls := measure(func() (*pipeline.Run, error) {
			return w.engine.Ask(context.Background(), id, "What is known about Luttinger liquids of helium in nanopores?", nil)
		})
		script.FollowUpTopics = nil // the planner now asks what the run already read
		covWall, covCalls := measure(func() (*pipeline.Run, error) {
			return w.engine.Ask(context.Background(), id, "Which software testing techniques do these papers study?", nil)
		})
		b.ReportMetric(runWall.Seconds(), "run-s")
		b.ReportMetric(float64(runCalls), "run-calls")
		b.ReportMetric(covWall.Seconds(), "covered-s")
		b.ReportMetric(float64(covCalls), "covered-calls")
		b.ReportMetric(uncWall.Seconds(), "uncovered-s")
		b.ReportMetric(float64(uncCalls), "uncovered-calls")
	}
}
