package pipeline_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/researchtui/researchtui/llm/ollamafake"
	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/history"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/search/sourcefake"
)

// BenchmarkOneGPUBreadth runs the labelled questions of the recorded
// Semantic Scholar pools (rank_questions_test.go, rank_pools_test.go:
// on-topic papers known by title; the Kubernetes and turing-2 pools are
// held out from the tests), each pool ranked by the query as the real API
// ranks, with a screen that judges like a competent model and errs on one
// title in ten (SCREEN=none: one with no judgement) and analysts that judge
// what they read as well (ANALYST=blind: analysts without judgement), at standard depth on
// one GPU (BenchmarkOneGPU's model server;
// the API at 300 ms and one request a second, as Semantic Scholar allows
// without a key) and reports what breadth costs: wall time, generated
// tokens, sources included (cited), generated tokens per included source,
// recall (on-topic cited ÷ the pool's on-topic works that can be read;
// recall-labelled ÷ all it labels), precision (on-topic share of what is
// cited), and the screen's prompt and generated tokens.
//
//	go test -run '^$' -bench OneGPUBreadth -benchtime 1x -count 3 ./pipeline/
func BenchmarkOneGPUBreadth(b *testing.B) {
	for _, c := range append([]rankCase{turingTestCase, turingCompleteCase}, poolCases...) {
		b.Run(strings.ReplaceAll(c.name, " ", "-"), func(b *testing.B) {
			var wall time.Duration
			var gen, included, on, calls, prefilled, screenPrompt, screenGen int
			byKind, callsByKind, prefillByKind, quality := map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				screen := benchScreen(c)
				screen.Seed += breadthDraws[c.name] // each run (-count) a different draw of the screen's and analysts' errors
				breadthDraws[c.name]++
				script := &pipelinetest.Script{RevisionRounds: 1, Realistic: true, ByReference: true, Topics: c.topics, Canonical: c.canonical, Screen: screen}
				counter := &kindCounter{n: map[string]int{}}
				w := oneGPUWorld(b, counter.wrap(script.Responder()))
				pool := c.pool
				if pool == "" {
					pool = "turing"
				}
				s2 := sourcefake.NewWith(sourcefake.Options{Latency: worldAPI, Pool: pool})
				b.Cleanup(s2.Close)
				client := search.NewClient(search.ClientOptions{})
				client.SetHostLimit(strings.TrimPrefix(s2.URL, "http://"), time.Second)
				w.engine.Sources["semanticscholar"] = search.NewSemanticScholar(client, s2.SemanticScholarURL(), "")
				b.StartTimer()
				start := time.Now()
				r, err := w.engine.Start(context.Background(), runopts.Options{Question: c.question,
					Model: pipelinetest.Model, EmbedModel: pipelinetest.EmbedModel, Sources: []string{"semanticscholar"}, MaxRevisions: 2})
				if err != nil {
					b.Fatal(err)
				}
				sess := pipelinetest.ApproveAll(b, r, 0)
				wall += time.Since(start)
				b.StopTimer()
				if d, err := history.LoadDetail(w.engine.Store, sess.ID); err == nil && d.Screen != nil {
					screenPrompt += d.Screen.PromptTokens
					screenGen += d.Screen.CompletionTokens
				}
				rep, err := pipeline.LoadReport(w.engine.Store, sess.ID)
				if err != nil {
					b.Fatal(err)
				}
				included += len(rep.Sources)
				for _, s := range rep.Sources {
					if c.on(s.Title) {
						on++
					}
				}
				q := scholarly(rep)
				for k, v := range q {
					quality[k] += v
				}
				gen += w.ollama.Served().CompletionTokens
				calls += len(w.ollama.ChatCalls())
				for _, call := range w.ollama.ChatCalls() {
					callsByKind[pipelinetest.KindOf(call)]++
					prefillByKind[pipelinetest.KindOf(call)] += w.ollama.PrefillOf(call.N)
				}
				dumpCalls(b, w.ollama.ChatCalls(), w.ollama.PrefillOf)
				p, _ := w.ollama.Prefill()
				prefilled += p
				for k, v := range counter.snapshot() {
					byKind[k] += v
				}
			}
			n := float64(b.N)
			b.ReportMetric(wall.Seconds()/n, "wall-s")
			b.ReportMetric(float64(gen)/n, "gen-tokens")
			b.ReportMetric(float64(included)/n, "included")
			if included > 0 {
				b.ReportMetric(float64(gen)/float64(included), "gen/included")
				b.ReportMetric(float64(on)/float64(included), "precision")
			}
			b.ReportMetric(float64(on)/n/float64(len(c.onTopic)), "recall-labelled")
			b.ReportMetric(float64(on)/n/float64(readableOnTopic(c)), "recall")
			b.ReportMetric(float64(screenPrompt)/n, "screen-prompt")
			b.ReportMetric(float64(screenGen)/n, "screen-gen")
			b.ReportMetric(float64(calls)/n, "chat-calls")
			b.ReportMetric(float64(prefilled)/n, "prefill-tokens")
			for k, v := range byKind {
				b.ReportMetric(float64(v)/n, "gen-"+k)
			}
			for _, k := range []string{"we-cited", "repeated", "dollar", "front-matter", "fragment"} {
				b.ReportMetric(float64(quality[k])/n, k) // issue 46's acceptance: each 0
			}
			for k, v := range callsByKind {
				b.ReportMetric(float64(v)/n, "calls-"+k)
			}
			for k, v := range prefillByKind {
				b.ReportMetric(float64(v)/n, "prefill-"+k)
			}
		})
	}
}

