package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/researchtui/researchtui/llm/ollamafake"
	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/store"
)

// Runs in two processes on one data dir, with a process killed or exiting
// mid-run: the run finishes (or resumes) without repeating a model call
// that had finished.

// analysedSource names the sources of an analyst's call: "Source: T (" for
// one, "Source 2: T (" for each of several abstracts in one call.
var analysedSource = regexp.MustCompile(`(?m)^Source(?: \d+)?: (.+) \(`)

// modelCalls counts the fake's chat calls: planners, and analyses by source.
func modelCalls(oll *ollamafake.Server) (planners int, analysed map[string]int) {
	analysed = map[string]int{}
	for _, q := range oll.Requests() {
		if q.Path != "/api/chat" {
			continue
		}
		switch pipelinetest.KindOf(q.Call) {
		case pipelinetest.Planner:
			planners++
		case pipelinetest.Analyst:
			for _, m := range analysedSource.FindAllStringSubmatch(q.Call.Messages[len(q.Call.Messages)-1].Content, -1) {
				analysed[m[1]]++
			}
		}
	}
	return planners, analysed
}

// checkNothingRepeated fails the test if a planner or an analysis ran twice.
func checkNothingRepeated(t *testing.T, oll *ollamafake.Server) {
	t.Helper()
	planners, analysed := modelCalls(oll)
	if planners != 1 {
		t.Errorf("%d planner calls, want 1", planners)
	}
	for title, n := range analysed {
		if n > 1 {
			t.Errorf("source %q analysed %d times", title, n)
		}
	}
}

// savedAnalyses are the titles of the sources whose analysis a session
// had saved (checkpointed), read through whichever process owns the data.
func savedAnalyses(t *testing.T, data, id string) map[string]bool {
	t.Helper()
	st, err := store.Connect(filepath.Join(data, "researchtui.db"), store.Options{LockTimeout: 100 * time.Millisecond}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	names, err := st.CheckpointNames(id)
	if err != nil {
		t.Fatal(err)
	}
	saved := map[string]bool{}
	for _, n := range names {
		key, ok := strings.CutPrefix(n, "analyse/")
		if !ok {
			continue
		}
		raw, found, err := st.Source(key)
		if err != nil || !found {
			t.Fatalf("the source of checkpoint %s: %v", n, err)
		}
		var rec struct{ Title string }
		json.Unmarshal(raw, &rec)
		saved[rec.Title] = true
	}
	if len(saved) == 0 {
		t.Fatal("no analysis was saved before the kill: the test kills too early")
	}
	return saved
}

// checkResumeRepeatsNothing fails the test if the calls made after the
// first `before` ones planned again or analysed a source whose analysis
// had been saved.
func checkResumeRepeatsNothing(t *testing.T, oll *ollamafake.Server, before int, saved map[string]bool) {
	t.Helper()
	for _, q := range oll.Requests()[before:] {
		if q.Path != "/api/chat" {
			continue
		}
		switch pipelinetest.KindOf(q.Call) {
		case pipelinetest.Planner:
			t.Error("the resume planned again")
		case pipelinetest.Analyst:
			for _, m := range analysedSource.FindAllStringSubmatch(q.Call.Messages[len(q.Call.Messages)-1].Content, -1) {
				if saved[m[1]] {
					t.Errorf("the resume analysed %q again, though its analysis was saved before the kill", m[1])
				}
			}
		}
	}
}

// slowWorld is a fake Ollama slow enough to stop a run part way.
func slowWorld(t *testing.T) (*ollamafake.Server, *cli, string) {
	return fakeWorld(t, ollamafake.Options{TokenDelay: 3 * time.Millisecond, Parallel: 1})
}

// startBackground starts a researchtui command that runs on its own.
func startBackground(t *testing.T, c *cli, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := c.command(args...)
	out := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, out
}

// waitAnalyses waits until n sources have been analysed.
func waitAnalyses(t *testing.T, oll *ollamafake.Server, n int) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, a := modelCalls(oll); len(a) >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run never analysed %d sources", n)
		}
	}
}

