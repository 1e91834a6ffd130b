package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/researchtui/researchtui/textkit"
)

// A run must finish on time: a download that holds up an otherwise
// finished sub-question gets a grace period, then the run goes on from its
// abstract; a deadline (or the person's "write now") stops new work and
// sends the run to the writer with what is analysed.

// DefaultGrace is how long a straggling download may hold a sub-question
// whose other sources are all analysed.
const DefaultGrace = 20 * time.Second

// skipReason cancels a download on purpose; the source is then read from
// its abstract, and the reason is its status.
type skipReason struct{ why string }

func (s *skipReason) Error() string { return s.why }

// cutoff is the moment to stop starting new work.
type cutoff struct {
	once sync.Once
	ch   chan struct{}
	why  string
}

func newCutoff() *cutoff { return &cutoff{ch: make(chan struct{})} }

func (c *cutoff) cut(why string) {
	c.once.Do(func() {
		c.why = why
		close(c.ch)
	})
}

func (c *cutoff) passed() bool {
	select {
	case <-c.ch:
		return true
	default:
		return false
	}
}

// reason says why work was cut (after passed() is true).
func (c *cutoff) reason() string {
	<-c.ch
	return c.why
}

// WriteNow stops the run's reading and research: what is still downloading
// is read from its abstract, nothing new is started, and the writer starts
// with what is analysed.
func (r *Run) WriteNow() {
	if r.cut != nil {
		r.cut.cut("skipped: you asked to write now")
	}
}

// Deadline is when the run stops starting new work (zero: none).
func (r *Run) Deadline() time.Time { return r.deadline }

// overHalfTime: a follow-up round would not fit before the deadline.
func (o *orchestrator) overHalfTime() bool {
	if o.opt.Deadline <= 0 {
		return false
	}
	return time.Since(o.started) > o.opt.Deadline/2
}

func (o *orchestrator) grace() time.Duration {
	if o.opt.Grace > 0 {
		return o.opt.Grace
	}
	return DefaultGrace
}

// inflight is a source being downloaded.
type inflight struct {
	cancel    context.CancelCauseFunc
	graceFrom time.Time // when every other source of one of its sub-questions was analysed
}

// startRead registers a download so the straggler policy and the cutoff can
// cut it short.
func (f *gather) startRead(ctx context.Context, key string) (context.Context, func()) {
	rctx, cancel := context.WithCancelCause(ctx)
	f.mu.Lock()
	f.reading[key] = &inflight{cancel: cancel}
	f.mu.Unlock()
	if f.o.cut.passed() {
		cancel(&skipReason{f.o.cut.reason()})
	}
	return rctx, func() {
		f.mu.Lock()
		delete(f.reading, key)
		f.mu.Unlock()
		cancel(nil)
	}
}

// watchStragglers runs while a round reads: it cuts downloads short at the
// cutoff, and after the grace period when they are all their sub-question
// still waits for.
func (f *gather) watchStragglers(done <-chan struct{}) {
	grace := f.o.grace()
	tick := time.NewTicker(min(grace/10, 250*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-f.o.cut.ch:
			f.cutAll(f.o.cut.reason())
		case now := <-tick.C:
			f.mu.Lock()
			for key, in := range f.reading {
				if !f.othersAnalysedLocked(key) {
					in.graceFrom = time.Time{}
					continue
				}
				if in.graceFrom.IsZero() {
					in.graceFrom = now
				} else if now.Sub(in.graceFrom) >= grace {
					in.cancel(&skipReason{fmt.Sprintf("skipped after %s grace", grace)})
				}
			}
			f.mu.Unlock()
		}
	}
}

func (f *gather) cutAll(why string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, in := range f.reading {
		in.cancel(&skipReason{why})
	}
}

// othersAnalysedLocked: every other source of one of key's sub-questions
// is analysed (or skipped), or research is over and every other source of
// the run is. f.mu is held.
func (f *gather) othersAnalysedLocked(key string) bool {
	for _, keys := range f.bySubQ {
		serves, others := false, true
		for _, k := range keys {
			if k == key {
				serves = true
				continue
			}
			if _, ok := f.analyses[k]; !ok && !f.skipped[k] {
				others = false
			}
		}
		if serves && others && len(keys) > 1 {
			return true
		}
	}
	// Nothing else is left to do in the round: it is the last download.
	if !f.researchDone {
		return false
	}
	for k := range f.claimed {
		if _, ok := f.analyses[k]; k != key && !ok && !f.skipped[k] {
			return false
		}
	}
	return true
}

// skippedOnPurpose is the reason a download was cut short, if it was.
func skippedOnPurpose(ctx context.Context) (string, bool) {
	var sr *skipReason
	if errors.As(context.Cause(ctx), &sr) {
		return sr.why, true
	}
	return "", false
}

// unreadNote lists the sources not read in full on purpose, for the method note.
func (o *orchestrator) noteUnread(title, why string) {
	o.warnMu.Lock()
	defer o.warnMu.Unlock()
	o.st.Unread = append(o.st.Unread, fmt.Sprintf("%s (%s)", textkit.Clip(title, 80), why))
}