// dumpCalls writes each chat call's messages, with the prompt tokens it
// processed, to the file DUMP_CALLS names, to see what fills the prefill.
func dumpCalls(b *testing.B, calls []ollamafake.ChatCall, prefillOf func(int) int) {
	path := os.Getenv("DUMP_CALLS")
	if path == "" {
		return
	}
	var out strings.Builder
	for _, c := range calls {
		fmt.Fprintf(&out, "===== call %d %s (prefill %d)\n", c.N, pipelinetest.KindOf(c), prefillOf(c.N))
		for _, m := range c.Messages {
			fmt.Fprintf(&out, "--- %s (%d chars)\n%s\n", m.Role, len(m.Content), m.Content)
		}
	}
	if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
		b.Fatal(err)
	}
}

// breadthDraws counts each question's runs, across -count, so that each
// draws its errors anew.
var breadthDraws = map[string]int{}

// benchScreen is the benchmark's screen for c: competent (ground truth,
// wrong on one title in ten) unless SCREEN=none. Its analysts judge what
// they read as competently (wrong as often, on other titles) unless
// ANALYST=blind: then every source read is analysed at confidence 0.8.
// Run i draws its errors with seed 7+i, so medians are over draws.
func benchScreen(c rankCase) *pipelinetest.ScreenScript {
	if os.Getenv("SCREEN") == "none" {
		return &pipelinetest.ScreenScript{}
	}
	sc := competent(c)
	sc.Reads = os.Getenv("ANALYST") != "blind"
	return sc
}

var (
	weWords    = regexp.MustCompile(`\b(?:[Ww]e|[Oo]ur|[Uu]s)\b`)
	citeMark   = regexp.MustCompile(`\[\d+(?:\s*[,;–-]\s*\d+)*\]`)
	frontTitle = regexp.MustCompile(`(?i)^(?:front matter|table of contents|contents|index|author index|subject index|preface|foreword|editorial board|proceedings of .*|program committee)\.?$`)
)

// scholarly counts what issue 46 says a report a scholar hands in has
// none of, in rep's prose (up to its references): cited sentences in the
// authors' first person, sentences said twice, "$" of LaTeX math, sources
// that are front matter, and cited fragments (a sentence that starts in
// lower case or mid-word).
func scholarly(rep pipeline.Report) map[string]int {
	prose := rep.Markdown
	if i := strings.Index(prose, "\n## References"); i >= 0 {
		prose = prose[:i]
	}
	q := map[string]int{"dollar": strings.Count(prose, "$")}
	seen := map[string]bool{}
	for _, line := range strings.Split(prose, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") || strings.HasPrefix(strings.TrimSpace(line), "|") {
			continue
		}
		for _, sent := range splitSentences(line) {
			plain := strings.TrimSpace(citeMark.ReplaceAllString(sent, ""))
			if len(strings.Fields(plain)) < 4 {
				continue
			}
			key := strings.ToLower(strings.Trim(plain, " .!?"))
			if seen[key] {
				q["repeated"]++
			}
			seen[key] = true
			if !citeMark.MatchString(sent) {
				continue
			}
			if weWords.MatchString(plain) {
				q["we-cited"]++
				showFault("we-cited", sent)
			}
			if r := []rune(strings.TrimLeft(plain, "-*+ 0123456789.")); len(r) > 0 && unicode.IsLower(r[0]) {
				q["fragment"]++
				showFault("fragment", sent)
			}
		}
	}
	for _, s := range rep.Sources {
		if frontTitle.MatchString(strings.TrimSpace(s.Title)) {
			q["front-matter"]++
		}
	}
	return q
}

// showFault prints a fault found, with SHOW_FAULTS=1.
func showFault(kind, sentence string) {
	if os.Getenv("SHOW_FAULTS") != "" {
		fmt.Fprintf(os.Stderr, "%s: %s\n", kind, sentence)
	}
}

// splitSentences cuts a line at ". ", "! ", "? " (after a citation too).
func splitSentences(line string) []string {
	var out []string
	start := 0
	for i := 0; i+1 < len(line); i++ {
		if strings.IndexByte(".!?", line[i]) >= 0 && line[i+1] == ' ' && !strings.HasSuffix(line[:i], " et al") && !strings.HasSuffix(line[:i], "e.g") && !strings.HasSuffix(line[:i], "i.e") {
			out = append(out, line[start:i+1])
			start = i + 2
		}
	}
	return append(out, line[start:])
}
