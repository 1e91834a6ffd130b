package ui

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/runopts"
)

// TestBridgeBatches: the bridge takes everything already queued in one
// message (bounded by maxBatch), and reports a closed channel.
func TestBridgeBatches(t *testing.T) {
	ch := make(chan pipeline.Event, 2000)
	for i := 0; i < 1000; i++ {
		ch <- pipeline.Event{Type: pipeline.TokenDelta, Agent: "writer", Text: "x", Seq: int64(i + 1)}
	}
	msg := waitEvents("r", ch)().(runEventsMsg)
	if len(msg.events) != maxBatch || msg.closed {
		t.Fatalf("first batch %d closed %v", len(msg.events), msg.closed)
	}
	close(ch)
	msg = waitEvents("r", ch)().(runEventsMsg)
	if len(msg.events) != 1000-maxBatch || !msg.closed {
		t.Fatalf("second batch %d closed %v", len(msg.events), msg.closed)
	}
	msg = waitEvents("r", ch)().(runEventsMsg)
	if len(msg.events) != 0 || !msg.closed {
		t.Fatal("a closed channel ends the chain")
	}
}

// TestDeltasMerged: a batch of deltas of one agent is folded as one append,
// and the run screen shows the concatenated text.
func TestDeltasMerged(t *testing.T) {
	evs := []pipeline.Event{
		{Type: pipeline.TokenDelta, Agent: "a", Text: "he"},
		{Type: pipeline.TokenDelta, Agent: "a", Text: "llo", Thinking: "t"},
		{Type: pipeline.Warning, Message: "w"},
		{Type: pipeline.TokenDelta, Agent: "a", Text: " world"},
		{Type: pipeline.TokenDelta, Agent: "b", Text: "!"},
	}
	out := mergeDeltas(evs)
	if len(out) != 4 || out[0].Text != "hello" || out[0].Thinking != "t" || out[2].Text != " world" || out[3].Agent != "b" {
		t.Fatalf("merged %+v", out)
	}
	if evs[0].Text != "he" {
		t.Error("mergeDeltas must not modify its input")
	}
}

// TestQuestionAtStart: Config.Question starts the research at once.
func TestQuestionAtStart(t *testing.T) {
	svc := &fakeServices{}
	dark := true
	m := newModel(context.Background(), Config{Question: "why is the sky blue", Defaults: runopts.Options{Model: "m", EmbedModel: "e"}}, svc,
		options{now: func() time.Time { return testNow }, darkBG: &dark})
	run(t, m, m.Init())
	if len(svc.started) != 1 || svc.started[0].Question != "why is the sky blue" || m.screen != screenRun {
		t.Fatalf("started %+v screen %v", svc.started, m.screen)
	}
}

// emittingRun behaves like pipeline.Run on cancel: it delivers its queued
// events (blocking until they are read), then closes the channel and Done.
type emittingRun struct {
	ch   chan pipeline.Event
	done chan struct{}
	once sync.Once
}

func (r *emittingRun) ID() string                       { return "emitting" }
func (r *emittingRun) Events() <-chan pipeline.Event    { return r.ch }
func (r *emittingRun) Done() <-chan struct{}            { return r.done }
func (r *emittingRun) Pending() *pipeline.ReviewRequest { return nil }
func (r *emittingRun) Decide(pipeline.Decision) error   { return nil }
func (r *emittingRun) WriteNow()                        {}
func (r *emittingRun) Deadline() time.Time              { return time.Time{} }
func (r *emittingRun) Cancel() {
	r.once.Do(func() {
		go func() {
			for i := range 100 {
				r.ch <- pipeline.Event{Type: pipeline.Warning, Seq: int64(i)}
			}
			close(r.ch)
			close(r.done)
		}()
	})
}

// TestShutdownDrainsEvents: after the program stops nobody reads a run's
// events, so shutdown must, or the run never finishes saving.
func TestShutdownDrainsEvents(t *testing.T) {
	runs := []runHandle{
		&emittingRun{ch: make(chan pipeline.Event), done: make(chan struct{})},
		&emittingRun{ch: make(chan pipeline.Event), done: make(chan struct{})},
	}
	start := time.Now()
	shutdownRuns(runs, 5*time.Second)
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("shutdown took %v: the runs' events were not drained", el)
	}
	for i, r := range runs {
		select {
		case <-r.Done():
		default:
			t.Errorf("run %d did not finish", i)
		}
	}
}
