package mcp_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// rawSession speaks Streamable HTTP by hand, the way a hostile or careless
// client would: it sends exactly the bytes it is given.
type rawSession struct {
	t     *testing.T
	url   string
	id    string // Mcp-Session-Id once initialized
	token string
	proto string // protocol version asked at initialize
}

func newRawSession(t *testing.T, url, proto string) *rawSession {
	t.Helper()
	s := &rawSession{t: t, url: url, proto: proto}
	s.initialize()
	return s
}

func (s *rawSession) initialize() {
	s.t.Helper()
	resp, body := s.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + s.proto + `","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if resp.StatusCode != http.StatusOK {
		s.t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	s.id = resp.Header.Get("Mcp-Session-Id")
	if r, b := s.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); r.StatusCode != http.StatusAccepted {
		s.t.Fatalf("initialized: %d %s", r.StatusCode, b)
	}
}

// post sends one body and returns the response with its body read.
func (s *rawSession) post(body string) (*http.Response, string) {
	s.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
		req.Header.Set("Mcp-Protocol-Version", s.proto)
	}
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// rpcReply is one JSON-RPC response, decoded from a JSON or an SSE body.
type rpcReply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// replies decodes every JSON-RPC message of a response body: an SSE stream
// ("data: ..." lines) or a JSON object or array. A body that holds no
// valid message fails the test: that is what a client would choke on.
func replies(t *testing.T, body string) []rpcReply {
	t.Helper()
	var out []rpcReply
	if strings.Contains(body, "data: ") {
		for line := range strings.SplitSeq(body, "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				var r rpcReply
				if err := json.Unmarshal([]byte(d), &r); err != nil {
					t.Fatalf("an SSE event that is not JSON: %v\n%q", err, d)
				}
				out = append(out, r)
			}
		}
	} else if strings.HasPrefix(strings.TrimSpace(body), "[") {
		if err := json.Unmarshal([]byte(body), &out); err != nil {
			t.Fatalf("a batch reply that is not JSON: %v\n%q", err, body)
		}
	} else {
		var r rpcReply
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			t.Fatalf("a reply that is not JSON: %v\n%q", err, body)
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		t.Fatalf("no JSON-RPC reply in %q", body)
	}
	return out
}
