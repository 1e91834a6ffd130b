package search

import (
	"context"
	"io"
	"net/http"
	"sync"
	"time"
)

// fakeClock is a progress watch's clock that moves only when a test
// advances it, so that a window passes when the test says, however loaded
// the machine is. Its ticks are sent unbuffered: Advance returns once every
// tick it made was received, each after the one before was acted on, but
// the last perhaps not yet acted on. So a tick may see one piece more than
// was sent before it, and a test's rule must not be within a piece of the
// pace it judges (TestDownloadsAreJudgedByProgress is far from it).
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	tickers []*fakeTicker
}

type fakeTicker struct {
	every time.Duration
	next  time.Time
	c     chan time.Time
	stop  chan struct{}
	once  sync.Once
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTicker(d time.Duration) (<-chan time.Time, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTicker{every: d, next: c.now.Add(d), c: make(chan time.Time), stop: make(chan struct{})}
	c.tickers = append(c.tickers, t)
	return t.c, func() { t.once.Do(func() { close(t.stop) }) }
}

// Advance moves the clock on by d, delivering the ticks due on the way in
// order of time (a stopped ticker's are dropped).
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	c.mu.Unlock()
	for {
		c.mu.Lock()
		var due *fakeTicker
		for _, t := range c.tickers {
			select {
			case <-t.stop:
				continue
			default:
			}
			if !t.next.After(end) && (due == nil || t.next.Before(due.next)) {
				due = t
			}
		}
		if due == nil {
			c.now = end
			c.mu.Unlock()
			return
		}
		at := due.next
		c.now, due.next = at, at.Add(due.every)
		c.mu.Unlock()
		select {
		case due.c <- at:
		case <-due.stop:
		}
	}
}

// roundTripFunc is a function as an http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// pacedHost is a host whose answers a script delivers piece by piece on a
// fakeClock: what a download judged by its progress sees (bytes, and the
// time between them) is decided by the script, not by the machine's load.
type pacedHost struct {
	clock   *fakeClock
	scripts map[string]func(*pacer) // by path
	mu      sync.Mutex
	hits    map[string]int
}

func (h *pacedHost) RoundTrip(req *http.Request) (*http.Response, error) {
	h.mu.Lock()
	h.hits[req.URL.Path]++
	h.mu.Unlock()
	script, ok := h.scripts[req.URL.Path]
	if !ok {
		return &http.Response{StatusCode: http.StatusNotFound, Body: http.NoBody, Request: req}, nil
	}
	body := &pacedBody{ctx: req.Context(), ready: make(chan struct{}), pieces: make(chan []byte)}
	go script(&pacer{body: body, clock: h.clock})
	return &http.Response{
		StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"text/html"}},
		ContentLength: -1, Body: body, Request: req,
	}, nil
}

func (h *pacedHost) count(path string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hits[path]
}

// pacedBody is an answer's body read as its script sends it. Before it
// waits for a piece it says so on ready: every byte it returned before has
// then been counted by whoever called Read.
type pacedBody struct {
	ctx    context.Context
	ready  chan struct{}
	pieces chan []byte // closed at the end of the answer
	left   []byte
	eof    bool
}

func (b *pacedBody) Read(p []byte) (int, error) {
	if b.eof {
		return 0, io.EOF
	}
	if len(b.left) == 0 {
		select {
		case b.ready <- struct{}{}:
		case <-b.ctx.Done():
			return 0, b.ctx.Err()
		}
		select {
		case piece, ok := <-b.pieces:
			if !ok {
				b.eof = true
				return 0, io.EOF
			}
			b.left = piece
		case <-b.ctx.Done():
			return 0, b.ctx.Err()
		}
	}
	n := copy(p, b.left)
	b.left = b.left[n:]
	return n, nil
}

func (b *pacedBody) Close() error { return nil }

// pacer is what a script drives its answer with. Each step first waits
// until the reader has taken everything sent so far, so a tick sees exactly
// the bytes sent before it. A step reports false once the request is over
// (cancelled by a stall, or finished).
type pacer struct {
	body  *pacedBody
	clock *fakeClock
	idle  bool // the reader waits for a piece
}

func (p *pacer) settle() bool {
	if p.idle {
		return true
	}
	select {
	case <-p.body.ready:
		p.idle = true
		return true
	case <-p.body.ctx.Done():
		return false
	}
}

// send delivers one piece (not empty).
func (p *pacer) send(piece []byte) bool {
	if !p.settle() {
		return false
	}
	select {
	case p.body.pieces <- piece:
		p.idle = false
		return true
	case <-p.body.ctx.Done():
		return false
	}
}

// wait lets d pass on the clock, after what was sent has been read.
func (p *pacer) wait(d time.Duration) bool {
	if !p.settle() {
		return false
	}
	p.clock.Advance(d)
	return true
}

// end ends the answer.
func (p *pacer) end() {
	if p.settle() {
		close(p.body.pieces)
	}
}
