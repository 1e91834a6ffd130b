package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/researchtui/researchtui/llm/ollamafake"
)

// `researchtui mcp` as a desktop client starts it: a child process spoken to
// over stdin/stdout. stdout must carry protocol messages only (the SDK's
// transport fails on anything else), a research call must return a report,
// and closing stdin must end the process cleanly.
func TestMCPOverStdio(t *testing.T) {
	t.Parallel()
	_, c, _ := fakeWorld(t, ollamafake.Options{})

	cmd := c.command("mcp")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var progress int
	client := mcp.NewClient(&mcp.Implementation{Name: "stdio-test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { progress++ },
	})
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\nstderr: %s", err, stderr.String())
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 9 {
		t.Fatalf("tools: %v %v", tools, err)
	}
	help, _, _, _ := c.run("mcp", "--help")
	for _, tool := range tools.Tools { // issue 36 #22: help named 6 of 8
		if !strings.Contains(help, tool.Name) {
			t.Errorf("mcp --help does not name the tool %s", tool.Name)
		}
	}
	p := &mcp.CallToolParams{Name: "research", Arguments: map[string]any{"question": "How is software testing studied?", "sources": []string{"arxiv", "openalex"}}}
	p.SetProgressToken(1)
	res, err := cs.CallTool(ctx, p)
	if err != nil {
		t.Fatalf("research: %v\nstderr: %s", err, stderr.String())
	}
	body := ""
	for _, ct := range res.Content {
		if tc, ok := ct.(*mcp.TextContent); ok {
			body += tc.Text
		}
	}
	if res.IsError || !strings.Contains(body, "## References") {
		t.Fatalf("research result: %s\nstderr: %s", body, stderr.String())
	}
	if progress == 0 {
		t.Error("no progress notifications")
	}
	bad, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_session", Arguments: map[string]any{"id": "nope"}})
	if err != nil || !bad.IsError {
		t.Errorf("an unknown session: %v %+v", err, bad)
	}
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 0 {
		t.Errorf("the server did not exit 0 when stdin closed: %v\nstderr: %s", cmd.ProcessState, stderr.String())
	}
	// The session it ran is the store's like any other.
	out, _, code, _ := c.run("sessions", "list")
	if code != 0 || !strings.Contains(out, "completed") {
		t.Errorf("sessions list after mcp: %d %q", code, out)
	}
}

func TestMCPHTTPNeedsTokenOffLoopback(t *testing.T) {
	t.Parallel()
	c := newCLI(t, "http://127.0.0.1:1", nil)
	_, stderr, code, _ := c.run("mcp", "--http", "0.0.0.0:0")
	if code != exitUsage || !strings.Contains(stderr, "token") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

// A client that goes away mid-run (the desktop app quits: its end of the
// pipe closes) cancels the run; the server saves the session as cancelled,
// exits 0, and `resume` finishes it later.
func TestMCPClientGoneMidRun(t *testing.T) {
	t.Parallel()
	_, c, _ := fakeWorld(t, ollamafake.Options{TokenDelay: 2 * time.Millisecond})

	cmd := c.command("mcp")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Raw JSON-RPC, as any client writes it: the SDK client would wait for
	// the call before closing, a quitting app does not.
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"research","arguments":{"question":"How is software testing studied?","sources":["arxiv","openalex"]},"_meta":{"progressToken":"p"}}}`,
	} {
		if _, err := io.WriteString(stdin, msg+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "notifications/progress") && strings.Contains(sc.Text(), "research") {
			break
		}
	}
	stdin.Close() // the client is gone
	go io.Copy(io.Discard, stdout)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("server exit: %v\n%s", err, stderr.String())
	}
	out, _, _, _ := c.run("sessions", "list", "--json")
	var s struct{ ID, Status string }
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &s); err != nil || s.Status != "cancelled" {
		t.Fatalf("after the client left mid-run: %q\n%s", out, stderr.String())
	}
	if _, stderr, code, _ := c.run("resume", s.ID); code != 0 {
		t.Errorf("resume: exit %d\n%s", code, stderr)
	}
}
