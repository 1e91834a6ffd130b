package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/textkit"
)

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
	case ReviewApprove:
		return Decision{Approve: true}, true
	case ReviewReject:
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
