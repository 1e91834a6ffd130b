package pipelinetest

import (
	"context"
	"testing"
	"time"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/store"
)

// Drive reads r's events until the run ends, answering each review with
// decide's decision (nil decide approves every review; a nil decision
// leaves the review unanswered), and returns the events. A run that takes
// over 60 s fails the test.
func Drive(t testing.TB, r *pipeline.Run, decide func(*pipeline.ReviewRequest) *pipeline.Decision) []pipeline.Event {
	t.Helper()
	var evs []pipeline.Event
	timeout := time.After(60 * time.Second)
	for {
		select {
		case ev, ok := <-r.Events():
			if !ok {
				return evs
			}
			evs = append(evs, ev)
			if ev.Type != pipeline.ReviewRequested {
				continue
			}
			d := &pipeline.Decision{Approve: true}
			if decide != nil {
				d = decide(ev.Review)
			}
			if d != nil {
				if err := r.Decide(*d); err != nil {
					t.Errorf("Decide: %v", err)
				}
			}
		case <-timeout:
			t.Fatal("run did not finish in 60 s")
		}
	}
}

// RunToEnd starts a run of opt in env, approves every review and requires
// the run to complete; it returns the events delivered and the stored
// session.
func RunToEnd(t testing.TB, env *Env, opt runopts.Options) ([]pipeline.Event, store.Session) {
	t.Helper()
	r, err := env.Engine.Start(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	evs := Drive(t, r, nil)
	sess, err := r.Wait()
	if err != nil || sess.Status != store.StatusCompleted {
		t.Fatalf("status %q err %v, want completed", sess.Status, err)
	}
	return evs, sess
}

// ApproveAll reads r's events to the run's end, approving each review once
// reading has passed (a person's time to read the requests; 0 for none),
// and returns the stored session. Unlike Drive it sets no time limit: a
// benchmark's run at one GPU's pace takes minutes. A run that ends in an
// error fails tb.
func ApproveAll(tb testing.TB, r *pipeline.Run, reading time.Duration) store.Session {
	tb.Helper()
	for ev := range r.Events() {
		if ev.Type == pipeline.ReviewRequested && ev.Review != nil && !ev.Review.Approved {
			time.Sleep(reading)
			if err := r.Decide(pipeline.Decision{Approve: true}); err != nil {
				tb.Errorf("Decide: %v", err)
			}
		}
	}
	sess, err := r.Wait()
	if err != nil {
		tb.Fatal(err)
	}
	return sess
}
