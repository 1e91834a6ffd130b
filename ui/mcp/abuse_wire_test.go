package mcp_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	mcpserver "github.com/researchtui/researchtui/ui/mcp"
)

// hostileRequests are requests whose identifiers hold what go-sdk v1.8.0
// cannot put in an error reply (it formats them with %q): C0 and C1
// controls, DEL, an unprintable tag character (U+E0001) and raw invalid
// UTF-8, in a resource URI, a tool name and a prompt name.
var hostileRequests = func() []string {
	var out []string
	for _, bad := range []string{`\u0001`, `\u007f`, `\u009b`, `\udb40\udc01`, "\xff\xfe"} {
		out = append(out,
			`{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"researchtui://sessions/`+bad+`/report"}}`,
			`{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"file:///`+bad+`"}}`,
			`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get`+bad+`","arguments":{}}}`,
			`{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":"`+bad+`"}}`,
		)
	}
	return out
}()

// Over HTTP, each hostile request gets a JSON-RPC error in valid JSON, and
// the same session then still answers a plain request.
func TestControlCharactersOverHTTPAreAnErrorAndTheSessionLives(t *testing.T) {
	t.Parallel()
	ts := httpServer(t, mcpserver.HTTPOptions{})
	s := newRawSession(t, ts.URL+"/mcp", "2025-06-18")
	for _, body := range hostileRequests {
		resp, got := s.post(body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%q: status %d %s", body, resp.StatusCode, got)
		}
		r := replies(t, got)[0]
		if r.Error == nil || string(r.ID) != "7" {
			t.Errorf("%q: want a JSON-RPC error for id 7, got %s", body, got)
		}
		resp, got = s.post(`{"jsonrpc":"2.0","id":8,"method":"tools/list"}`)
		if resp.StatusCode != http.StatusOK || !strings.Contains(got, "search_knowledge") {
			t.Fatalf("after %q the session no longer answers tools/list: %d %q", body, resp.StatusCode, got)
		}
	}
}

// Through the SDK's own client (which sends what it is given), each hostile
// read is an error and the connection keeps working.
func TestControlCharactersThroughTheSDKClient(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	ctx := context.Background()
	for _, r := range []rune{0x01, 0x7f, 0x9b, 0xE0001} {
		uri := fmt.Sprintf("researchtui://sessions/%c/report", r)
		if _, err := h.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil || !strings.Contains(err.Error(), "control character") {
			t.Errorf("read %q: %v, want an error naming the control character", uri, err)
		}
		if _, err := h.cs.ListTools(ctx, nil); err != nil {
			t.Fatalf("after reading %q the connection is broken: %v", uri, err)
		}
	}
	// An ordinary unknown report is still the SDK's "not found", with JSON data.
	if _, err := h.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "researchtui://sessions/nope/report"}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("an unknown report: %v", err)
	}
}