// waitSaved waits until the data dir's one session has an analysis
// checkpoint: killing after the model was merely asked can, on a loaded
// machine, come before anything was saved. It keeps one connection to the
// owner and polls it, so the kill follows the checkpoint closely.
func waitSaved(t *testing.T, data string) {
	t.Helper()
	st, err := store.Connect(filepath.Join(data, "researchtui.db"), store.Options{LockTimeout: 100 * time.Millisecond}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		sessions, _ := st.ListSessions()
		if len(sessions) == 0 {
			continue
		}
		names, _ := st.CheckpointNames(sessions[0].ID)
		for _, n := range names {
			if strings.HasPrefix(n, "analyse/") {
				return
			}
		}
	}
	t.Fatal("no analysis was saved in 60 s")
}

// onlySession is the one session in the data dir, read through whichever
// process owns it.
func onlySession(t *testing.T, c *cli) (id, status string) {
	t.Helper()
	stdout, stderr, code, _ := c.run("sessions", "list", "--json")
	if code != 0 {
		t.Fatalf("sessions list: exit %d %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 1 {
		t.Fatalf("want one session, got %q", stdout)
	}
	var s struct{ ID, Status string }
	if err := json.Unmarshal([]byte(lines[0]), &s); err != nil {
		t.Fatal(err)
	}
	return s.ID, s.Status
}

const killQuestion = "How is software testing studied, and how are language models given tools for chemistry?"

// The owner is killed (SIGKILL) in the middle of its run while an MCP
// server is its client; `resume` then finishes the session, repeating no
// finished model call, and the MCP server goes on working (it takes the
// data dir over or follows whoever did).
func TestOwnerKilledMidRunThenResumed(t *testing.T) {
	t.Parallel()
	// The run must still be going once a second process (the MCP server,
	// built with -race) has started beside it: its writer is held until
	// then (on a loaded machine the run once finished first).
	release := make(chan struct{})
	var once sync.Once
	released := func() { once.Do(func() { close(release) }) }
	defer released()
	oll, c, data := fakeWorldHeld(t, ollamafake.Options{TokenDelay: 15 * time.Millisecond, Parallel: 1}, release)
	owner, _ := startBackground(t, c, "run", "--review", "approve", "--sources", "arxiv,openalex", killQuestion)
	waitAnalyses(t, oll, 1) // the owner has the data dir and is running
	mcpClient, mcpCmd, mcpErr := startMCP(t, c)
	defer func() { mcpClient.Close(); mcpCmd.Wait() }()
	if _, text := callText(t, mcpClient, "list_sessions", nil); !strings.Contains(text, "running") {
		t.Fatalf("the MCP server beside the running owner: %s\n%s", text, mcpErr)
	}
	released()
	waitAnalyses(t, oll, 3)
	waitSaved(t, data)
	owner.Process.Signal(syscall.SIGKILL)
	owner.Wait()

	before := len(oll.Requests())
	id, status := onlySession(t, c)
	// On a loaded machine the run may have reached the review gate, which
	// saves the session as awaiting review for the moment the approve
	// policy takes to answer: a kill then leaves it waiting, as it should.
	if status != "interrupted" && status != "awaiting_review" {
		t.Errorf("the killed owner's session is %q, want interrupted (or awaiting_review)", status)
	}
	saved := savedAnalyses(t, data, id)
	stdout, stderr, code, _ := c.run("resume", "--review", "approve", id)
	if code != 0 || !strings.Contains(stdout, "References") {
		t.Fatalf("resume after the owner was killed: exit %d\n%s", code, stderr)
	}
	checkResumeRepeatsNothing(t, oll, before, saved)
	if res, text := callText(t, mcpClient, "get_session", map[string]any{"id": id}); res.IsError || !strings.Contains(text, "completed") {
		t.Errorf("the MCP server after the owner was killed: %s\n%s", text, mcpErr)
	}
}

// A client killed (SIGKILL) mid-run: the owner marks its session
// interrupted at once (not running forever), and `resume` beside the owner
// finishes it without repeating a finished model call.
func TestClientKilledMidRunThenResumedBesideTheOwner(t *testing.T) {
	t.Parallel()
	oll, c, data := slowWorld(t)
	mcpOwner, mcpCmd, mcpErr := startMCP(t, c)
	defer func() { mcpOwner.Close(); mcpCmd.Wait() }()
	if _, text := callText(t, mcpOwner, "list_sessions", nil); strings.Contains(text, "running") {
		t.Fatalf("a fresh data dir lists %s", text)
	}
	runner, _ := startBackground(t, c, "run", "--review", "approve", "--sources", "arxiv,openalex", killQuestion)
	waitAnalyses(t, oll, 3)
	waitSaved(t, data)
	runner.Process.Signal(syscall.SIGKILL)
	runner.Wait()
	before := len(oll.Requests())

	var id, status string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if id, status = onlySession(t, c); status == "interrupted" || time.Now().After(deadline) {
			break
		}
	}
	if status != "interrupted" {
		t.Fatalf("the killed client's session is %q, want interrupted\n%s", status, mcpErr)
	}
	saved := savedAnalyses(t, data, id)
	stdout, stderr, code, _ := c.run("resume", "--review", "approve", id)
	if code != 0 || !strings.Contains(stdout, "References") {
		t.Fatalf("resume beside the owner: exit %d\n%s", code, stderr)
	}
	checkResumeRepeatsNothing(t, oll, before, saved)
}

