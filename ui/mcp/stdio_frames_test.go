package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/store"
	mcpserver "github.com/researchtui/researchtui/ui/mcp"
)

// stdioServer serves one raw client over pipes: what it writes goes to
// the server's stdin, replies come back line by line.
type stdioServer struct {
	in      *io.PipeWriter
	replies chan map[string]any
	done    chan error
	env     *pipelinetest.Env
}

func newStdioServer(t *testing.T, ctx context.Context) *stdioServer {
	t.Helper()
	env := pipelinetest.NewEnv(t, &pipelinetest.Script{RevisionRounds: 0}, "")
	defaults := env.Options("")
	defaults.Question = ""
	srv := mcpserver.New(mcpserver.Config{Engine: env.Engine, Defaults: defaults, Version: "test"})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &stdioServer{in: inW, replies: make(chan map[string]any, 100), done: make(chan error, 1), env: env}
	go func() {
		err := srv.ServeIO(ctx, inR, outW, io.Discard)
		outW.Close()
		s.done <- err
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				t.Errorf("the server wrote a line that is not JSON: %q", sc.Text())
				continue
			}
			s.replies <- m
		}
		close(s.replies)
	}()
	return s
}

func (s *stdioServer) send(t *testing.T, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(s.in, l+"\n"); err != nil {
			t.Fatal(err)
		}
	}
}

// reply is the next answer that is not a notification.
func (s *stdioServer) reply(t *testing.T) map[string]any {
	t.Helper()
	for {
		select {
		case m, ok := <-s.replies:
			if !ok {
				t.Fatal("the server closed its output")
			}
			if _, isNote := m["method"]; !isNote {
				return m
			}
		case <-time.After(30 * time.Second):
			t.Fatal("no answer in 30 s")
		}
	}
}

// startResearch calls start_research with the JSON arguments args and
// returns the session ID it answers.
func (s *stdioServer) startResearch(t *testing.T, args string) string {
	t.Helper()
	s.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"start_research","arguments":`+args+`}}`)
	r := s.reply(t)
	res, _ := r["result"].(map[string]any)
	sc, _ := res["structuredContent"].(map[string]any)
	id, _ := sc["session_id"].(string)
	if id == "" {
		t.Fatalf("start_research: %v", r)
	}
	return id
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// TestMalformedFramesAreAnsweredAndServingGoesOn (issue 48): a line that
// is not JSON gets a parse error, JSON that is not a JSON-RPC message an
// invalid-request error (with its id when it has one), and the session
// goes on: the next call is answered. Before, the first bad line ended
// the server, and every run it was driving with it.
func TestMalformedFramesAreAnsweredAndServingGoesOn(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s := newStdioServer(t, ctx)
	s.send(t, initialize, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if r := s.reply(t); r["id"] != float64(1) || r["result"] == nil {
		t.Fatalf("initialize: %v", r)
	}
	for _, c := range []struct {
		line string
		code float64
		id   any
	}{
		{`this is a log line, not JSON`, -32700, nil},
		{`{"jsonrpc":"2.0","id":7,"method":`, -32700, nil},
		{`{"id":8,"hello":"world"}`, -32600, float64(8)},
		{`[]`, -32600, nil},
		{`"just a string"`, -32600, nil},
	} {
		s.send(t, c.line)
		r := s.reply(t)
		e, _ := r["error"].(map[string]any)
		if e == nil || e["code"] != c.code || r["id"] != c.id {
			t.Errorf("%q: answered %v; want error %v with id %v", c.line, r, c.code, c.id)
		}
	}
	s.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if r := s.reply(t); r["id"] != float64(2) || r["result"] == nil {
		t.Errorf("tools/list after the bad lines: %v", r)
	}
	s.in.Close()
	if err := <-s.done; err != nil {
		t.Errorf("serve: %v", err)
	}
}

// TestAStartedRunOutlivesItsClient: as the README says, a run started
// with start_research goes on when the client that started it leaves,
// and completes; the server returns once it has.
func TestAStartedRunOutlivesItsClient(t *testing.T) {
	t.Parallel()
	s := newStdioServer(t, t.Context())
	s.send(t, initialize, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s.reply(t)
	id := s.startResearch(t, `{"question":"`+question+`"}`)
	s.in.Close() // the client is gone
	if err := <-s.done; err != nil {
		t.Errorf("serve: %v", err)
	}
	sess, err := s.env.Store.Session(id)
	if err != nil || sess.Status != store.StatusCompleted {
		t.Errorf("the started run ended %q (%v); want it completed", sess.Status, err)
	}
}

// stuckSource is a search that answers only when the run ends.
type stuckSource struct{ searching chan struct{} }

func (stuckSource) Name() string { return "arxiv" }
func (s stuckSource) Search(ctx context.Context, _ string, _ int) ([]search.Record, error) {
	select {
	case s.searching <- struct{}{}:
	default:
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestAServerStoppedInterruptsItsRuns: a server stopped by a signal (its
// context ends) while a started run searches leaves the run interrupted,
// as the README says, and resumable.
func TestAServerStoppedInterruptsItsRuns(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	s := newStdioServer(t, ctx)
	stuck := stuckSource{searching: make(chan struct{}, 1)}
	s.env.Engine.Sources["arxiv"] = stuck
	s.send(t, initialize, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s.reply(t)
	id := s.startResearch(t, `{"question":"`+question+`","sources":["arxiv"]}`)
	<-stuck.searching
	cancel() // a signal
	if err := <-s.done; err != nil {
		t.Errorf("serve: %v", err)
	}
	sess, err := s.env.Store.Session(id)
	if err != nil || sess.Status != store.StatusInterrupted {
		t.Errorf("the run ended %q (%v); want it interrupted", sess.Status, err)
	}
}
