package ollamafake

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
)

func post(t *testing.T, url, body string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func lines(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("bad line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

func keys(m map[string]any) []string {
	var k []string
	for key := range m {
		k = append(k, key)
	}
	slices.Sort(k)
	return k
}

// TestChatWireFormatMatchesRecording compares the fake's /api/chat stream
// with a real recorded /api/generate stream: same top-level keys (with
// message in place of response), same final-chunk fields.
func TestChatWireFormatMatchesRecording(t *testing.T) {
	raw, err := os.ReadFile("../testdata/ollama/api-generate-stream-granite3.3-2b.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	rec := lines(t, raw)
	s := New(Options{Responder: Fixed("Fluffy Burrower.")})
	defer s.Close()
	resp, body := post(t, s.URL+"/api/chat", `{"model":"qwen3:8b","messages":[{"role":"user","content":"Describe a rabbit in 3 words"}],"think":false}`)
	if ct := resp.Header.Get("Content-Type"); ct != "application/x-ndjson" {
		t.Fatalf("content type %q", ct)
	}
	got := lines(t, body)
	if len(got) != 3 {
		t.Fatalf("%d lines", len(got))
	}
	swap := func(k []string) string {
		for i, x := range k {
			if x == "response" {
				k[i] = "message"
			}
		}
		slices.Sort(k)
		return strings.Join(k, ",")
	}
	if g, w := strings.Join(keys(got[0]), ","), swap(keys(rec[0])); g != w {
		t.Errorf("chunk keys %s, recorded %s", g, w)
	}
	last, recLast := got[len(got)-1], rec[len(rec)-1]
	for _, k := range []string{"done", "done_reason", "prompt_eval_count", "prompt_eval_duration", "eval_count", "eval_duration", "total_duration", "created_at", "model"} {
		if _, ok := recLast[k]; !ok {
			t.Fatalf("recording lacks %s", k)
		}
		if _, ok := last[k]; !ok {
			t.Errorf("final chunk lacks %s: %v", k, last)
		}
	}
	if last["done"] != true || last["done_reason"] != "stop" || last["eval_count"] != 2.0 {
		t.Errorf("final %v", last)
	}
	msg := got[0]["message"].(map[string]any)
	if msg["role"] != "assistant" || msg["content"] != "Fluffy" {
		t.Errorf("first chunk %v", msg)
	}
}

func TestChatNonStreamAndThinking(t *testing.T) {
	s := New(Options{Responder: func(c ChatCall) Reply {
		return Reply{Thinking: "hmm ok", Content: "yes", PromptTokens: 7}
	}})
	defer s.Close()
	_, body := post(t, s.URL+"/api/chat", `{"model":"qwen3:8b","messages":[{"role":"user","content":"q"}],"stream":false}`)
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	msg := m["message"].(map[string]any)
	// think unset on a thinking model: Ollama thinks by default.
	if msg["content"] != "yes" || msg["thinking"] != "hmm ok" || m["done"] != true || m["prompt_eval_count"] != 7.0 || m["eval_count"] != 3.0 {
		t.Fatalf("%s", body)
	}
	if c := s.ChatCalls()[0]; !c.Think || c.Stream || c.N != 1 {
		t.Fatalf("call %+v", c)
	}
}

func TestErrorsLikeOllama(t *testing.T) {
	s := New(Options{Models: map[string]Model{
		"llama3.2": {ContextLength: 131072, Capabilities: []string{"completion"}, Family: "llama"},
	}})
	defer s.Close()
	resp, body := post(t, s.URL+"/api/chat", `{"model":"x","messages":[]}`)
	if resp.StatusCode != 404 || strings.TrimSpace(string(body)) != `{"error":"model 'x' not found"}` {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	resp, body = post(t, s.URL+"/api/chat", `{"model":"llama3.2","messages":[],"think":true}`)
	if resp.StatusCode != 400 || strings.TrimSpace(string(body)) != `{"error":"\"llama3.2\" does not support thinking"}` {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	resp, _ = post(t, s.URL+"/api/show", `{"model":"llama3.2:latest"}`)
	if resp.StatusCode != 200 {
		t.Fatalf("show :latest: %d", resp.StatusCode)
	}
	resp, _ = post(t, s.URL+"/api/embed", `{"model":"nope","input":"x"}`)
	if resp.StatusCode != 404 {
		t.Fatalf("embed missing: %d", resp.StatusCode)
	}
	r, err := http.Head(s.URL + "/")
	if err != nil || r.StatusCode != 200 {
		t.Fatalf("HEAD /: %v %v", r, err)
	}
	r.Body.Close()
}

func TestStatusAndDropNotCounted(t *testing.T) {
	s := New(Options{Responder: Sequence(
		Reply{Status: 503, Error: "busy"},
		Reply{Content: "a b c", DropAfter: 1},
		Reply{Content: "a b c"},
	)})
	defer s.Close()
	for range 3 {
		resp, err := http.Post(s.URL+"/api/chat", "application/json", strings.NewReader(`{"model":"qwen3:8b","messages":[{"role":"user","content":"12345678"}]}`))
		if err == nil {
			io.ReadAll(resp.Body)
			resp.Body.Close()
		}
	}
	if got := s.Served(); got != (Totals{PromptTokens: 3, CompletionTokens: 3}) {
		t.Fatalf("served %+v", got)
	}
	if n := len(s.ChatCalls()); n != 3 {
		t.Fatalf("%d calls logged", n)
	}
}

func TestEmbedAndConcurrency(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			body := `{"model":"nomic-embed-text","input":["alpha beta","gamma"]}`
			if i%2 == 0 {
				body = `{"model":"nomic-embed-text:latest","input":"alpha beta"}`
			}
			resp, err := http.Post(s.URL+"/api/embed", "application/json", strings.NewReader(body))
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			var r struct {
				Embeddings      [][]float32 `json:"embeddings"`
				PromptEvalCount int         `json:"prompt_eval_count"`
			}
			json.NewDecoder(resp.Body).Decode(&r)
			if len(r.Embeddings) == 0 || len(r.Embeddings[0]) != 768 {
				t.Errorf("embeddings %d", len(r.Embeddings))
			}
		})
	}
	wg.Wait()
	if got := s.Served().EmbeddingTokens; got != 4*2+4*3 {
		t.Fatalf("embedding tokens %d", got)
	}
	if a, b := Vector("Alpha, beta!", 64), Vector("alpha beta", 64); !slices.Equal(a, b) {
		t.Fatal("vectors should ignore case and punctuation")
	}
}
