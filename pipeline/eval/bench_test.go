package eval_test

import (
	"context"
	"testing"
	"time"

	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/llm/ollamafake"
	"github.com/researchtui/researchtui/pipeline/eval"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
)

// BenchmarkEvalOneGPU is a full eval of the default set as a person with
// one GPU would run it (issue 40: under 15 minutes at 20 ms a token): the
// scripted model at an 8B model's length (Realistic), served one answer
// at a time at 20 ms a token after 300 ms to the first, prompts processed
// at 1,500 tokens a second, embeddings 50 ms a request. It reports the
// eval's wall time and the overall scores.
//
//	go test -run '^$' -bench EvalOneGPU -benchtime 1x ./pipeline/eval/
func BenchmarkEvalOneGPU(b *testing.B) {
	qs, _ := eval.Select(eval.DefaultSet)
	ws, err := eval.OpenWorlds(context.Background(), qs)
	if err != nil {
		b.Fatal(err)
	}
	defer ws.Close()
	var wall time.Duration
	var results []eval.Result
	for i := 0; i < b.N; i++ {
		for _, q := range qs {
			b.StopTimer()
			s := &pipelinetest.Script{RevisionRounds: 1, Realistic: true, ByReference: true, Topics: topics[q.ID].topics, Canonical: topics[q.ID].canonical}
			oll := ollamafake.New(ollamafake.Options{Responder: s.Responder(), TokenDelay: 20 * time.Millisecond, FirstTokenDelay: 300 * time.Millisecond,
				PrefillRate: 1500, TokensByChars: true, Parallel: 1, EmbedDelay: 50 * time.Millisecond})
			backend, err := llm.NewOllama(oll.URL, llm.OllamaOptions{})
			if err != nil {
				b.Fatal(err)
			}
			setup := eval.Setup{LLM: backend, Model: pipelinetest.Model, EmbedModel: pipelinetest.EmbedModel, ModelParallel: 1, Dir: b.TempDir()}
			b.StartTimer()
			start := time.Now()
			sum, err := eval.Run(context.Background(), setup, ws, []eval.Question{q}, 1, nil)
			wall += time.Since(start)
			b.StopTimer()
			oll.Close()
			if err != nil {
				b.Fatal(err)
			}
			results = append(results, sum.Results...)
		}
	}
	o := eval.Total(results)
	b.ReportMetric(wall.Seconds()/float64(b.N), "eval-wall-s")
	b.ReportMetric(o.Recall, "recall")
	b.ReportMetric(o.Precision, "precision")
	b.ReportMetric(o.FactsCovered, "facts")
	b.ReportMetric(o.SupportedShare, "supported")
	b.ReportMetric(o.Generated, "gen-tokens/run")
	b.ReportMetric(o.PromptTokens, "prompt-tokens/run")
	b.ReportMetric(o.ModelCalls, "calls/run")
}
