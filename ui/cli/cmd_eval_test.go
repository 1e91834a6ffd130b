package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/researchtui/researchtui/llm/ollamafake"
	"github.com/researchtui/researchtui/pipeline/eval"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
)

// TestEvalJSON: `researchtui eval --json` against the fake model server
// serves its own world (every API in newCLI's env points at 127.0.0.1:1,
// so a search that left the process would fail), runs both questions in
// order on a fresh store, and prints one parsable result; the person's data
// dir is never made.
func TestEvalJSON(t *testing.T) {
	t.Parallel()
	script := &pipelinetest.Script{RevisionRounds: 1}
	c, oll := modelCLI(t, ollamafake.Options{Responder: script.Responder()})
	stdout, stderr, code, _ := c.run("eval", "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var sum eval.Summary
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	if sum.Judge != eval.Judge || sum.Model != pipelinetest.Model || sum.Backend != "ollama" || len(sum.Results) != 2 ||
		sum.Results[0].Question != "turing-test" || sum.Results[1].Question != "turing-complete" || sum.Overall.Runs != 2 {
		t.Fatalf("summary %+v", sum)
	}
	for _, r := range sum.Results {
		// The scripted planner plans its own topics, not these questions';
		// what it cites is still the recorded pool, scored.
		if r.Error != "" || r.Cited == 0 || r.Recall < 0 || r.Recall > 1 || r.Precision < 0 || r.Precision > 1 || r.CitedSentences == 0 || r.GeneratedTokens == 0 || r.ModelCalls == 0 {
			t.Errorf("result %+v", r)
		}
	}
	for _, want := range []string{"[░░░░░░░░░░░░] question 1 of 2: turing-test", "[██████░░░░░░] question 2 of 2: turing-complete", "left", eval.Judge} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	// Every chat call carries the seed (--seed 42 by default).
	calls := oll.ChatCalls()
	for _, call := range calls {
		if seed, ok := call.Options["seed"].(float64); !ok || seed != 42 {
			t.Fatalf("chat call %d without seed 42: %v", call.N, call.Options)
		}
	}
	if sum.Seed != 42 || len(calls) == 0 {
		t.Errorf("seed %d, %d calls", sum.Seed, len(calls))
	}
	if _, err := os.Stat(filepath.Join(c.dir, "data")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the eval made or touched the person's data dir: %v", err)
	}
}

func TestEvalTableAndUsage(t *testing.T) {
	t.Parallel()
	script := &pipelinetest.Script{RevisionRounds: 1}
	c, _ := modelCLI(t, ollamafake.Options{Responder: script.Responder()})
	stdout, stderr, code, _ := c.run("eval", "--questions", "turing-complete")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if os.Getenv("EVAL_LOG") != "" {
		t.Logf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	for _, want := range []string{"turing-complete", "overall", "recall", eval.Judge} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "turing-test") {
		t.Errorf("asked for one question, got:\n%s", stdout)
	}
	if _, stderr, code, _ := c.run("eval", "--questions", "nope"); code != exitUsage || !strings.Contains(stderr, "turing") {
		t.Errorf("unknown set: exit %d %s", code, stderr)
	}
}

// TestEvalCompare: --compare A,B runs the eval with each model (the model
// server sees both), prints both summaries as JSON, and side by side as a
// table; a bad --compare is a usage error.
func TestEvalCompare(t *testing.T) {
	t.Parallel()
	script := &pipelinetest.Script{RevisionRounds: 1}
	models := ollamafake.DefaultModels()
	models["qwen3:4b"] = models["qwen3:8b"]
	c, oll := modelCLI(t, ollamafake.Options{Responder: script.Responder(), Models: models})
	stdout, stderr, code, _ := c.run("eval", "--json", "--questions", "turing-test", "--compare", "qwen3:8b,qwen3:4b")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var out struct {
		Compare []eval.Summary `json:"compare"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil || len(out.Compare) != 2 || out.Compare[0].Model != "qwen3:8b" || out.Compare[1].Model != "qwen3:4b" ||
		out.Compare[0].Overall.Runs != 1 || out.Compare[1].Overall.Runs != 1 {
		t.Fatalf("compare JSON: %v\n%.600s", err, stdout)
	}
	used := map[string]bool{}
	for _, call := range oll.ChatCalls() {
		used[call.Model] = true
	}
	if !used["qwen3:8b"] || !used["qwen3:4b"] {
		t.Errorf("the model server saw %v", used)
	}
	stdout, _, code, _ = c.run("eval", "--questions", "turing-test", "--compare", "qwen3:8b,qwen3:4b")
	if code != 0 || !strings.Contains(stdout, "compare: A qwen3:8b, B qwen3:4b") || !strings.Contains(stdout, "B - A") {
		t.Errorf("compare table: exit %d\n%s", code, stdout)
	}
	for _, bad := range [][]string{{"eval", "--compare", "qwen3:8b"}, {"eval", "--compare", "a,b,c"}, {"eval", "--compare", "qwen3:8b,qwen3:4b", "--model", "qwen3:8b"}} {
		if _, stderr, code, _ := c.run(bad...); code != 2 {
			t.Errorf("%q: exit %d, want 2 (%s)", bad, code, stderr)
		}
	}
}

// TestEvalJudgeAndBackendFlags: --judge names a second model the eval
// checks before it starts and the summary names; it may never be the
// model under test, nor a model that cannot chat (nor may --model); the
// same model twice is no comparison; --backend picks the backend and
// refuses an unknown one.
func TestEvalJudgeAndBackendFlags(t *testing.T) {
	t.Parallel()
	script := &pipelinetest.Script{RevisionRounds: 1}
	models := ollamafake.DefaultModels()
	models["judge:7b"] = models["qwen3:8b"]
	c, oll := modelCLI(t, ollamafake.Options{Responder: script.Responder(), Models: models})
	stdout, stderr, code, _ := c.run("eval", "--json", "--questions", "turing-complete", "--judge", "judge:7b", "--backend", "ollama")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var sum eval.Summary
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil || !strings.Contains(sum.Judge, "judge:7b") || sum.Backend != "ollama" || !strings.Contains(stderr, "judge:7b") {
		t.Errorf("summary %+v %v\nstderr %s", sum, err, stderr)
	}
	for _, bad := range [][]string{
		{"eval", "--judge", pipelinetest.Model},                           // the model under test
		{"eval", "--judge", "QWEN3:8b"},                                   // the same, spelt otherwise
		{"eval", "--judge", pipelinetest.EmbedModel},                      // cannot chat
		{"eval", "--model", pipelinetest.EmbedModel},                      // cannot chat
		{"eval", "--compare", "qwen3:8b,qwen3:8b"},                        // one model twice
		{"eval", "--compare", "qwen3:8b,judge:7b", "--judge", "judge:7b"}, // one of those compared
		{"eval", "--backend", "llamafile"},
	} {
		if _, stderr, code, _ := c.run(bad...); code != exitUsage {
			t.Errorf("%q: exit %d, want %d (%s)", bad, code, exitUsage, stderr)
		}
	}
	if _, stderr, code, _ := c.run("eval", "--judge", "absent:1b"); code == 0 || !strings.Contains(stderr, "absent:1b") {
		t.Errorf("a judge model the server lacks: exit %d %s", code, stderr)
	}
	// --compare checks B (and the judge) before A's eval runs: nothing is
	// asked of the model when B cannot chat or is missing.
	before := len(oll.ChatCalls())
	for _, bad := range [][]string{
		{"eval", "--compare", "qwen3:8b," + pipelinetest.EmbedModel},
		{"eval", "--compare", "qwen3:8b,absent:1b"},
		{"eval", "--compare", "qwen3:8b,judge:7b", "--judge", "absent:1b"},
	} {
		if _, stderr, code, _ := c.run(bad...); code == 0 || len(oll.ChatCalls()) != before {
			t.Errorf("%q: exit %d after %d chat calls (%s)", bad, code, len(oll.ChatCalls())-before, stderr)
		}
	}
}

// TestEvalInterruptedPrintsWhatFinished: Ctrl-C during the second run
// exits 130 and still prints the first run's row (a trial lost a finished
// hour of runs to one keypress).
func TestEvalInterruptedPrintsWhatFinished(t *testing.T) {
	t.Parallel()
	script := &pipelinetest.Script{RevisionRounds: 1}
	c, _ := modelCLI(t, ollamafake.Options{Responder: script.Responder(), TokenDelay: 5 * time.Millisecond})
	cmd := c.command("eval", "--questions", "turing-complete,turing-test")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var said strings.Builder
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		said.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "question 2 of 2") {
			_ = cmd.Process.Signal(os.Interrupt)
			break
		}
	}
	copied := make(chan struct{})
	go func() { _, _ = io.Copy(&said, stderr); close(copied) }()
	<-copied // the pipe closes when the child exits
	err = cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	out := stdout.String()
	if code != exitCancelled || !strings.Contains(out, "turing-complete") || strings.Contains(out, "turing-test ") {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", code, out, said.String())
	}
}
