package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/researchtui/researchtui/store"
)

// Watched is a run that another researchtui process on the same data dir
// executes, seen from this one: its stored events, then its live ones as
// that process appends them, and its review decided, or the run cancelled
// or cut short, through controls (controls.go). It has the methods of *Run
// a front-end uses, so the TUI shows it like its own runs.
type Watched struct {
	e      *Engine
	id     string
	out    chan Event
	done   chan struct{}
	cancel context.CancelFunc

	mu      sync.Mutex
	pending *ReviewRequest
}

// Watch follows a session that runs in another researchtui process. It
// fails with ErrNotRunningHere when no process runs it (resume it instead).
// ctx ends the watching, never the run.
func (e *Engine) Watch(ctx context.Context, id string) (*Watched, error) {
	if err := e.sendControl(id, store.Control{Kind: store.ControlProbe}); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	changes, err := e.Store.Watch(ctx) // before reading the log: nothing falls between
	if err != nil {
		cancel()
		return nil, err
	}
	w := &Watched{e: e, id: id, out: make(chan Event, 256), done: make(chan struct{}), cancel: cancel}
	w.refreshPending()
	go w.follow(ctx, changes)
	return w, nil
}

// follow delivers the stored log, then the feed's events for the session,
// until the run ends (its last event, or a status that is no longer
// running) or ctx ends. A broken feed (the owner changed) is watched again
// and the log read from where it stopped.
func (w *Watched) follow(ctx context.Context, changes <-chan store.Change) {
	defer close(w.done)
	defer close(w.out)
	defer w.cancel()
	var last int64
	deliver := func(recs []store.EventRecord) bool {
		for _, rec := range recs {
			if rec.Seq <= last {
				continue
			}
			last = rec.Seq
			var ev Event
			if json.Unmarshal(rec.Data, &ev) != nil {
				continue
			}
			select {
			case w.out <- ev:
			case <-ctx.Done():
				return false
			}
			if ev.Type.Terminal() {
				return false
			}
		}
		return true
	}
	catchUp := func() bool {
		recs, err := w.e.Store.Events(w.id)
		return err == nil && deliver(recs)
	}
	if !catchUp() {
		return
	}
	// A run records its end in the session before it logs its last event:
	// once the session says it ended, the last event is waited for a
	// moment (then read from the log, in case the feed lost it).
	var ended <-chan time.Time
	for ctx.Err() == nil {
	feed:
		for {
			select {
			case c, ok := <-changes:
				if !ok {
					break feed
				}
				if c.Session != w.id {
					continue
				}
				if len(c.Events) > 0 && !deliver(c.Events) {
					return
				}
				if c.Updated && ended == nil && !w.refreshPending() {
					ended = time.After(2 * time.Second)
				}
			case <-ended:
				catchUp()
				return
			case <-ctx.Done():
				return
			}
		}
		select { // the feed broke: watch again once the data dir has an owner
		case <-ctx.Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
		var err error
		if changes, err = w.e.Store.Watch(ctx); err != nil {
			continue
		}
		if !catchUp() || !w.refreshPending() {
			return
		}
	}
}

// refreshPending reads the session's pending review; false when the
// session is no longer running (nor waiting for a decision).
func (w *Watched) refreshPending() bool {
	sess, err := w.e.Store.Session(w.id)
	if err != nil {
		return !errors.Is(err, store.ErrNotFound)
	}
	var rv *ReviewRequest
	if sess.Status == store.StatusAwaitingReview && len(sess.PendingReview) > 0 {
		rv = new(ReviewRequest)
		if json.Unmarshal(sess.PendingReview, rv) != nil {
			rv = nil
		}
	}
	w.mu.Lock()
	w.pending = rv
	w.mu.Unlock()
	return sess.Status == store.StatusRunning || sess.Status == store.StatusAwaitingReview
}

// ID is the session ID.
func (w *Watched) ID() string { return w.id }

// Events delivers the run's events; it is closed when the run ends or the
// watching stops.
func (w *Watched) Events() <-chan Event { return w.out }

// Done is closed when the watching has ended.
func (w *Watched) Done() <-chan struct{} { return w.done }

// Pending is the review the run waits for, if any.
func (w *Watched) Pending() *ReviewRequest {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pending
}

// Decide sends the decision to the process that runs the session.
func (w *Watched) Decide(d Decision) error {
	if w.Pending() == nil {
		return ErrNoPendingReview
	}
	if err := w.e.DecideElsewhere(w.id, d); err != nil {
		return err
	}
	w.mu.Lock()
	w.pending = nil
	w.mu.Unlock()
	return nil
}

// Cancel asks the process that runs the session to cancel it (what
// finished stays checkpointed there too).
func (w *Watched) Cancel() { _ = w.e.sendControl(w.id, store.Control{Kind: controlCancel}) }

// WriteNow asks the process that runs the session to write from what it
// has analysed.
func (w *Watched) WriteNow() { _ = w.e.sendControl(w.id, store.Control{Kind: controlWriteNow}) }

// Deadline is unknown from here (the other process keeps it): zero.
func (w *Watched) Deadline() time.Time { return time.Time{} }

// Stop ends the watching; the run goes on where it runs.
func (w *Watched) Stop() { w.cancel() }
