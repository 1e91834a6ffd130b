package pipeline_test

import (
	"context"
	"testing"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/store"
)

// BenchmarkRunThroughTheOwner prices a process that runs research beside
// another researchtui: the same run on the fakes (no simulated latency, so
// the store's share of the time is as large as it gets) against the
// process's own store, and as a client whose every store call crosses the
// owner's socket. Compare the two ns/op (and store-calls/op).
func BenchmarkRunThroughTheOwner(b *testing.B) {
	env, conn := pipelinetest.NewSharedEnv(b, &pipelinetest.Script{RevisionRounds: 1})
	for _, c := range []struct {
		name string
		db   store.DB
	}{{"own-store", env.Store}, {"through-owner", conn}} {
		b.Run(c.name, func(b *testing.B) {
			eng := &pipeline.Engine{Store: c.db, LLM: env.Engine.LLM, Sources: env.Engine.Sources}
			for b.Loop() {
				r, err := eng.Start(context.Background(), env.Options("How is software testing studied, and how are language models given tools for chemistry?"))
				if err != nil {
					b.Fatal(err)
				}
				for ev := range r.Events() {
					if ev.Type == pipeline.ReviewRequested {
						_ = r.Decide(pipeline.Decision{Approve: true})
					}
				}
				if s, err := r.Wait(); err != nil || s.Status != store.StatusCompleted {
					b.Fatalf("%q %v", s.Status, err)
				}
			}
		})
	}
}
