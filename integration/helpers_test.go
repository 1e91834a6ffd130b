//go:build integration

package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/researchtui/researchtui/search/sourcefake"
)

// served is the token usage the server reported in its responses.
type served struct {
	Prompt, Completion, Embedding int
	Chats, Embeds                 int
}

// meter is a pass-through proxy to the real server that reads the usage in
// every response (Ollama's NDJSON and /api/embed, and the /v1 SSE and
// embeddings), so a test can compare what the program recorded with what
// the server said.
type meter struct {
	*httptest.Server
	mu  sync.Mutex
	got served
}

func newMeter(t *testing.T, upstream string) *meter {
	t.Helper()
	target, _ := url.Parse(upstream)
	m := &meter{}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, target.String()+r.URL.RequestURI(), bytes.NewReader(body))
		req.Header = r.Header.Clone()
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		var copy bytes.Buffer
		buf := make([]byte, 32<<10)
		for {
			n, err := resp.Body.Read(buf)
			if n > 0 {
				copy.Write(buf[:n])
				w.Write(buf[:n])
				w.(http.Flusher).Flush()
			}
			if err != nil {
				break
			}
		}
		if resp.StatusCode == http.StatusOK {
			m.count(r.URL.Path, copy.Bytes())
		}
	}))
	t.Cleanup(m.Close)
	return m
}

func (m *meter) count(path string, body []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch path {
	case "/api/chat":
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var c struct {
				Done            bool `json:"done"`
				PromptEvalCount int  `json:"prompt_eval_count"`
				EvalCount       int  `json:"eval_count"`
			}
			if json.Unmarshal(sc.Bytes(), &c) == nil && c.Done {
				m.got.Prompt += c.PromptEvalCount
				m.got.Completion += c.EvalCount
				m.got.Chats++
			}
		}
	case "/api/embed":
		var e struct {
			PromptEvalCount int `json:"prompt_eval_count"`
		}
		if json.Unmarshal(body, &e) == nil {
			m.got.Embedding += e.PromptEvalCount
			m.got.Embeds++
		}
	case "/v1/chat/completions":
		for _, line := range strings.Split(string(body), "\n") {
			data, ok := strings.CutPrefix(strings.TrimSpace(line), "data:")
			if !ok {
				continue
			}
			var c struct {
				Usage *struct {
					PromptTokens     int `json:"prompt_tokens"`
					CompletionTokens int `json:"completion_tokens"`
				} `json:"usage"`
			}
			if json.Unmarshal([]byte(strings.TrimSpace(data)), &c) == nil && c.Usage != nil {
				m.got.Prompt += c.Usage.PromptTokens
				m.got.Completion += c.Usage.CompletionTokens
				m.got.Chats++
			}
		}
	case "/v1/embeddings":
		var e struct {
			Usage struct {
				PromptTokens int `json:"prompt_tokens"`
			} `json:"usage"`
		}
		if json.Unmarshal(body, &e) == nil {
			m.got.Embedding += e.Usage.PromptTokens
			m.got.Embeds++
		}
	}
}

func (m *meter) served() served {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.got
}

// cli runs the researchtui binary with a private data dir and config.
type cli struct {
	t    *testing.T
	env  []string
	data string
}

func newCLI(t *testing.T, extraEnv ...string) *cli {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte("full_text = false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	src := sourcefake.New()
	t.Cleanup(src.Close)
	env := []string{
		"HOME=" + dir,
		"PATH=" + os.Getenv("PATH"),
		"RESEARCHTUI_DATA_DIR=" + filepath.Join(dir, "data"),
		"RESEARCHTUI_CONFIG=" + cfg,
		"RESEARCHTUI_ARXIV_URL=" + src.ArxivURL(),
		"RESEARCHTUI_OPENALEX_URL=" + src.OpenAlexURL(),
		"RESEARCHTUI_ALLOW_PRIVATE_FETCH=1",
		"NO_COLOR=1",
	}
	return &cli{t: t, env: append(env, extraEnv...), data: filepath.Join(dir, "data")}
}

// run runs the binary and returns stdout, stderr and the exit code.
func (c *cli) run(args ...string) (string, string, int) {
	c.t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = c.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		c.t.Fatalf("running %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}
