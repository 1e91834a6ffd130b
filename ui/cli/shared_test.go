package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/researchtui/researchtui/llm/ollamafake"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/search/sourcefake"
	"github.com/researchtui/researchtui/store"
)

// shortCLI is newCLI with a data dir whose socket path fits the 108-byte
// limit of unix sockets (t.TempDir's names can be longer).
func shortCLI(t *testing.T, ollamaURL string, src *sourcefake.Server) (*cli, string) {
	t.Helper()
	c := newCLI(t, ollamaURL, src)
	data, err := os.MkdirTemp("", "rtd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(data) })
	for i, kv := range c.env {
		if strings.HasPrefix(kv, "RESEARCHTUI_DATA_DIR=") {
			c.env[i] = "RESEARCHTUI_DATA_DIR=" + data
		}
	}
	return c, data
}

// fakeWorld is the fakes (Ollama with opt, the sources) and a CLI whose
// data dir can take a socket.
func fakeWorld(t *testing.T, opt ollamafake.Options) (*ollamafake.Server, *cli, string) {
	return fakeWorldHeld(t, opt, nil)
}

// fakeWorldHeld is fakeWorld whose model holds each writer's call until
// release is closed (nil holds nothing): a run is then certainly still
// going while a test starts a second process beside it, however slow the
// machine.
func fakeWorldHeld(t *testing.T, opt ollamafake.Options, release <-chan struct{}) (*ollamafake.Server, *cli, string) {
	script := &pipelinetest.Script{RevisionRounds: 1}
	answer := script.Responder()
	opt.Responder = func(call ollamafake.ChatCall) ollamafake.Reply {
		if release != nil && pipelinetest.KindOf(call) == pipelinetest.Writer {
			<-release
		}
		return answer(call)
	}
	oll := ollamafake.New(opt)
	t.Cleanup(oll.Close)
	src := sourcefake.New()
	t.Cleanup(src.Close)
	c, data := shortCLI(t, oll.URL, src)
	return oll, c, data
}

// startMCP starts `researchtui mcp` as a client would and connects to it.
func startMCP(t *testing.T, c *cli) (*mcp.ClientSession, *exec.Cmd, *syncBuffer) {
	t.Helper()
	cmd := c.command("mcp")
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).
		Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr)
	}
	return cs, cmd, stderr
}

// syncBuffer is a subprocess's output that a test may print while the
// process still writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func callText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, ct := range res.Content {
		if tc, ok := ct.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return res, b.String()
}

