package ollamafake

import (
	"net/http"
	"sync"
	"time"
)

// busyMeter measures the union of the intervals in which at least one
// request is being served (generating or embedding): the model's busy time,
// as the GPU would see it. Queued requests don't count.
type busyMeter struct {
	mu       sync.Mutex
	inflight int
	since    time.Time
	total    time.Duration
}

func (b *busyMeter) enter() {
	b.mu.Lock()
	if b.inflight == 0 {
		b.since = time.Now()
	}
	b.inflight++
	b.mu.Unlock()
}

func (b *busyMeter) leave() {
	b.mu.Lock()
	b.inflight--
	if b.inflight == 0 {
		b.total += time.Since(b.since)
	}
	b.mu.Unlock()
}

func (b *busyMeter) read() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.total
	if b.inflight > 0 {
		t += time.Since(b.since)
	}
	return t
}

// Busy is the time so far in which the server was generating or embedding
// for at least one request (queue time excluded).
func (s *Server) Busy() time.Duration { return s.busy.read() }

// acquire takes a generation slot (waiting in the queue when Parallel is
// reached) and starts the busy clock; false if the client went away.
func (s *Server) acquire(r *http.Request) bool {
	if s.slots != nil {
		select {
		case s.slots <- struct{}{}:
		case <-r.Context().Done():
			return false
		}
	}
	s.busy.enter()
	return true
}

func (s *Server) release() {
	s.busy.leave()
	if s.slots != nil {
		<-s.slots
	}
}

// pause sleeps d unless the client goes away first (false).
func pause(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return r.Context().Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}
