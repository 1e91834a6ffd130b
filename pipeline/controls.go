package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/textkit"
)

// Controls let a researchtui process steer a run that another one on the
// same data dir executes: the TUI deciding the review of a run started by
// `researchtui mcp`, say. They travel through the store's change feed
// (store/README.md); the process that claimed the session applies them.

const (
	controlDecide   = "decide"
	controlCancel   = "cancel"
	controlWriteNow = "write_now"
)

// followControls starts applying controls to this process's runs while it
// has any (liveMu is held; release stops it with the last run).
func (e *Engine) followControls() {
	ctx, cancel := context.WithCancel(context.Background())
	e.controls = cancel
	go store.Follow(ctx, e.Store, func(c store.Change) {
		if c.Control != nil {
			e.applyControl(c.Session, *c.Control)
		}
	}, nil)
}

func (e *Engine) applyControl(id string, c store.Control) {
	e.liveMu.Lock()
	l := e.live[id]
	e.liveMu.Unlock()
	if l == nil || l.run == nil {
		return // not ours
	}
	switch c.Kind {
	case controlDecide:
		var d Decision
		if json.Unmarshal(c.Decision, &d) == nil {
			_ = l.run.Decide(d)
		}
	case controlCancel:
		l.run.Cancel()
	case controlWriteNow:
		l.run.WriteNow()
	}
}

// ErrNotRunningHere says a session runs in no researchtui process: open it
// or resume it instead of watching it.
var ErrNotRunningHere = errors.New("that session is not running in any researchtui")

// sendControl sends a control to whichever process runs the session.
func (e *Engine) sendControl(id string, c store.Control) error {
	err := e.Store.SendControl(id, c)
	if errors.Is(err, store.ErrNotRunning) {
		return ErrNotRunningHere
	}
	return err
}

// DecideElsewhere answers the pending review of a session that another
// researchtui process runs.
func (e *Engine) DecideElsewhere(id string, d Decision) error {
	raw, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("encoding the decision: %w", err)
	}
	return e.sendControl(id, store.Control{Kind: controlDecide, Decision: raw})
}

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

// Drive consumes a run's events to the end on behalf of a front-end with no
// screen of its own (headless `run`, the MCP server): every event goes to
// on (nil: ignored), reviewer requests are answered by decide, and the final
// report text is collected. decide returning an error stops the run, which
// leaves the session awaiting review for a later resume. Drive returns what
// Run.Wait returns, plus the report of a run that produced one.
//
// decide runs beside the event loop, and its ctx ends when the review is
// settled without it: decided in another researchtui (the TUI, say) or the
// run ended. decide must then return soon; its answer is ignored.
//
// It lives here, beside Run, so that every front-end answers the review
// gate the same way and none of them can forget to keep reading the
// channel (a run whose events nobody reads still finishes, but its review
// would wait forever).
func Drive(ctx context.Context, r *Run, on func(Event), decide func(context.Context, *ReviewRequest) (Decision, error)) (store.Session, string, error) {
	var (
		report string
		asking sync.WaitGroup
		settle = func() {}
	)
	for ev := range r.Events() {
		if on != nil {
			on(ev)
		}
		switch ev.Type {
		case ReviewRequested:
			settle()
			rctx, cancel := context.WithCancelCause(ctx)
			settle = func() { cancel(ErrDecidedElsewhere) }
			asking.Add(1)
			go func(rv *ReviewRequest) {
				defer asking.Done()
				d, err := decide(rctx, rv)
				switch {
				case errors.Is(context.Cause(rctx), ErrDecidedElsewhere):
				case err != nil:
					r.Suspend() // no answer (stdin closed, the asker gone): the review waits for a resume
				default:
					_ = r.Decide(d) // ErrNoPendingReview if it was settled meanwhile
				}
			}(ev.Review)
		case ReviewDecided:
			settle()
		case ReportReady:
			report = ev.Text
		}
	}
	settle()
	asking.Wait()
	sess, err := r.Wait()
	return sess, report, err
}

// ErrDecidedElsewhere is the cause of a decide context that ended because
// the run no longer waits for that answer (decided in another researchtui,
// or the run ended).
var ErrDecidedElsewhere = errors.New("the review was decided elsewhere")

// PolicyDecision is the decision a review policy (ReviewApprove or
// ReviewReject) makes without asking anyone; ok is false for ReviewAsk and
// unknown policies, which need a person.
func PolicyDecision(policy string) (d Decision, ok bool) {
	switch policy {
	case runopts.ReviewApprove:
		return Decision{Approve: true}, true
	case runopts.ReviewReject:
		return Decision{Approve: false}, true
	}
	return Decision{}, false
}

// Summary is the event as one short human line (stages, sources, warnings,
// the review and the outcome), or "" for events not worth a line (streamed
// text, usage ticks). Headless progress and MCP progress notifications
// print the same lines. The text is not sanitised for a terminal.
func (ev Event) Summary() string {
	switch ev.Type {
	case RunStarted:
		return fmt.Sprintf("session %s: %s", ev.SessionID, ev.Message)
	case StageStarted:
		return fmt.Sprintf("▸ %-9s %s", ev.Stage, ev.Message)
	case StageFinished:
		return fmt.Sprintf("✓ %-9s %s %s", ev.Stage, ev.Message, durText(ev.Elapsed))
	case SourceFound:
		if ev.Source != nil {
			return fmt.Sprintf("  + [%s] %s", ev.Source.Source, textkit.Clip(ev.Source.Title, 90))
		}
	case Warning:
		return "  ! " + ev.Message
	case ReviewRequested:
		switch {
		case ev.Review != nil && ev.Review.Plan != nil:
			return "  planner: the plan waits for you (" + textkit.CleanLine(ev.Review.Summary) + ")"
		case ev.Review != nil:
			return fmt.Sprintf("  reviewer: %s (round %d)", textkit.Plural(len(ev.Review.Requests), "revision request", "revision requests"), ev.Review.Round)
		}
	case ReviewDecided:
		return "  decision: " + ev.Message
	case ReportReady:
		return "  " + ev.Message
	case RunFinished, RunFailed, RunCancelled, RunSuspended:
		return fmt.Sprintf("%s: %s %s", ev.Status, ev.Message, durText(ev.Elapsed))
	}
	return ""
}

// durText is a duration in parentheses, rounded for people; "" for none.
func durText(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return "(" + d.Round(100*time.Millisecond).String() + ")"
}
