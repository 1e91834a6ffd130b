package pipeline_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/store"
)

// A run in one process watched from another: the watcher gets the run's
// events in order — stages, the writer's streamed text (never stored), the
// review it can decide, and the last event — and a session nobody runs
// cannot be watched.
func TestWatchingARunOfAnotherProcess(t *testing.T) {
	t.Parallel()
	env, conn := pipelinetest.NewSharedEnv(t, &pipelinetest.Script{RevisionRounds: 1})
	other := &pipeline.Engine{Store: conn, LLM: env.Engine.LLM, Sources: env.Engine.Sources}

	ctx := context.Background()
	r, err := other.Start(ctx, env.Options("How is software testing studied, and how are language models given tools for chemistry?"))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for range r.Events() {
		}
	}()
	w, err := env.Engine.Watch(ctx, r.ID())
	if err != nil {
		t.Fatal(err)
	}
	var last int64
	var streamed, stages int
	var end pipeline.EventType
	timeout := time.After(60 * time.Second)
	for done := false; !done; {
		select {
		case ev, ok := <-w.Events():
			if !ok {
				done = true
				break
			}
			if ev.Seq <= last {
				t.Fatalf("event %d after %d: out of order or repeated", ev.Seq, last)
			}
			last = ev.Seq
			switch ev.Type {
			case pipeline.TokenDelta:
				streamed += len(ev.Text)
			case pipeline.StageFinished:
				stages++
			case pipeline.ReviewRequested:
				if w.Pending() == nil {
					t.Error("a review is requested but the watcher has none pending")
				}
				if err := w.Decide(pipeline.Decision{Approve: true}); err != nil {
					t.Fatal(err)
				}
			}
			if ev.Type.Terminal() {
				end = ev.Type
			}
		case <-timeout:
			t.Fatalf("the watch never ended (last seq %d)", last)
		}
	}
	sess, err := r.Wait()
	if err != nil || sess.Status != store.StatusCompleted || end != pipeline.RunFinished {
		t.Fatalf("run %q %v, watcher's last event %q", sess.Status, err, end)
	}
	if streamed == 0 || stages < 5 {
		t.Errorf("the watcher saw %d bytes of streamed text and %d finished stages", streamed, stages)
	}
	stored, _ := pipeline.LoadEvents(env.Store, r.ID())
	for _, ev := range stored {
		if ev.Type == pipeline.TokenDelta {
			t.Fatal("streamed text was stored in the event log")
		}
	}
	if _, err := env.Engine.Watch(ctx, r.ID()); !errors.Is(err, pipeline.ErrNotRunningHere) {
		t.Errorf("watching a finished session: %v", err)
	}
}
