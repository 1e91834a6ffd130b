package pipeline_test

import (
	"context"
	"testing"
	"time"

	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/llm/ollamafake"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
)

// BenchmarkFullRun runs a whole standard-depth session (plan, research,
// read, index, retrieve, analyse, write, one revision round, finalise)
// against the fake Ollama with a simulated generation delay per token, and
// reports wall time ÷ model-busy time ("overhead-x"; 1.00 is perfect) and
// model utilisation (the share of wall time in which the model server is
// generating or embedding, as its own meter sees it).
//
//	go test -run '^$' -bench FullRun -benchtime 5x ./pipeline/
func BenchmarkFullRun(b *testing.B) {
	for _, delay := range []time.Duration{2 * time.Millisecond, 10 * time.Millisecond} {
		b.Run("token_delay="+delay.String(), func(b *testing.B) {
			var wall, busy time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				env := pipelinetest.NewEnv(b, &pipelinetest.Script{RevisionRounds: 1}, "")
				slow := ollamafake.New(ollamafake.Options{Responder: env.Script.Responder(), TokenDelay: delay})
				backend, err := llm.NewOllama(slow.URL, llm.OllamaOptions{})
				if err != nil {
					b.Fatal(err)
				}
				env.Engine.LLM = backend
				b.StartTimer()
				start := time.Now()
				r, err := env.Engine.Start(context.Background(), env.Options(question))
				if err != nil {
					b.Fatal(err)
				}
				pipelinetest.ApproveAll(b, r, 0)
				wall += time.Since(start)
				busy += slow.Busy()
				b.StopTimer()
				slow.Close()
			}
			b.ReportMetric(float64(wall)/float64(busy), "overhead-x")
			b.ReportMetric(100*float64(busy)/float64(wall), "model-util-%")
		})
	}
}
