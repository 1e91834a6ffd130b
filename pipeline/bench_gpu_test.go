package pipeline_test

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/researchtui/researchtui/llm/ollamafake"
	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/pipeline/runopts"
)

// worldPrefill is prompt processing on the one GPU (an 8B model on a
// consumer card): 1,500 prompt tokens a second, with the runner's cache of
// the previous prompt's prefix.
const worldPrefill = 1500

// BenchmarkOneGPU runs a standard session in realWorld on one GPU: one
// request at a time, 300 ms to the first token plus prompt prefill at
// 1,500 tokens/s (less the prefix cached from the previous prompt), 20 ms
// per generated token, answers as long as an 8B model's. It reports what a
// person waits for and what the model is asked to write: wall time,
// generated tokens (in all and per agent kind), chat calls, prompt tokens
// processed and cached, sources analysed and cited, and generated tokens
// per analysed source.
//
//	go test -run '^$' -bench 'OneGPU$' -benchtime 1x -count 3 ./pipeline/
func BenchmarkOneGPU(b *testing.B) {
	for _, w := range []struct {
		name   string
		script func() *pipelinetest.Script
	}{
		{"writer=faithful", func() *pipelinetest.Script { return &pipelinetest.Script{RevisionRounds: 1, Realistic: true} }},
		// A writer that states findings by label, as its prompt invites
		// (write.go), instead of copying them.
		{"writer=by-reference", func() *pipelinetest.Script {
			return &pipelinetest.Script{RevisionRounds: 1, Realistic: true, ByReference: true}
		}},
		// A writer that paraphrases every finding and misattributes every
		// third sentence: the verifier's worst case, most sentences judged
		// by the model.
		{"writer=paraphrasing", func() *pipelinetest.Script {
			return &pipelinetest.Script{RevisionRounds: 1, Realistic: true, Careless: true, Paraphrase: true}
		}},
	} {
		b.Run(w.name, func(b *testing.B) { benchOneGPU(b, w.script) })
	}
}

func benchOneGPU(b *testing.B, newScript func() *pipelinetest.Script) {
	var wall, verifying time.Duration
	var gen, calls, prefilled, cached, analysed, cited int
	byKind := map[string]int{}
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		script := newScript()
		counter := &kindCounter{n: map[string]int{}}
		w := oneGPUWorld(b, counter.wrap(script.Responder()))
		b.StartTimer()
		start := time.Now()
		r, err := w.engine.Start(context.Background(), runopts.Options{Question: "How is software testing studied, and how are language models given tools for chemistry?",
			Model: pipelinetest.Model, EmbedModel: pipelinetest.EmbedModel, Sources: []string{"arxiv", "openalex"}, MaxRevisions: 2})
		if err != nil {
			b.Fatal(err)
		}
		for ev := range r.Events() {
			if ev.Review != nil && !ev.Review.Approved {
				_ = r.Decide(pipeline.Decision{Approve: true})
			}
			if ev.Type == pipeline.AnalysisDone {
				analysed++
			}
			if ev.Type == pipeline.AgentFinished && ev.Stage == pipeline.StageVerify {
				verifying += ev.Elapsed
			}
		}
		sess, err := r.Wait()
		if err != nil {
			b.Fatal(err)
		}
		wall += time.Since(start)
		b.StopTimer()
		rep, err := pipeline.LoadReport(w.engine.Store, sess.ID)
		if err != nil {
			b.Fatal(err)
		}
		cited += len(rep.Sources)
		gen += w.ollama.Served().CompletionTokens
		calls += len(w.ollama.ChatCalls())
		p, c := w.ollama.Prefill()
		prefilled += p
		cached += c
		for k, v := range counter.snapshot() {
			byKind[k] += v
		}
	}
	n := float64(b.N)
	b.ReportMetric(wall.Seconds()/n, "wall-s")
	b.ReportMetric(verifying.Seconds()/wall.Seconds(), "verify-share")
	b.ReportMetric(float64(gen)/n, "gen-tokens")
	b.ReportMetric(float64(calls)/n, "chat-calls")
	b.ReportMetric(float64(prefilled)/n, "prefill-tokens")
	b.ReportMetric(float64(cached)/n, "cached-tokens")
	b.ReportMetric(float64(analysed)/n, "analysed")
	b.ReportMetric(float64(cited)/n, "cited")
	if analysed > 0 {
		b.ReportMetric(float64(byKind[pipelinetest.Analyst])/float64(analysed), "gen/analysed")
	}
	kinds := make([]string, 0, len(byKind))
	for k := range byKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		b.ReportMetric(float64(byKind[k])/n, "gen-"+k)
	}
}

// oneGPUWorld is realWorld on one GPU: one request at a time, 300 ms to
// the first token plus prefill at 1,500 tokens/s less the cached prefix,
// 20 ms a generated token counted as characters/4.
func oneGPUWorld(b *testing.B, responder ollamafake.Responder) *realWorld {
	return newWorld(b, ollamafake.Options{Responder: responder, TokenDelay: worldToken,
		FirstTokenDelay: worldFirstToken, PrefillRate: worldPrefill, TokensByChars: true, Parallel: 1, EmbedDelay: 50 * time.Millisecond})
}

// kindCounter counts the tokens (characters / 4, as the fake server does
// with TokensByChars) each agent kind is answered with.
type kindCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (k *kindCounter) wrap(inner ollamafake.Responder) ollamafake.Responder {
	return func(call ollamafake.ChatCall) ollamafake.Reply {
		rep := inner(call)
		words := len(rep.Content) / 4 // as TokensByChars counts, near enough
		if call.Think {
			words += len(rep.Thinking) / 4
		}
		k.mu.Lock()
		k.n[pipelinetest.KindOf(call)] += words
		k.mu.Unlock()
		return rep
	}
}

func (k *kindCounter) snapshot() map[string]int {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := map[string]int{}
	for kk, v := range k.n {
		out[kk] = v
	}
	return out
}
