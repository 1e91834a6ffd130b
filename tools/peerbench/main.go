// Command peerbench compares researchtui with a peer research assistant
// (u14app/deep-research, run by hand beside it) in the one-GPU world of
// issue 24: one model request served at a time with a prefill cost, 20 ms
// per generated token, web search at 300 ms. Both programs are pointed at
// the same fake model server, whose answers follow one set of rules for
// both (peer.go), and the same recorded SearxNG answer. It prints, per
// question and program, the medians of wall time, generated tokens, chat
// calls, prompt tokens processed and distinct sources cited, and counts
// citations that name no source.
//
//	go build -o /tmp/researchtui . && go run ./tools/peerbench -researchtui /tmp/researchtui \
//	    -peer http://127.0.0.1:3000/api/sse      # the peer's SSE API, started with
//	    # OLLAMA_API_BASE_URL=http://127.0.0.1:11499 SEARXNG_API_BASE_URL=http://127.0.0.1:18899
//
// Without -peer it measures researchtui alone. -serve starts the world for
// the first question and waits, to try either program by hand.
package main

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"time"

	"github.com/researchtui/researchtui/pipeline/pipelinetest"
)

// question is one benchmark question with the sub-questions and queries
// the model plans for it (the same for both programs).
type question struct {
	text      string
	topics    []pipelinetest.Topic
	canonical string
}

// The recorded SearxNG answer is about Python, so the questions are too.
var questions = []question{
	{"Why is Python so widely used as a programming language?", []pipelinetest.Topic{
		{Question: "What makes Python easy to learn and use?", Strict: "python easy to learn", Moderate: "python learning", Broad: "python"},
		{Question: "What kinds of work is Python used for?", Strict: "python uses", Moderate: "python applications", Broad: "python"},
	}, "python"},
	{"How is the Python programming language designed?", []pipelinetest.Topic{
		{Question: "What is Python's design philosophy?", Strict: "python design philosophy", Moderate: "python design", Broad: "python"},
		{Question: "Which programming paradigms does Python support?", Strict: "python programming paradigms", Moderate: "python paradigms", Broad: "python"},
	}, "python"},
}

func main() {
	bin := flag.String("researchtui", "", "the researchtui binary to measure")
	peerURL := flag.String("peer", "", "the peer's SSE endpoint (u14app/deep-research /api/sse), already running")
	runs := flag.Int("runs", 3, "runs per question and program (medians are printed)")
	modelAddr := flag.String("model-addr", "127.0.0.1:11499", "fixed address of the fake model server")
	searchAddr := flag.String("search-addr", "127.0.0.1:18899", "fixed address of the fake SearxNG")
	serve := flag.Bool("serve", false, "serve the world for the first question and wait")
	verbose := flag.Bool("v", false, "also print each agent's calls and generated tokens (totals over the runs)")
	fullText := flag.Bool("full-text", false, "let researchtui download the web pages it finds (the peer reads only SearxNG's snippets; the pages are on the real internet, which this world does not serve: a download fails or takes what your network takes)")
	flag.StringVar(&dumpTo, "dump", "", "append every researchtui call's prompt and answer to this file")
	flag.Parse()

	var modelBoard, searchBoard switchboard
	for addr, h := range map[string]http.Handler{*modelAddr: &modelBoard, *searchAddr: &searchBoard} {
		srv := &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 10 * time.Second}
		go func() {
			if err := srv.ListenAndServe(); err != nil {
				fmt.Fprintln(os.Stderr, "peerbench:", err)
				os.Exit(1)
			}
		}()
	}
	start := func(q question) *world {
		w := newWorld(q)
		modelBoard.point(w.model.URL)
		searchBoard.point(w.search.URL)
		return w
	}
	if *serve {
		w := start(questions[0])
		defer w.close()
		fmt.Printf("export OLLAMA_HOST=http://%s RESEARCHTUI_SEARXNG_URL=http://%s RESEARCHTUI_MODEL=%s\n", *modelAddr, *searchAddr, chatModel)
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt)
		<-sig
		return
	}
	if *bin == "" && *peerURL == "" {
		fmt.Fprintln(os.Stderr, "peerbench: give -researchtui, -peer or both")
		os.Exit(2)
	}
	env := runEnv{modelURL: "http://" + *modelAddr, searchURL: "http://" + *searchAddr, fullText: *fullText}
	fmt.Printf("%-8s %-12s %8s %8s %6s %9s %6s %6s\n", "question", "program", "wall-s", "gen-tok", "calls", "prefill", "cited", "bogus")
	for qi, q := range questions {
		for _, prog := range []struct {
			name string
			run  func(question) (result, error)
			on   bool
		}{
			{"researchtui", func(q question) (result, error) { return env.researchtui(*bin, q) }, *bin != ""},
			{"peer", func(q question) (result, error) { return runPeer(*peerURL, q) }, *peerURL != ""},
		} {
			if !prog.on {
				continue
			}
			var rs []result
			byKind := &tally{calls: map[string]int{}, words: map[string]int{}}
			for i := 0; i < *runs; i++ {
				w := start(q)
				t0 := time.Now()
				r, err := prog.run(q)
				r.wall = time.Since(t0)
				r.gen, r.calls = w.model.Served().CompletionTokens, len(w.model.ChatCalls())
				r.prefill, _ = w.model.Prefill()
				for k, n := range w.tally.calls {
					byKind.calls[k] += n
					byKind.words[k] += w.tally.words[k]
				}
				w.close()
				if err != nil {
					fmt.Fprintf(os.Stderr, "peerbench: %s, question %d: %v\n", prog.name, qi+1, err)
					os.Exit(1)
				}
				rs = append(rs, r)
			}
			m := medians(rs)
			fmt.Printf("q%-7d %-12s %8.1f %8d %6d %9d %6d %6d\n", qi+1, prog.name, m.wall.Seconds(), m.gen, m.calls, m.prefill, m.cited, m.bogus)
			if *verbose {
				kinds := make([]string, 0, len(byKind.calls))
				for k := range byKind.calls {
					kinds = append(kinds, k)
				}
				sort.Strings(kinds)
				for _, k := range kinds {
					fmt.Printf("         %-20s %4d calls %6d tokens\n", k, byKind.calls[k], byKind.words[k])
				}
			}
		}
	}
}

// result is one run's measure.
type result struct {
	wall                       time.Duration
	gen, calls, prefill, cited int
	bogus                      int // citations naming no listed source
}

// medians takes the median of each figure on its own.
func medians(rs []result) result {
	med := func(get func(result) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = get(r)
		}
		sort.Float64s(v)
		return v[len(v)/2]
	}
	return result{
		wall:    time.Duration(med(func(r result) float64 { return float64(r.wall) })),
		gen:     int(med(func(r result) float64 { return float64(r.gen) })),
		calls:   int(med(func(r result) float64 { return float64(r.calls) })),
		prefill: int(med(func(r result) float64 { return float64(r.prefill) })),
		cited:   int(med(func(r result) float64 { return float64(r.cited) })),
		bogus:   int(med(func(r result) float64 { return float64(r.bogus) })),
	}
}