// Two processes on one data dir: while `researchtui mcp` owns it, `sessions`
// commands and a second `researchtui mcp` read through it instead of
// exiting 4; when the owner exits, the next process takes the store over.
func TestTwoProcessesShareADataDir(t *testing.T) {
	t.Parallel()
	_, c, data := fakeWorld(t, ollamafake.Options{})

	owner, ownerCmd, ownerErr := startMCP(t, c)
	res, body := callText(t, owner, "research", map[string]any{"question": "How is software testing studied?", "sources": []string{"arxiv", "openalex"}, "depth": "quick"})
	if res.IsError {
		t.Fatalf("research: %s\n%s", body, ownerErr)
	}
	var out struct {
		SessionID string `json:"session_id"`
		Report    string `json:"report"`
	}
	raw, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(raw, &out)

	// The owner holds the database: these are clients.
	stdout, stderr, code, _ := c.run("sessions", "list", "--json")
	if code != 0 || !strings.Contains(stdout, out.SessionID) {
		t.Fatalf("sessions list beside the owner: exit %d %q %s", code, stdout, stderr)
	}
	stdout, stderr, code, _ = c.run("sessions", "show", out.SessionID, "--json")
	if code != 0 || !strings.Contains(stdout, `"sources"`) || !strings.Contains(stdout, "References") {
		t.Fatalf("sessions show beside the owner: exit %d %s", code, stderr)
	}
	stdout, _, code, _ = c.run("sessions", "export", out.SessionID, "--format", "bibtex")
	if code != 0 || !strings.Contains(stdout, "@") {
		t.Errorf("export beside the owner: exit %d %q", code, stdout)
	}
	stdout, stderr, code, _ = c.run("search", "--json", "software testing")
	if code != 0 || !strings.Contains(stdout, `"chunk_id"`) {
		t.Errorf("search beside the owner: exit %d %q %s", code, stdout, stderr)
	}
	if stdout, _, _, _ = c.run("doctor"); !strings.Contains(stdout, "owned by researchtui pid") {
		t.Errorf("doctor beside the owner:\n%s", stdout)
	}
	// A living review's commands run beside the owner (the open TUI, for
	// cron's update --due): follow, then the due update through it.
	if stdout, stderr, code, _ = c.run("follow", out.SessionID, "--every", "7d"); code != 0 {
		t.Errorf("follow beside the owner: exit %d %q %s", code, stdout, stderr)
	}
	if stdout, stderr, code, _ = c.run("update", out.SessionID); code != 0 || !strings.Contains(stdout, "no new version") {
		t.Errorf("update beside the owner: exit %d %q %s", code, stdout, stderr)
	}
	if res, _ := callText(t, owner, "get_session", map[string]any{"id": out.SessionID, "part": "all"}); res != nil {
		if raw, _ := json.Marshal(res.StructuredContent); !strings.Contains(string(raw), `"updates":[{"at"`) {
			t.Errorf("the owner does not see the check:\n%s", raw)
		}
	}
	if _, stderr, code, _ = c.run("sessions", "show", "01nosuchsession"); code != exitUsage {
		t.Errorf("an unknown session through the owner: exit %d %s", code, stderr)
	}

	second, secondCmd, secondErr := startMCP(t, c)
	if _, text := callText(t, second, "list_sessions", nil); !strings.Contains(text, out.SessionID) {
		t.Errorf("list_sessions through the owner: %s\n%s", text, secondErr)
	}
	if res, text := callText(t, second, "get_session", map[string]any{"id": out.SessionID}); res.IsError || !strings.Contains(text, "References") {
		t.Errorf("get_session through the owner: %s", text)
	}
	rr, err := second.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "researchtui://sessions/" + out.SessionID + "/report"})
	if err != nil || rr.Contents[0].Text != out.Report {
		t.Errorf("the report resource through the owner: %v", err)
	}
	if res, text := callText(t, second, "search_knowledge", map[string]any{"query": "software testing"}); res.IsError || !strings.Contains(text, "1. ") {
		t.Errorf("search_knowledge through the owner: %s", text)
	}
	// Research through the owner: the second server's run writes through
	// it, and the owner lists the new session as completed.
	res, text := callText(t, second, "research", map[string]any{"question": "How are GUI tests generated?", "sources": []string{"arxiv"}, "depth": "quick"})
	if res.IsError || !strings.Contains(text, "References") {
		t.Fatalf("research beside the owner: %s\n%s", text, secondErr)
	}
	var second1 struct {
		SessionID string `json:"session_id"`
		Status    string `json:"status"`
	}
	raw, _ = json.Marshal(res.StructuredContent)
	json.Unmarshal(raw, &second1)
	if _, text := callText(t, owner, "list_sessions", nil); !strings.Contains(text, second1.SessionID) || second1.Status != "completed" {
		t.Errorf("the owner does not list the run made beside it (%s, %s): %s", second1.SessionID, second1.Status, text)
	}
	second.Close()
	secondCmd.Wait()

	// The owner exits; its socket goes with it and the next process owns.
	owner.Close()
	ownerCmd.Wait()
	if _, err := os.Stat(filepath.Join(data, "run", "store.sock")); !os.IsNotExist(err) {
		t.Errorf("the owner left its socket: %v", err)
	}
	if stdout, stderr, code, _ = c.run("sessions", "list"); code != 0 || !strings.Contains(stdout, out.SessionID) {
		t.Errorf("after the owner exited: exit %d %s", code, stderr)
	}
	if _, stderr, code, _ = c.run("sessions", "delete", out.SessionID); code != 0 {
		t.Errorf("delete: exit %d %s", code, stderr)
	}
}

// An owner killed with SIGKILL leaves its socket; nothing wedges on it.
func TestKilledOwnerLeavesNoWedge(t *testing.T) {
	t.Parallel()
	c, data := shortCLI(t, "http://127.0.0.1:1", nil)
	cmd := c.command("mcp")
	stdin, err := cmd.StdinPipe() // held open: the server keeps running
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(data, "run", "store.sock")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the owner never shared the data dir")
		}
	}
	if _, _, code, _ := c.run("sessions", "list"); code != 0 {
		t.Errorf("beside a live owner: exit %d", code)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if _, err := os.Stat(sock); err != nil {
		t.Fatalf("SIGKILL should leave the socket behind: %v", err)
	}
	if _, stderr, code, _ := c.run("sessions", "list"); code != 0 {
		t.Errorf("after the owner was killed: exit %d %s", code, stderr)
	}
}

// Exit 4 stays for a store nobody answers for: here the test process holds
// the lock and serves no socket.
func TestUnreachableStoreIsExit4(t *testing.T) {
	t.Parallel()
	c, data := shortCLI(t, "http://127.0.0.1:1", nil)
	st, err := store.Open(filepath.Join(data, "researchtui.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, stderr, code, _ := c.run("sessions", "list")
	if code != exitLocked || !strings.Contains(stderr, "does not answer") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}
