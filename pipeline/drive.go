package pipeline

import (
	"fmt"
	"time"

	"github.com/researchtui/researchtui/store"
)

// Drive consumes a run's events to the end on behalf of a front-end with no
// screen of its own (headless `run`, the MCP server): every event goes to
// on (nil: ignored), reviewer requests are answered by decide, and the final
// report text is collected. decide returning an error stops the run, which
// leaves the session awaiting review for a later resume. Drive returns what
// Run.Wait returns, plus the report of a run that produced one.
//
// It lives here, beside Run, so that every front-end answers the review
// gate the same way and none of them can forget to keep reading the
// channel (a run whose events nobody reads still finishes, but its review
// would wait forever).
func Drive(r *Run, on func(Event), decide func(*ReviewRequest) (Decision, error)) (store.Session, string, error) {
	var report string
	for ev := range r.Events() {
		if on != nil {
			on(ev)
		}
		switch ev.Type {
		case ReviewRequested:
			d, err := decide(ev.Review)
			if err != nil {
				r.Cancel()
				continue
			}
			_ = r.Decide(d) // ErrNoPendingReview only if the run ended meanwhile
		case ReportReady:
			report = ev.Text
		}
	}
	sess, err := r.Wait()
	return sess, report, err
}

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
			return fmt.Sprintf("  + [%s] %s", ev.Source.Source, truncateRunes(ev.Source.Title, 90))
		}
	case Warning:
		return "  ! " + ev.Message
	case ReviewRequested:
		if ev.Review != nil {
			return fmt.Sprintf("  reviewer: %d revision requests (round %d)", len(ev.Review.Requests), ev.Review.Round)
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
