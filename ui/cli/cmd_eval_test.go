package cli

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	script := &pipelinetest.Script{RevisionRounds: 1}
	oll := ollamafake.New(ollamafake.Options{Responder: script.Responder()})
	defer oll.Close()
	c := newCLI(t, oll.URL, nil)
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
	for _, want := range []string{"question 1 of 2: turing-test", "question 2 of 2: turing-complete", "left", eval.Judge} {
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
	script := &pipelinetest.Script{RevisionRounds: 1}
	oll := ollamafake.New(ollamafake.Options{Responder: script.Responder()})
	defer oll.Close()
	c := newCLI(t, oll.URL, nil)
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
