package pipeline_test

import (
	"context"
	"testing"
	"time"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/search"
)

// BenchmarkUpdateVsRerun prices a living review's update against running
// the question again, on one GPU (BenchmarkOneGPU's model server: 20 ms a
// token, one request at a time) with the API at 300 ms: the world of the
// update tests (five works read, then two on topic, one off topic, one
// citing work and a preprint's published version appear). It reports the
// wall time and generated tokens of the update and of a fresh run on the
// grown world, and the update's share of each.
//
//	go test -run '^$' -bench UpdateVsRerun -benchtime 1x -count 3 ./pipeline/
func BenchmarkUpdateVsRerun(b *testing.B) {
	var upWall, reWall time.Duration
	var upGen, reGen, upCalls, reCalls int
	run := func(w *realWorld, counter *kindCounter, start func() (*pipeline.Run, error)) (time.Duration, int, int) {
		gen0, calls0 := sum(counter.snapshot()), len(w.ollama.ChatCalls())
		t0 := time.Now()
		r, err := start()
		if err != nil {
			b.Fatal(err)
		}
		if sess := pipelinetest.ApproveAll(b, r, 0); sess.Status != "completed" {
			b.Fatalf("the run ended %s", sess.Status)
		}
		return time.Since(t0), sum(counter.snapshot()) - gen0, len(w.ollama.ChatCalls()) - calls0
	}
	opt := runopts.Options{Question: question, Model: pipelinetest.Model, EmbedModel: pipelinetest.EmbedModel, Sources: []string{"openalex"}, MaxRevisions: 2}
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		script := shelfScript()
		script.Realistic, script.RevisionRounds = true, 1
		counter := &kindCounter{n: map[string]int{}}
		w := oneGPUWorld(b, counter.wrap(script.Responder()))
		shelf := firstShelf()
		shelf.Latency = worldAPI
		w.engine.Sources = map[string]search.Source{"openalex": shelf}
		var id string
		run(w, counter, func() (*pipeline.Run, error) {
			r, err := w.engine.Start(context.Background(), opt)
			if err == nil {
				id = r.ID()
			}
			return r, err
		})
		grow(shelf)
		b.StartTimer()
		d, g, c := run(w, counter, func() (*pipeline.Run, error) { return w.engine.Update(context.Background(), id) })
		upWall, upGen, upCalls = upWall+d, upGen+g, upCalls+c

		b.StopTimer()
		script2 := shelfScript()
		script2.Realistic, script2.RevisionRounds = true, 1
		counter2 := &kindCounter{n: map[string]int{}}
		w2 := oneGPUWorld(b, counter2.wrap(script2.Responder()))
		grown := firstShelf()
		grown.Latency = worldAPI
		grow(grown)
		w2.engine.Sources = map[string]search.Source{"openalex": grown}
		d, g, c = run(w2, counter2, func() (*pipeline.Run, error) { return w2.engine.Start(context.Background(), opt) })
		reWall, reGen, reCalls = reWall+d, reGen+g, reCalls+c
	}
	n := float64(b.N)
	b.ReportMetric(upWall.Seconds()/n, "update-s")
	b.ReportMetric(reWall.Seconds()/n, "rerun-s")
	b.ReportMetric(float64(upGen)/n, "update-gen-tokens")
	b.ReportMetric(float64(reGen)/n, "rerun-gen-tokens")
	b.ReportMetric(float64(upCalls)/n, "update-calls")
	b.ReportMetric(float64(reCalls)/n, "rerun-calls")
	b.ReportMetric(float64(upGen)/float64(max(reGen, 1)), "gen-ratio")
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
