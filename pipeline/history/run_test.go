package history_test

import (
	"context"
	"testing"
	"time"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/store"
)

const question = "How is software testing studied, and how are language models given tools for chemistry?"

// runToEnd runs opt to completion, approving every review.
func runToEnd(t *testing.T, env *pipelinetest.Env, opt pipeline.Options) ([]pipeline.Event, store.Session) {
	t.Helper()
	r, err := env.Engine.Start(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	var evs []pipeline.Event
	timeout := time.After(60 * time.Second)
	for done := false; !done; {
		select {
		case ev, ok := <-r.Events():
			if !ok {
				done = true
				break
			}
			evs = append(evs, ev)
			if ev.Type == pipeline.ReviewRequested {
				if err := r.Decide(pipeline.Decision{Approve: true}); err != nil {
					t.Errorf("Decide: %v", err)
				}
			}
		case <-timeout:
			t.Fatal("run did not finish in 60 s")
		}
	}
	sess, err := r.Wait()
	if err != nil || sess.Status != store.StatusCompleted {
		t.Fatalf("status %q err %v, want completed", sess.Status, err)
	}
	return evs, sess
}
