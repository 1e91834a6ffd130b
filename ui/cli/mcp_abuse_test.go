package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A desktop client that sends a resource URI with a control character (or
// DEL, or U+E0001, or invalid UTF-8) gets a JSON-RPC error on stdout, and
// the server goes on: go-sdk v1.8.0 alone writes an error that is not
// JSON and exits 1 ("invalid character 'x' in string escape code").
func TestMCPStdioSurvivesControlCharacters(t *testing.T) {
	t.Parallel()
	c := newCLI(t, "http://127.0.0.1:1", nil)
	cmd := c.command("mcp")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	lines.Buffer(make([]byte, 1<<20), 1<<20)
	send := func(s string) { _, _ = io.WriteString(stdin, s+"\n") }
	// reply reads stdout up to the reply to id: every line must be JSON.
	reply := func(id int) map[string]any {
		for lines.Scan() {
			var m map[string]any
			if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
				t.Fatalf("stdout carries a line that is not JSON: %v\n%q", err, lines.Text())
			}
			if m["id"] == float64(id) {
				return m
			}
		}
		t.Fatalf("the server stopped answering (waiting for id %d)\nstderr: %s", id, stderr.String())
		return nil
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	reply(1)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i, bad := range []string{`\u0001`, `\u007f`, `\udb40\udc01`, "\xff"} {
		id := 10 + 2*i
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":"researchtui://sessions/%s/report"}}`, id, bad))
		if m := reply(id); m["error"] == nil {
			t.Errorf("%q: want a JSON-RPC error, got %v", bad, m)
		}
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, id+1))
		if m := reply(id + 1); !strings.Contains(fmt.Sprint(m["result"]), "search_knowledge") {
			t.Errorf("after %q, tools/list: %v", bad, m)
		}
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("the server did not exit cleanly when stdin closed: %v\nstderr: %s", err, stderr.String())
	}
}

// A blank token is refused at start, whichever way it comes; a token file
// others can read is refused; a 0600 file's token guards the server.
func TestMCPTokenSources(t *testing.T) {
	t.Parallel()
	c := newCLI(t, "http://127.0.0.1:1", nil)
	for _, tc := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"--token", "   "}, "", "--token is empty"},
		{[]string{"--token", ""}, "", "--token is empty"},
		{nil, "RESEARCHTUI_MCP_TOKEN= \t", "RESEARCHTUI_MCP_TOKEN is empty"},
	} {
		cc := *c
		cc.env = append(append([]string{}, c.env...), tc.env)
		_, stderr, code, _ := cc.run(append([]string{"mcp", "--http", "127.0.0.1:0"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v %q: exit %d %q, want exit %d naming %q", tc.args, tc.env, code, stderr, exitUsage, tc.want)
		}
	}
	file := filepath.Join(c.dir, "token")
	if err := os.WriteFile(file, []byte("s3cret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code, _ := c.run("mcp", "--http", "127.0.0.1:0", "--token-file", file); code != exitUsage || !strings.Contains(stderr, "chmod 600") {
		t.Errorf("a token file others can read: exit %d %q", code, stderr)
	}
	if err := os.Chmod(file, 0o600); err != nil {
		t.Fatal(err)
	}
	url := startMCPHTTP(t, c, "--token-file", file)
	for hdr, want := range map[string]int{"": 401, "Bearer s3cret": 200, "bearer s3cret": 200, "Bearer s3cret\n": 200, "Bearer other": 401} {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if hdr != "" {
			req.Header.Set("Authorization", strings.TrimSpace(hdr))
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Authorization %q: %d, want %d", hdr, resp.StatusCode, want)
		}
	}
}

// startMCPHTTP runs `researchtui mcp --http 127.0.0.1:0 args...` and
// returns its /mcp URL; the server is interrupted when the test ends.
func startMCPHTTP(t *testing.T, c *cli, args ...string) string {
	t.Helper()
	cmd := c.command(append([]string{"mcp", "--http", "127.0.0.1:0"}, args...)...)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		stopped := time.AfterFunc(20*time.Second, func() {
			t.Errorf("the MCP server did not stop within 20 s of an interrupt")
			_ = cmd.Process.Kill()
		})
		_ = cmd.Wait()
		stopped.Stop()
	})
	lines := bufio.NewScanner(stderr)
	for lines.Scan() {
		if _, rest, ok := strings.Cut(lines.Text(), "MCP server at "); ok {
			go func() { _, _ = io.Copy(io.Discard, stderr) }()
			url, _, _ := strings.Cut(rest, " ")
			return url
		}
	}
	t.Fatal("the MCP server did not start")
	return ""
}
