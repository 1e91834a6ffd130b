package mcp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	mcpserver "github.com/researchtui/researchtui/ui/mcp"
)

func liveSessions(srv *mcpserver.Server) int {
	n := 0
	for range srv.MCP().Sessions() {
		n++
	}
	return n
}

// waitFor polls cond; the deadline only turns a hang into a failure.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("never: %s", what)
}

func heapMB() float64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapInuse) / (1 << 20)
}

// Sessions opened and abandoned (no DELETE, as most clients leave) are
// capped: the longest idle ends first, and the newest keep working.
func TestAbandonedSessionsAreCapped(t *testing.T) {
	t.Parallel()
	ts, srv := httpServerWith(t, mcpserver.HTTPOptions{MaxSessions: 20, SessionIdle: time.Hour})
	var opened []*rawSession
	for range 200 {
		opened = append(opened, newRawSession(t, ts.URL+"/mcp", "2025-06-18"))
	}
	if n := liveSessions(srv); n > 20 {
		t.Errorf("%d sessions kept, want at most 20", n)
	}
	if r, _ := opened[0].post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); r.StatusCode != http.StatusNotFound {
		t.Errorf("the oldest abandoned session still answers: %d, want 404 (ended)", r.StatusCode)
	}
	if r, body := opened[199].post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); r.StatusCode != http.StatusOK || !strings.Contains(body, "research") {
		t.Errorf("the newest session: %d %s", r.StatusCode, body)
	}
}

// 2,000 abandoned sessions end once idle, and the memory they held is
// given back (within 50 MB of before); a client listening on its event
// stream is not idle and keeps its session.
func TestIdleSessionsExpireAndMemoryReturns(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 2,000 sessions")
	}
	ts, srv := httpServerWith(t, mcpserver.HTTPOptions{MaxSessions: 5000, SessionIdle: 3 * time.Second})
	ctx := context.Background()
	listener, err := mcp.NewClient(&mcp.Implementation{Name: "listener", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close()
	before := heapMB()
	for range 2000 {
		newRawSession(t, ts.URL+"/mcp", "2025-06-18")
	}
	peak, alive := heapMB(), liveSessions(srv)
	waitFor(t, "the abandoned sessions end", func() bool { return liveSessions(srv) <= 1 })
	after := heapMB()
	t.Logf("heap in use: %.1f MB before, %.1f MB with %d sessions open, %.1f MB after they expired", before, peak, alive, after)
	if after-before > 50 {
		t.Errorf("heap %.1f MB after expiry, %.1f MB before: not given back", after, before)
	}
	if _, err := listener.ListTools(ctx, nil); err != nil {
		t.Errorf("a client listening on its event stream lost its session: %v", err)
	}
}

// A 500-call batch (protocol 2025-03-26 still allows batches) is refused
// with a JSON-RPC error before any call runs; a small one is served, and
// the session goes on.
func TestBigBatchIsRefused(t *testing.T) {
	t.Parallel()
	ts := httpServer(t, mcpserver.HTTPOptions{})
	s := newRawSession(t, ts.URL+"/mcp", "2025-03-26")
	batch := func(n int) string {
		calls := make([]string, n)
		for i := range calls {
			calls[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search_knowledge","arguments":{"query":"q %d"}}}`, 100+i, i)
		}
		return "[" + strings.Join(calls, ",") + "]"
	}
	resp, body := s.post(batch(500))
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("a 500-call batch: %d %s", resp.StatusCode, body)
	}
	if r := replies(t, body)[0]; r.Error == nil || !strings.Contains(r.Error.Message, fmt.Sprint(mcpserver.MaxBatch)) {
		t.Errorf("a 500-call batch: %s, want a JSON-RPC error naming the limit", body)
	}
	resp, body = s.post(batch(3))
	if resp.StatusCode != http.StatusOK || len(replies(t, body)) != 3 {
		t.Errorf("a 3-call batch: %d %s", resp.StatusCode, body)
	}
}

// Clients that open sessions at the same moment past the cap keep the
// sessions they were just given: a session whose initialize is still in
// flight was once taken for the longest idle and ended before its client
// could send "initialized" (404), one in ten under two clients a second.
func TestSessionsBornTogetherPastTheCapLive(t *testing.T) {
	t.Parallel()
	ts, _ := httpServerWith(t, mcpserver.HTTPOptions{MaxSessions: 32, SessionIdle: time.Hour})
	post := func(id, body string) (string, int, error) {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if id != "" {
			req.Header.Set("Mcp-Session-Id", id)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return "", 0, err
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.Header.Get("Mcp-Session-Id"), resp.StatusCode, nil
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	lost := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 25 {
				time.Sleep(20 * time.Millisecond) // a client a second each, sped up
				id, _, err := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
				if err != nil || id == "" {
					continue // 503 when every session is busy: allowed
				}
				if _, code, err := post(id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err == nil && code == http.StatusNotFound {
					mu.Lock()
					lost++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	// Eight clients, 32 sessions kept, a session every 2.5 ms: a
	// session lives some 80 ms, far longer than its client takes to send
	// "initialized", unless a birth beside its own ends it.
	if lost > 0 {
		t.Errorf("%d of 200 sessions ended before their client's next request", lost)
	}
}
