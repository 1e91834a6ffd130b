//go:build integration

package integration

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

type sessionJSON struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Model  string `json:"model"`
	Usage  struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		EmbeddingTokens  int `json:"embedding_tokens"`
	} `json:"usage"`
	Report any `json:"report"`
}

// fullRun runs `researchtui run` to a report with the tiny models and
// returns the session as `sessions show --json` prints it.
func fullRun(t *testing.T, c *cli, extra ...string) sessionJSON {
	t.Helper()
	report := filepath.Join(t.TempDir(), "report.md")
	args := append([]string{"run", "--json", "--depth", "quick", "--sources", "arxiv,openalex",
		"--model", chatModel, "--embed-model", embedModel, "--out", report}, extra...)
	args = append(args, "What is known about retrieval-augmented generation for scientific question answering?")
	t0 := time.Now()
	stdout, stderr, code := c.run(args...)
	t.Logf("run took %s", time.Since(t0).Round(time.Millisecond))
	var id string
	types := map[string]int{}
	var warnings []string
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("run --json printed a non-JSON line %q: %v", sc.Text(), err)
		}
		typ, _ := ev["type"].(string)
		types[typ]++
		if s, ok := ev["session_id"].(string); ok && id == "" {
			id = s
		}
		if typ == "Warning" || typ == "warning" {
			if b, err := json.Marshal(ev); err == nil && len(warnings) < 8 {
				warnings = append(warnings, string(b))
			}
		}
	}
	t.Logf("events: %v", types)
	for _, w := range warnings {
		t.Logf("warning: %.300s", w)
	}
	if code != 0 {
		t.Fatalf("run exited %d\nstderr:\n%s\nlast stdout:\n%s", code, stderr, tail(stdout, 3000))
	}
	b, err := os.ReadFile(report)
	if err != nil || len(strings.TrimSpace(string(b))) == 0 {
		t.Fatalf("no report written: %v", err)
	}
	if id == "" {
		t.Fatal("no session_id in the events")
	}
	out, stderr, code := c.run("sessions", "show", id, "--json")
	if code != 0 {
		t.Fatalf("sessions show exited %d: %s", code, stderr)
	}
	var s sessionJSON
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("sessions show --json: %v\n%s", err, tail(out, 2000))
	}
	if s.Status != "completed" {
		t.Fatalf("session status %q, want completed", s.Status)
	}
	return s
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// TestRunOllamaGibberishModel runs the whole pipeline on the native API
// with a model whose every answer is nonsense: it must degrade, not die,
// and the usage it records must be exactly what the server reported.
func TestRunOllamaGibberishModel(t *testing.T) {
	m := newMeter(t, ollamaURL)
	c := newCLI(t, "OLLAMA_HOST="+m.URL)
	s := fullRun(t, c)
	usageMatchesTheServer(t, m, s)
}

// usageMatchesTheServer: the session counts the tokens the server says it
// served, for chat and embeddings alike.
func usageMatchesTheServer(t *testing.T, m *meter, s sessionJSON) {
	t.Helper()
	got := m.served()
	t.Logf("server reported %+v; session usage %+v", got, s.Usage)
	if got.Chats == 0 || got.Embeds == 0 {
		t.Fatalf("the run made %d chat and %d embed calls", got.Chats, got.Embeds)
	}
	if s.Usage.PromptTokens != got.Prompt || s.Usage.CompletionTokens != got.Completion || s.Usage.EmbeddingTokens != got.Embedding {
		t.Errorf("session usage %+v differs from the server's %+v", s.Usage, got)
	}
}

// TestRunOpenAIBackend runs the whole pipeline with --backend openai
// against the real server's /v1 endpoints.
func TestRunOpenAIBackend(t *testing.T) {
	m := newMeter(t, ollamaURL)
	c := newCLI(t, "RESEARCHTUI_OPENAI_BASE_URL="+m.URL+"/v1", "OLLAMA_HOST=http://127.0.0.1:1")
	s := fullRun(t, c, "--backend", "openai")
	usageMatchesTheServer(t, m, s)
}

// TestRunMissingModelExits3 checks the exit code and message for a model
// the server does not have, on both backends.
func TestRunMissingModelExits3(t *testing.T) {
	c := newCLI(t, "OLLAMA_HOST="+ollamaURL, "RESEARCHTUI_OPENAI_BASE_URL="+ollamaURL+"/v1")
	_, stderr, code := c.run("run", "--model", "no-such-model", "--embed-model", embedModel, "a question about anything")
	if code != 3 || !strings.Contains(stderr, "ollama pull no-such-model") {
		t.Fatalf("ollama: exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = c.run("run", "--backend", "openai", "--model", "no-such-model", "--embed-model", embedModel, "a question about anything")
	if code != 3 || !strings.Contains(stderr, "no-such-model") || !strings.Contains(stderr, "tiny-chat") {
		t.Fatalf("openai: exit %d, stderr %q", code, stderr)
	}
}

// TestRunUnreachableExits3 names the right setting for each backend.
func TestRunUnreachableExits3(t *testing.T) {
	c := newCLI(t, "OLLAMA_HOST=http://127.0.0.1:1", "RESEARCHTUI_OPENAI_BASE_URL=http://127.0.0.1:1/v1")
	_, stderr, code := c.run("run", "--model", chatModel, "--embed-model", embedModel, "q about x")
	if code != 3 || !strings.Contains(stderr, "OLLAMA_HOST") {
		t.Fatalf("ollama: exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = c.run("run", "--backend", "openai", "--model", chatModel, "--embed-model", embedModel, "q about x")
	if code != 3 || !strings.Contains(stderr, "RESEARCHTUI_OPENAI_BASE_URL") {
		t.Fatalf("openai: exit %d, stderr %q", code, stderr)
	}
}

// TestRunWithTwoOllamaHostsOneDown lists a dead host first in OLLAMA_HOST.
func TestRunWithTwoOllamaHostsOneDown(t *testing.T) {
	c := newCLI(t, "OLLAMA_HOST=http://127.0.0.1:1,"+ollamaURL)
	fullRun(t, c)
	out, _, _ := c.run("doctor")
	if !strings.Contains(out, "127.0.0.1:1 is unreachable") {
		t.Errorf("doctor does not report the dead host:\n%s", out)
	}
}

// TestDoctorOpenAI shows what the OpenAI API cannot do.
func TestDoctorOpenAI(t *testing.T) {
	c := newCLI(t, "RESEARCHTUI_OPENAI_BASE_URL="+ollamaURL+"/v1", "RESEARCHTUI_MODEL="+chatModel, "RESEARCHTUI_EMBED_MODEL="+embedModel)
	cfg := filepath.Join(filepath.Dir(c.data), "config.toml")
	os.WriteFile(cfg, []byte("full_text = false\nbackend = \"openai\"\n"), 0o600)
	out, stderr, _ := c.run("doctor")
	for _, want := range []string{"num_ctx", "keep_alive", "temperature", "tiny-chat", "384 dimensions"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s\n%s", want, out, stderr)
		}
	}
}
