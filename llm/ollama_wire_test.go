package llm

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/researchtui/researchtui/llm/ollamafake"
)

func TestEmbedBatches(t *testing.T) {
	t.Parallel()
	srv := ollamafake.New(ollamafake.Options{})
	defer srv.Close()
	o, _ := NewOllama(srv.URL, OllamaOptions{EmbedBatchSize: 2})
	in := []string{"graph neural networks", "neural networks on graphs", "medieval french poetry", "x", "y z"}
	vecs, u, err := o.Embed(context.Background(), "nomic-embed-text", in)
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != 5 || len(vecs[0]) != 768 {
		t.Fatalf("%d vectors of %d", len(vecs), len(vecs[0]))
	}
	if u.EmbeddingTokens != 3+4+3+1+2 || srv.Served().EmbeddingTokens != u.EmbeddingTokens {
		t.Fatalf("usage %+v served %+v", u, srv.Served())
	}
	dot := func(a, b []float32) (s float32) {
		for i := range a {
			s += a[i] * b[i]
		}
		return
	}
	if dot(vecs[0], vecs[1]) <= dot(vecs[0], vecs[2]) {
		t.Fatal("texts sharing words should be closer")
	}
	n := 0
	for _, r := range srv.Requests() {
		if r.Path == "/api/embed" {
			n++
		}
	}
	if n != 3 {
		t.Fatalf("%d embed requests, want 3 batches", n)
	}
}

func TestShowAndList(t *testing.T) {
	t.Parallel()
	_, o := newFake(t, ollamafake.Options{})
	mi, err := o.Show(context.Background(), "qwen3:8b")
	if err != nil {
		t.Fatal(err)
	}
	if mi.ContextLength != 40960 || mi.Family != "qwen3" || !mi.Has("thinking") || !mi.Has("completion") {
		t.Fatalf("%+v", mi)
	}
	names, err := o.ListModels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(names, ",") != "nomic-embed-text:latest,qwen3:8b" {
		t.Fatalf("names %v", names)
	}
}

// TestChatAgainstRecordedStream replays a real recorded Ollama stream
// (/api/generate, turned into the analogous /api/chat chunks) to the client.
func TestChatAgainstRecordedStream(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file               string
		content, thinkHead string
		prompt, eval       int
	}{
		{"api-generate-stream-granite3.3-2b.ndjson", "Fluffy Burrower.", "", 50, 8},
		{"api-generate-stream-gpt-oss-120b-thinking.ndjson", "", "The user asks", 81, 47},
	} {
		raw, err := os.ReadFile("testdata/ollama/" + tc.file)
		if err != nil {
			t.Fatal(err)
		}
		h := http.NewServeMux()
		h.HandleFunc("POST /api/show", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"details":{"family":"x"},"model_info":{"general.architecture":"x","x.context_length":8192},"capabilities":["completion","thinking"]}`)
		})
		h.HandleFunc("POST /api/chat", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/x-ndjson")
			sc := bufio.NewScanner(strings.NewReader(string(raw)))
			for sc.Scan() {
				var m map[string]any
				if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
					t.Error(err)
					return
				}
				msg := map[string]any{"role": "assistant", "content": m["response"]}
				if th, ok := m["thinking"]; ok {
					msg["thinking"] = th
				}
				delete(m, "response")
				delete(m, "thinking")
				delete(m, "context")
				m["message"] = msg
				b, _ := json.Marshal(m)
				w.Write(append(b, '\n'))
			}
		})
		ts := httptest.NewServer(h)
		o, _ := NewOllama(ts.URL, OllamaOptions{})
		resp, err := o.Chat(context.Background(), ChatRequest{Model: "m", Messages: user("Describe a rabbit in 3 words"), Think: true}, nil)
		ts.Close()
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if tc.content != "" && resp.Content != tc.content {
			t.Errorf("%s: content %q", tc.file, resp.Content)
		}
		if !strings.HasPrefix(resp.Thinking, tc.thinkHead) || strings.Contains(resp.Content, "The user asks") {
			t.Errorf("%s: thinking %q content %q", tc.file, resp.Thinking, resp.Content)
		}
		if resp.Usage.PromptTokens != tc.prompt || resp.Usage.CompletionTokens != tc.eval || resp.DoneReason != "stop" {
			t.Errorf("%s: %+v %q", tc.file, resp.Usage, resp.DoneReason)
		}
	}
}
