package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	mcpserver "github.com/researchtui/researchtui/ui/mcp"
)

func httpServer(t *testing.T, opt mcpserver.HTTPOptions) *httptest.Server {
	ts, _ := httpServerWith(t, opt)
	return ts
}

// httpServerWith is httpServer with the server, to count its sessions.
func httpServerWith(t *testing.T, opt mcpserver.HTTPOptions) (*httptest.Server, *mcpserver.Server) {
	t.Helper()
	env := pipelinetest.NewEnv(t, nil, "")
	srv := mcpserver.New(mcpserver.Config{Engine: env.Engine, Defaults: env.Options(""), Version: "test"})
	ts := httptest.NewServer(srv.Handler(opt))
	t.Cleanup(ts.Close)
	t.Cleanup(srv.Shutdown)
	return ts, srv
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`

func post(t *testing.T, url string, hdr map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(initBody))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// A web page of another origin must not drive the server on localhost:
// the SDK's handler alone answers it 200.
func TestForeignOriginIsRefused(t *testing.T) {
	t.Parallel()
	ts := httpServer(t, mcpserver.HTTPOptions{})
	if r := post(t, ts.URL+"/mcp", map[string]string{"Origin": "https://evil.example"}); r.StatusCode != http.StatusForbidden {
		t.Errorf("POST from a foreign Origin: %d, want 403", r.StatusCode)
	}
	if r := post(t, ts.URL+"/mcp", map[string]string{"Sec-Fetch-Site": "cross-site"}); r.StatusCode != http.StatusForbidden {
		t.Errorf("POST marked cross-site: %d, want 403", r.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/mcp", nil)
	req.Header.Set("Origin", "https://evil.example")
	req.Header.Set("Accept", "text/event-stream")
	if r, err := http.DefaultClient.Do(req); err != nil || r.StatusCode != http.StatusForbidden {
		t.Errorf("GET (the event stream) from a foreign Origin: %v %v, want 403", r.StatusCode, err)
	}
	if r := post(t, ts.URL+"/mcp", map[string]string{"Origin": ts.URL}); r.StatusCode != http.StatusOK {
		t.Errorf("POST from the server's own origin: %d, want 200", r.StatusCode)
	}
	if r := post(t, ts.URL+"/mcp", nil); r.StatusCode != http.StatusOK {
		t.Errorf("POST from a non-browser client (no Origin): %d, want 200", r.StatusCode)
	}
}

func TestBearerToken(t *testing.T) {
	t.Parallel()
	ts := httpServer(t, mcpserver.HTTPOptions{Token: "s3cret"})
	if r := post(t, ts.URL+"/mcp", nil); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token: %d, want 401", r.StatusCode)
	}
	if r := post(t, ts.URL+"/mcp", map[string]string{"Authorization": "Bearer wrong"}); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("wrong token: %d, want 401", r.StatusCode)
	}
	// The scheme is case-insensitive (RFC 9110 §11.1); the token is not.
	for _, h := range []string{"bearer s3cret", "BEARER s3cret", "Bearer  s3cret "} {
		if r := post(t, ts.URL+"/mcp", map[string]string{"Authorization": h}); r.StatusCode != http.StatusOK {
			t.Errorf("Authorization %q: %d, want 200", h, r.StatusCode)
		}
	}
	for _, h := range []string{"Bearer S3CRET", "Basic s3cret", "Bearers3cret", "s3cret"} {
		if r := post(t, ts.URL+"/mcp", map[string]string{"Authorization": h}); r.StatusCode != http.StatusUnauthorized {
			t.Errorf("Authorization %q: %d, want 401", h, r.StatusCode)
		}
	}
	// A real client with the token lists the tools.
	hc := &http.Client{Transport: authTransport{"s3cret"}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(res.Tools) != 9 {
		t.Fatalf("tools over HTTP with the token: %v", err)
	}
}

type authTransport struct{ token string }

func (a authTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+a.token)
	return http.DefaultTransport.RoundTrip(r)
}

func TestIsLoopback(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]bool{
		"127.0.0.1:8765": true, "localhost:1": true, "[::1]:80": true,
		"0.0.0.0:8765": false, ":8765": false, "192.168.1.2:80": false, "example.com:80": false, "nonsense": false,
	} {
		if got := mcpserver.IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v", addr, got)
		}
	}
}
