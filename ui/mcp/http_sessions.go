package mcp

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of the HTTP session limits (HTTPOptions).
const (
	DefaultSessionIdle = 30 * time.Minute
	DefaultMaxSessions = 64
)

// sessionKeeper ends HTTP sessions nobody uses: each costs the server
// memory until it is closed, and a client that goes away without DELETE
// (most do) never closes it. A session is idle while no request of it is
// in flight (an open event stream counts as one); it ends after
// HTTPOptions.SessionIdle of that, and when a new session would pass
// HTTPOptions.MaxSessions the longest idle ends first. Runs a session's
// client started go on (they belong to the server), and ending a session
// is what a client sees as "session not found": it initializes again.
//
// The SDK's own StreamableHTTPOptions.SessionTimeout is not used: it pauses
// only for POSTs, so it would end a session whose client is listening on
// its event stream for a report's update.
type sessionKeeper struct {
	srv  *mcp.Server
	idle time.Duration
	max  int

	mu       sync.Mutex
	sessions map[string]*keptSession
	// births counts initialize requests in flight: their session is in
	// the SDK's list before this keeper has heard its ID, and must not be
	// taken for an idle one then.
	births  int
	janitor sync.Once
}

type keptSession struct {
	inFlight int
	lastUsed time.Time
}

func newSessionKeeper(srv *mcp.Server, idle time.Duration, max int) *sessionKeeper {
	if idle <= 0 {
		idle = DefaultSessionIdle
	}
	if max <= 0 {
		max = DefaultMaxSessions
	}
	return &sessionKeeper{srv: srv, idle: idle, max: max, sessions: map[string]*keptSession{}}
}

// serve runs one /mcp request of session id ("" for a new session) through
// next, keeping the books on either side.
func (k *sessionKeeper) serve(ctx context.Context, w http.ResponseWriter, r *http.Request, next http.Handler) {
	k.janitor.Do(func() { go k.sweepUntil(ctx) })
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" && r.Method == http.MethodPost && !k.makeRoom() {
		http.Error(w, "researchtui has too many MCP sessions in use; try again when one ends", http.StatusServiceUnavailable)
		return
	}
	born := id == ""
	if born {
		k.mu.Lock()
		k.births++
		k.mu.Unlock()
	}
	k.begin(id)
	defer func() { k.end(id) }()
	next.ServeHTTP(w, r)
	if born {
		id = w.Header().Get("Mcp-Session-Id") // a session was born
		k.begin(id)
		k.mu.Lock()
		k.births--
		k.mu.Unlock()
	}
}

func (k *sessionKeeper) begin(id string) {
	if id == "" {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	ks := k.sessions[id]
	if ks == nil {
		ks = &keptSession{}
		k.sessions[id] = ks
	}
	ks.inFlight++
	ks.lastUsed = time.Now()
}

func (k *sessionKeeper) end(id string) {
	if id == "" {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if ks := k.sessions[id]; ks != nil {
		ks.inFlight--
		ks.lastUsed = time.Now()
	}
}

// live is the SDK's sessions by ID; the books forget the ones it closed
// (a DELETE, a broken connection).
func (k *sessionKeeper) live() map[string]*mcp.ServerSession {
	out := map[string]*mcp.ServerSession{}
	for ss := range k.srv.Sessions() {
		if ss.ID() != "" {
			out[ss.ID()] = ss
		}
	}
	k.mu.Lock()
	for id, ks := range k.sessions {
		if out[id] == nil && ks.inFlight <= 0 {
			delete(k.sessions, id)
		}
	}
	k.mu.Unlock()
	return out
}

// makeRoom ends the longest idle session while a new one would pass the
// cap; false when every session is busy.
func (k *sessionKeeper) makeRoom() bool {
	live := k.live()
	for len(live) >= k.max {
		oldest := ""
		var at time.Time
		k.mu.Lock()
		for id := range live {
			ks := k.sessions[id]
			if ks == nil && k.births > 0 {
				continue // maybe being born: its initialize is still in flight
			}
			if ks == nil { // not seen since this keeper started: idle
				oldest = id
				break
			}
			if ks.inFlight <= 0 && (oldest == "" || ks.lastUsed.Before(at)) {
				oldest, at = id, ks.lastUsed
			}
		}
		k.mu.Unlock()
		if oldest == "" {
			return false
		}
		_ = live[oldest].Close()
		delete(live, oldest)
	}
	return true
}

// sweepUntil ends sessions idle for longer than k.idle, until ctx ends.
func (k *sessionKeeper) sweepUntil(ctx context.Context) {
	t := time.NewTicker(max(k.idle/4, 50*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		live := k.live()
		var stale []*mcp.ServerSession
		k.mu.Lock()
		for id, ss := range live {
			if ks := k.sessions[id]; ks != nil && ks.inFlight <= 0 && time.Since(ks.lastUsed) > k.idle {
				stale = append(stale, ss)
			}
		}
		k.mu.Unlock()
		for _, ss := range stale {
			_ = ss.Close()
		}
	}
}
