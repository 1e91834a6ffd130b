package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ledger is what the clients saw: every session a researcher started with
// the status and report it saw at the end, and the counts of the rest.
type ledger struct {
	mu        sync.Mutex
	ended     map[string]seen
	started   int
	errors    []string
	watchOps  int
	updates   int
	abandoned int
}

// seen is a session as its client last saw it.
type seen struct {
	status string
	report [32]byte // sha256 of the report text
}

func (l *ledger) end(id string, s seen) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended == nil {
		l.ended = map[string]seen{}
	}
	l.ended[id] = s
}

func (l *ledger) fail(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.errors) < 1000 {
		l.errors = append(l.errors, fmt.Sprintf(format, args...))
	}
}

func (l *ledger) add(n *int, k int) {
	l.mu.Lock()
	*n += k
	l.mu.Unlock()
}

func (l *ledger) summary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	by := map[string]int{}
	for _, s := range l.ended {
		by[s.status]++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "runs started %d, ended %d %v; watcher calls %d, report updates heard %d; sessions abandoned %d; client errors %d",
		l.started, len(l.ended), by, l.watchOps, l.updates, l.abandoned, len(l.errors))
	for i, e := range l.errors {
		if i == 10 {
			fmt.Fprintf(&b, "\n  … %d more", len(l.errors)-10)
			break
		}
		b.WriteString("\n  " + e)
	}
	return b.String()
}

func connect(ctx context.Context, url string, opt *mcp.ClientOptions) (*mcp.ClientSession, error) {
	return mcp.NewClient(&mcp.Implementation{Name: "mcpsoak", Version: "1"}, opt).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
}

// call runs a tool and decodes its structured result into out.
func call(ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any, out any) error {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return err
	}
	if res.IsError {
		var msg string
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				msg += t.Text
			}
		}
		return fmt.Errorf("%s: %s", name, msg)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	return json.Unmarshal(raw, out)
}

// sessionView is get_session's answer, as far as the soak reads it.
type sessionView struct {
	Session struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	} `json:"session"`
	Report   string          `json:"report"`
	Progress json.RawMessage `json:"progress"`
}

var questions = []string{
	"How is software testing studied?",
	"Which methods detect CRISPR off-target edits?",
	"What limits the efficiency of perovskite solar cells?",
	"How do transformers handle long context?",
}

// research starts runs one after another until ctx ends, each in a client
// session of its own (so sessions come and go): every third with the
// blocking research tool, the rest with start_research followed by polling.
// The run in progress when ctx ends is followed to its end.
func research(ctx context.Context, url string, who int, pause time.Duration, led *ledger) {
	for n := 0; ctx.Err() == nil; n++ {
		// The run itself is not cut short by the soak's end.
		run := context.WithoutCancel(ctx)
		cs, err := connect(run, url, nil)
		if err != nil {
			led.fail("researcher %d: connect: %v", who, err)
			sleep(ctx, pause)
			continue
		}
		q := questions[(who+n)%len(questions)]
		led.add(&led.started, 1)
		if n%3 == 2 {
			var out struct {
				SessionID string `json:"session_id"`
				Status    string `json:"status"`
				Report    string `json:"report"`
			}
			if err := call(run, cs, "research", map[string]any{"question": q}, &out); err != nil {
				led.fail("researcher %d: research: %v", who, err)
			} else {
				led.end(out.SessionID, seen{status: out.Status, report: sha256.Sum256([]byte(out.Report))})
			}
		} else {
			followStarted(run, cs, who, q, led)
		}
		cs.Close()
		sleep(ctx, pause)
	}
}

func followStarted(ctx context.Context, cs *mcp.ClientSession, who int, q string, led *ledger) {
	var started struct {
		SessionID string `json:"session_id"`
	}
	if err := call(ctx, cs, "start_research", map[string]any{"question": q}, &started); err != nil {
		led.fail("researcher %d: start_research: %v", who, err)
		return
	}
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		var v sessionView
		if err := call(ctx, cs, "get_session", map[string]any{"id": started.SessionID}, &v); err != nil {
			led.fail("researcher %d: get_session %s: %v", who, started.SessionID, err)
			return
		}
		if v.Session.Status != "running" {
			led.end(started.SessionID, seen{status: v.Session.Status, report: sha256.Sum256([]byte(v.Report))})
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	led.fail("researcher %d: %s still running after 10 minutes", who, started.SessionID)
}

// watch lists sessions, reads one, subscribes to running ones' reports and
// searches the knowledge base, reconnecting every few minutes.
func watch(ctx context.Context, url string, led *ledger) {
	for ctx.Err() == nil {
		opt := &mcp.ClientOptions{ResourceUpdatedHandler: func(context.Context, *mcp.ResourceUpdatedNotificationRequest) {
			led.add(&led.updates, 1)
		}}
		cs, err := connect(ctx, url, opt)
		if err != nil {
			if ctx.Err() == nil {
				led.fail("watcher: connect: %v", err)
			}
			sleep(ctx, time.Second)
			continue
		}
		subscribed := map[string]bool{}
		until := time.Now().Add(3 * time.Minute)
		for ctx.Err() == nil && time.Now().Before(until) {
			watchOnce(ctx, cs, subscribed, led)
			sleep(ctx, 2*time.Second)
		}
		cs.Close()
	}
}

func watchOnce(ctx context.Context, cs *mcp.ClientSession, subscribed map[string]bool, led *ledger) {
	var list struct {
		Sessions []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"sessions"`
	}
	if err := call(ctx, cs, "list_sessions", map[string]any{"limit": 20}, &list); err != nil {
		if ctx.Err() == nil {
			led.fail("watcher: list_sessions: %v", err)
		}
		return
	}
	led.add(&led.watchOps, 1)
	for _, s := range list.Sessions {
		if s.Status != "running" || subscribed[s.ID] {
			continue
		}
		subscribed[s.ID] = true
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "researchtui://sessions/" + s.ID + "/report"}); err != nil && ctx.Err() == nil {
			led.fail("watcher: subscribe %s: %v", s.ID, err)
		}
		var v sessionView
		if err := call(ctx, cs, "get_session", map[string]any{"id": s.ID}, &v); err != nil && ctx.Err() == nil {
			led.fail("watcher: get_session %s: %v", s.ID, err)
		}
		led.add(&led.watchOps, 2)
		break
	}
	var found any
	if err := call(ctx, cs, "search_knowledge", map[string]any{"query": "software testing", "k": 5}, &found); err != nil && ctx.Err() == nil {
		led.fail("watcher: search_knowledge: %v", err)
	}
	led.add(&led.watchOps, 1)
}

// abandon opens an HTTP MCP session (initialize, initialized) and walks
// away without closing it, every `every`, as a crashed agent host does.
func abandon(ctx context.Context, url string, every time.Duration, led *ledger) {
	client := &http.Client{Timeout: 10 * time.Second}
	for ctx.Err() == nil {
		id, err := post(client, url, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"abandoner","version":"1"}}}`)
		if err == nil {
			_, err = post(client, url, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		}
		if err != nil {
			if ctx.Err() == nil {
				led.fail("abandoner: %v", err)
			}
		} else {
			led.add(&led.abandoned, 1)
		}
		sleep(ctx, every)
	}
}

func post(client *http.Client, url, session, body string) (string, error) {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode/100 != 2 {
		return "", fmt.Errorf("%s: HTTP %d", body[:min(len(body), 60)], resp.StatusCode)
	}
	return resp.Header.Get("Mcp-Session-Id"), nil
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
