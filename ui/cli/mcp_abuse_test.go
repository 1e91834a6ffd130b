package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// A desktop client that sends a resource URI with a control character (or
// DEL, or U+E0001, or invalid UTF-8) gets a JSON-RPC error on stdout, and
// the server goes on: go-sdk v1.8.0 alone writes an error that is not
// JSON and exits 1 ("invalid character 'x' in string escape code").
func TestMCPStdioSurvivesControlCharacters(t *testing.T) {
	c := newCLI(t, "http://127.0.0.1:1", nil)
	cmd := exec.Command(os.Args[0], "mcp")
	cmd.Env = c.env
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