// The owner exits (normally) while a client's run is under way: the client
// takes the data dir over and its run completes, repeating nothing.
func TestClientTakesOverWhenTheOwnerExitsMidRun(t *testing.T) {
	t.Parallel()
	oll, c, _ := slowWorld(t)
	mcpOwner, mcpCmd, _ := startMCP(t, c)
	if _, text := callText(t, mcpOwner, "list_sessions", nil); text == "" {
		t.Fatal("no answer from the MCP server")
	}
	runner, out := startBackground(t, c, "run", "--review", "approve", "--sources", "arxiv,openalex", killQuestion)
	waitAnalyses(t, oll, 2)
	mcpOwner.Close() // the owner exits
	mcpCmd.Wait()
	done := make(chan error, 1)
	go func() { done <- runner.Wait() }()
	select {
	case err := <-done:
		if err != nil || !strings.Contains(out.String(), "References") {
			t.Fatalf("the client's run after its owner exited: %v\n%s", err, out)
		}
	case <-time.After(120 * time.Second):
		t.Fatalf("the client's run never finished after its owner exited\n%s", out)
	}
	checkNothingRepeated(t, oll)
	if _, status := onlySession(t, c); status != "completed" {
		t.Errorf("session %q after the takeover, want completed", status)
	}
}

// A headless `run --review ask` waits at its prompt; the review is decided
// from another process (as the TUI does): the run carries the decision
// out, stops asking, and finishes.
func TestReviewDecidedInAnotherProcess(t *testing.T) {
	t.Parallel()
	_, c, data := fakeWorld(t, ollamafake.Options{})
	cmd := c.command("run", "--review", "ask", "--sources", "arxiv,openalex", killQuestion)
	stdin, err := cmd.StdinPipe() // open, and nobody answers
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var id string
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var status string
		if id, status = onlySessionIfAny(t, c); status == "awaiting_review" {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the run never waited for a review\n%s", &stderr)
		}
	}
	// A second process cannot run it meanwhile, and says where it runs.
	if _, stderr, code, _ := c.run("resume", id); code != exitUsage || !strings.Contains(stderr, fmt.Sprintf("running in another researchtui (pid %d)", cmd.Process.Pid)) {
		t.Errorf("resume of a session that runs elsewhere: exit %d %s", code, stderr)
	}
	st, err := store.Connect(filepath.Join(data, "researchtui.db"), store.Options{LockTimeout: 100 * time.Millisecond}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := (&pipeline.Engine{Store: st}).DecideElsewhere(id, pipeline.Decision{Approve: true}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil || !strings.Contains(stdout.String(), "This revised report") {
			t.Fatalf("the run after a decision from elsewhere: %v\n%s", err, &stderr)
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("the run kept waiting after the review was decided elsewhere\n%s", &stderr)
	}
	if !strings.Contains(stderr.String(), "decided in another researchtui") {
		t.Errorf("the prompt was not told the review was decided elsewhere:\n%s", &stderr)
	}
}

// onlySessionIfAny is onlySession that allows an empty data dir ("", "").
func onlySessionIfAny(t *testing.T, c *cli) (id, status string) {
	t.Helper()
	stdout, _, code, _ := c.run("sessions", "list", "--json")
	if code != 0 || strings.TrimSpace(stdout) == "" {
		return "", ""
	}
	return onlySession(t, c)
}
