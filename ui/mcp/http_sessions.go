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
	janitor  sync.Once
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
	k.begin(id)
	defer func() { k.end(id) }()
	next.ServeHTTP(w, r)
	if id == "" {
		id = w.Header().Get("Mcp-Session-Id") // a session was born
		k.begin(id)
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
// (a DELETE, a broken connection) and adopt the ones they have not heard
// of yet, idle from now. A session is in the SDK's list while its
// initialize is still in flight, before serve has its ID: taken for idle
// since forever, it was ended before its client's next request; and a
// book written after the list was read was forgotten, and its session
// never expired.
func (k *sessionKeeper) live() map[string]*mcp.ServerSession {
	taken := time.Now()
	out := map[string]*mcp.ServerSession{}
	for ss := range k.srv.Sessions() {
		if ss.ID() != "" {
			out[ss.ID()] = ss
		}
	}
	k.mu.Lock()
	for id, ks := range k.sessions {
		if out[id] == nil && ks.inFlight <= 0 && ks.lastUsed.Before(taken) {
			delete(k.sessions, id)
		}
	}
	for id := range out {
		if k.sessions[id] == nil {
			k.sessions[id] = &keptSession{lastUsed: taken}
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
			if ks == nil {
				continue // closed and forgotten since live() was read
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
