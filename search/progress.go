package search

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"time"
)

// ProgressRule judges a document download by its progress, not by a fixed
// clock: a slow but steady server finishes a large PDF, a server that
// drips or stalls is given up quickly, whatever the size.
type ProgressRule struct {
	// FirstByte: the answer must start within this (default 15 s).
	FirstByte time.Duration
	// Window and MinBytes: once it has started, every Window must bring
	// at least MinBytes (default 160 KiB per 10 s, i.e. 16 KiB/s).
	Window   time.Duration
	MinBytes int64
}

// DefaultProgress is the rule document downloads use.
var DefaultProgress = ProgressRule{FirstByte: 15 * time.Second, Window: 10 * time.Second, MinBytes: 160 << 10}

func (r ProgressRule) withDefaults() ProgressRule {
	if r.FirstByte <= 0 {
		r.FirstByte = DefaultProgress.FirstByte
	}
	if r.Window <= 0 {
		r.Window = DefaultProgress.Window
	}
	if r.MinBytes <= 0 {
		r.MinBytes = DefaultProgress.MinBytes
	}
	return r
}

// StalledError is a download given up because it stopped making progress.
// It is not retried, and its host is not asked again in the run.
type StalledError struct {
	Host    string
	Read    int64         // bytes received
	After   time.Duration // since the request started
	NoStart bool          // no answer at all within FirstByte
}

func (e *StalledError) Error() string {
	if e.NoStart {
		return fmt.Sprintf("%s: no answer within %s", e.Host, e.After.Round(time.Second))
	}
	return fmt.Sprintf("%s: stalled at %s after %s", e.Host, sizeText(e.Read), e.After.Round(time.Second))
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// clock is the time a progress watch reads. It is the real clock except in
// tests, which pass their own (FetchOptions.clock) so that they, not the
// machine's load, decide how much time passes between the bytes they send.
type clock interface {
	Now() time.Time
	// NewTicker ticks every d until stop is called (as time.NewTicker).
	NewTicker(d time.Duration) (ticks <-chan time.Time, stop func())
}

// realClock is the time package's clock.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) NewTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// progressWatch cancels a request (with a *StalledError as the cause) when
// it breaks the rule. started marks the answer's first byte; count is fed
// by the body reader.
type progressWatch struct {
	rule    ProgressRule
	host    string
	start   time.Time
	started atomic.Bool
	count   atomic.Int64
	done    chan struct{}
}

// watchProgress starts the watch of one request on clk (nil: the real clock).
func watchProgress(ctx context.Context, rule ProgressRule, host string, clk clock) (context.Context, *progressWatch, func()) {
	rule = rule.withDefaults()
	if clk == nil {
		clk = realClock{}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	w := &progressWatch{rule: rule, host: host, start: clk.Now(), done: make(chan struct{})}
	// The ticker starts before the request is sent, not when the goroutine
	// first runs, so the watch keeps time from the start.
	ticks, stopTicks := clk.NewTicker(max(rule.Window/20, 10*time.Millisecond))
	go func() {
		defer stopTicks()
		type sample struct {
			at time.Time
			n  int64
		}
		var samples []sample // since the first byte, oldest first
		for {
			select {
			case <-w.done:
				return
			case <-ctx.Done():
				return
			case now := <-ticks:
				n := w.count.Load()
				if !w.started.Load() {
					if now.Sub(w.start) > rule.FirstByte {
						cancel(&StalledError{Host: host, After: now.Sub(w.start), NoStart: true})
						return
					}
					continue
				}
				samples = append(samples, sample{now, n})
				// The oldest sample at least a window old decides.
				i := 0
				for i+1 < len(samples) && now.Sub(samples[i+1].at) >= rule.Window {
					i++
				}
				if now.Sub(samples[i].at) >= rule.Window {
					if n-samples[i].n < rule.MinBytes {
						cancel(&StalledError{Host: host, Read: n, After: now.Sub(w.start)})
						return
					}
					samples = samples[i:]
				}
			}
		}
	}()
	return ctx, w, func() { close(w.done); cancel(nil) }
}

// reader counts what passes through it.
func (w *progressWatch) reader(r io.Reader) io.Reader { return countingReader{r, &w.count} }

type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}
