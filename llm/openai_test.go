package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeOpenAI is a minimal OpenAI-protocol server: /v1/models,
// /v1/chat/completions (SSE), /v1/embeddings. chat overrides the chat
// handler when set.
type fakeOpenAI struct {
	t       *testing.T
	key     string // required bearer key; "" accepts any
	chat    http.HandlerFunc
	lastReq atomic.Value // map[string]any of the last chat body
	calls   atomic.Int32
}

func (f *fakeOpenAI) start() *httptest.Server {
	mux := http.NewServeMux()
	auth := func(h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if f.key != "" && r.Header.Get("Authorization") != "Bearer "+f.key {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnauthorized)
				io.WriteString(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`)
				return
			}
			h(w, r)
		}
	}
	mux.HandleFunc("GET /v1/models", auth(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[
			{"id":"chat-m","object":"model","created":1,"owned_by":"me","max_model_len":4096},
			{"id":"embed-m","object":"model","created":1,"owned_by":"me"}]}`)
	}))
	mux.HandleFunc("POST /v1/chat/completions", auth(func(w http.ResponseWriter, r *http.Request) {
		f.calls.Add(1)
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		f.lastReq.Store(body)
		if f.chat != nil {
			f.chat(w, r)
			return
		}
		sse(w, []string{"Hello", " world"}, true, "stop", true)
	}))
	mux.HandleFunc("POST /v1/embeddings", auth(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Input []string `json:"input"`
			Model string   `json:"model"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		if body.Model != "embed-m" {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"error":{"message":"model %q not found","type":"invalid_request_error","code":"model_not_found"}}`, body.Model)
			return
		}
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		}
		var data []item
		// Answer in reverse order: the client must sort by index.
		for i := len(body.Input) - 1; i >= 0; i-- {
			data = append(data, item{"embedding", i, []float64{float64(i), 1, 0}})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "model": body.Model, "data": data,
			"usage": map[string]int{"prompt_tokens": 5 * len(body.Input), "total_tokens": 5 * len(body.Input)}})
	}))
	ts := httptest.NewServer(mux)
	f.t.Cleanup(ts.Close)
	return ts
}

// sse writes a chat stream: one chunk per piece, a finish chunk, a usage
// chunk, [DONE]. Any of the last three can be left out.
func sse(w http.ResponseWriter, pieces []string, finish bool, reason string, usage bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	for _, p := range pieces {
		b, _ := json.Marshal(p)
		fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"chat-m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":%s},\"finish_reason\":null}]}\n\n", b)
		fl.Flush()
	}
	if !finish {
		return
	}
	fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"chat-m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":%q}]}\n\n", reason)
	if usage {
		io.WriteString(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"chat-m\",\"choices\":[],\"usage\":{\"prompt_tokens\":17,\"completion_tokens\":2,\"total_tokens\":19}}\n\n")
	}
	io.WriteString(w, "data: [DONE]\n\n")
}

func newTestOpenAI(t *testing.T, url, key string) *OpenAI {
	t.Helper()
	o, err := NewOpenAI(url, OpenAIOptions{APIKey: key, MaxRetries: -1, RequestTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestOpenAIChatStreamsAndReadsUsage(t *testing.T) {
	t.Parallel()
	f := &fakeOpenAI{t: t, key: "sekrit"}
	ts := f.start()
	o := newTestOpenAI(t, ts.URL, "sekrit") // no /v1: added
	if o.Host() != ts.URL+"/v1" {
		t.Fatalf("host %q", o.Host())
	}
	var deltas []string
	temp := 0.0
	resp, err := o.Chat(t.Context(), ChatRequest{
		Model:       "chat-m",
		Messages:    []Message{{Role: "system", Content: "s"}, {Role: "user", Content: "hi"}},
		Schema:      json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`),
		Temperature: &temp, MaxTokens: 300,
	}, func(d Delta) { deltas = append(deltas, d.Content) })
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "Hello world" || strings.Join(deltas, "|") != "Hello| world" {
		t.Fatalf("content %q deltas %q", resp.Content, deltas)
	}
	if resp.Usage.PromptTokens != 17 || resp.Usage.CompletionTokens != 2 || resp.DoneReason != "stop" {
		t.Fatalf("usage %+v reason %q", resp.Usage, resp.DoneReason)
	}
	if resp.NumCtx != 4096 {
		t.Fatalf("NumCtx %d, want the listed max_model_len", resp.NumCtx)
	}
	body := f.lastReq.Load().(map[string]any)
	if body["stream"] != true || body["stream_options"].(map[string]any)["include_usage"] != true {
		t.Fatalf("stream options missing: %v", body)
	}
	rf := body["response_format"].(map[string]any)
	if rf["type"] != "json_schema" || rf["json_schema"].(map[string]any)["schema"].(map[string]any)["type"] != "object" {
		t.Fatalf("response_format %v", rf)
	}
	if body["temperature"] != 0.0 || body["max_tokens"] != 300.0 {
		t.Fatalf("temperature/max_tokens not sent: %v", body)
	}
	for _, k := range []string{"num_ctx", "keep_alive", "options", "think"} {
		if _, ok := body[k]; ok {
			t.Fatalf("Ollama-only field %q sent", k)
		}
	}
}

func TestOpenAIBadKeyNamesTheVariable(t *testing.T) {
	t.Parallel()
	f := &fakeOpenAI{t: t, key: "right"}
	ts := f.start()
	o := newTestOpenAI(t, ts.URL+"/v1", "wrong")
	for name, call := range map[string]func() error{
		"ping": func() error { return o.Ping(t.Context()) },
		"chat": func() error {
			_, err := o.Chat(t.Context(), ChatRequest{Model: "chat-m", Messages: []Message{{Role: "user", Content: "x"}}}, nil)
			return err
		},
	} {
		err := call()
		var ae *AuthError
		if !errors.As(err, &ae) || !IsUnreachable(err) {
			t.Fatalf("%s: want *AuthError (exit 3), got %T %v", name, err, err)
		}
		if !strings.Contains(err.Error(), "OPENAI_API_KEY") || !strings.Contains(err.Error(), "401") {
			t.Fatalf("%s: message does not name OPENAI_API_KEY: %v", name, err)
		}
	}
}

func TestOpenAIRateLimitCarriesRetryAfter(t *testing.T) {
	t.Parallel()
	f := &fakeOpenAI{t: t}
	f.chat = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "7")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`)
	}
	o := newTestOpenAI(t, f.start().URL, "")
	_, err := o.Chat(t.Context(), ChatRequest{Model: "chat-m", Messages: []Message{{Role: "user", Content: "x"}}}, nil)
	var rl *RateLimitError
	if !errors.As(err, &rl) || rl.RetryAfter != 7*time.Second {
		t.Fatalf("want *RateLimitError with 7s, got %T %v", err, err)
	}
	if IsUnreachable(err) || !strings.Contains(err.Error(), "429") || !strings.Contains(err.Error(), "7s") {
		t.Fatalf("message: %v", err)
	}
}

func TestOpenAIRetriesHonourRetryAfter(t *testing.T) {
	t.Parallel()
	f := &fakeOpenAI{t: t}
	var n atomic.Int32
	f.chat = func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			w.Header().Set("Retry-After", "0.05")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"error":{"message":"slow down"}}`)
			return
		}
		sse(w, []string{"ok"}, true, "stop", true)
	}
	ts := f.start()
	o, err := NewOpenAI(ts.URL, OpenAIOptions{MaxRetries: 2})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := o.Chat(t.Context(), ChatRequest{Model: "chat-m", Messages: []Message{{Role: "user", Content: "x"}}}, nil)
	if err != nil || resp.Content != "ok" || n.Load() != 2 {
		t.Fatalf("resp %+v err %v calls %d", resp, err, n.Load())
	}
}

func TestOpenAIServerErrorAndCutStream(t *testing.T) {
	t.Parallel()
	f := &fakeOpenAI{t: t}
	mode := "500"
	f.chat = func(w http.ResponseWriter, r *http.Request) {
		switch mode {
		case "500":
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"error":{"message":"CUDA out of memory"}}`)
		case "cut":
			sse(w, []string{"par", "tial"}, false, "", false)
			// Return without finish_reason or [DONE]: the connection ends.
		}
	}
	o := newTestOpenAI(t, f.start().URL, "")
	req := ChatRequest{Model: "chat-m", Messages: []Message{{Role: "user", Content: "x"}}}
	_, err := o.Chat(t.Context(), req, nil)
	if err == nil || IsUnreachable(err) || !strings.Contains(err.Error(), "500") || !strings.Contains(err.Error(), "CUDA out of memory") {
		t.Fatalf("500: %v", err)
	}
	mode = "cut"
	resp, err := o.Chat(t.Context(), req, nil)
	if !errors.Is(err, io.ErrUnexpectedEOF) || resp.Content != "partial" {
		t.Fatalf("cut stream: resp %q err %v", resp.Content, err)
	}
}

func TestOpenAIUnreachableNamesBaseURLVariable(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	o := newTestOpenAI(t, "http://"+addr+"/v1", "")
	for name, call := range map[string]func() error{
		"ping": func() error { return o.Ping(t.Context()) },
		"chat": func() error {
			_, err := o.Chat(t.Context(), ChatRequest{Model: "m", Messages: []Message{{Role: "user", Content: "x"}}}, nil)
			return err
		},
		"embed": func() error { _, _, err := o.Embed(t.Context(), "m", []string{"x"}); return err },
	} {
		err := call()
		var ue *UnreachableError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "RESEARCHTUI_OPENAI_BASE_URL") || strings.Contains(err.Error(), "OLLAMA_HOST") {
			t.Fatalf("%s: %T %v", name, err, err)
		}
	}
}

func TestOpenAIModelMissingAndListing(t *testing.T) {
	t.Parallel()
	f := &fakeOpenAI{t: t}
	o := newTestOpenAI(t, f.start().URL, "")
	ids, err := o.ListModels(t.Context())
	if err != nil || strings.Join(ids, ",") != "chat-m,embed-m" {
		t.Fatalf("ids %v err %v", ids, err)
	}
	_, err = o.Chat(t.Context(), ChatRequest{Model: "nope", Messages: []Message{{Role: "user", Content: "x"}}}, nil)
	if !IsModelMissing(err) || !strings.Contains(err.Error(), "chat-m") || strings.Contains(err.Error(), "ollama pull") {
		t.Fatalf("missing model: %v", err)
	}
	if f.calls.Load() != 0 {
		t.Fatal("a chat call was sent for a model the server does not list")
	}
	_, _, err = o.Embed(t.Context(), "other", []string{"x"})
	if !IsModelMissing(err) {
		t.Fatalf("embed 404: %T %v", err, err)
	}
}

func TestOpenAIEmbedBatchesInOrder(t *testing.T) {
	t.Parallel()
	f := &fakeOpenAI{t: t}
	ts := f.start()
	o, _ := NewOpenAI(ts.URL, OpenAIOptions{EmbedBatchSize: 2, MaxRetries: -1})
	vecs, u, err := o.Embed(t.Context(), "embed-m", []string{"a", "b", "c"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != 3 || vecs[0][0] != 0 || vecs[1][0] != 1 || vecs[2][0] != 0 || len(vecs[2]) != 3 {
		t.Fatalf("vectors %v", vecs)
	}
	if u.EmbeddingTokens != 15 {
		t.Fatalf("embedding tokens %d", u.EmbeddingTokens)
	}
}

func TestOpenAIReasoningKeptApartAndUsageEstimated(t *testing.T) {
	t.Parallel()
	f := &fakeOpenAI{t: t}
	f.chat = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"hmm\"}}]}\n\n")
		io.WriteString(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"{}\"},\"finish_reason\":\"stop\"}]}\n\n")
		io.WriteString(w, "data: [DONE]\n\n")
	}
	o := newTestOpenAI(t, f.start().URL, "")
	resp, err := o.Chat(context.Background(), ChatRequest{Model: "chat-m", Messages: []Message{{Role: "user", Content: "x"}}}, nil)
	if err != nil || resp.Content != "{}" || resp.Thinking != "hmm" {
		t.Fatalf("resp %+v err %v", resp, err)
	}
	if resp.Usage.PromptTokens == 0 || resp.Usage.CompletionTokens == 0 || !strings.Contains(resp.Warning, "estimates") {
		t.Fatalf("usage not estimated: %+v %q", resp.Usage, resp.Warning)
	}
}

func TestParseOpenAIBaseURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"http://localhost:8000":        "http://localhost:8000/v1/",
		"localhost:1234/v1":            "http://localhost:1234/v1/",
		"https://openrouter.ai/api/v1": "https://openrouter.ai/api/v1/",
	} {
		got, err := ParseOpenAIBaseURL(in)
		if err != nil || got != want {
			t.Errorf("%q: got %q %v, want %q", in, got, err, want)
		}
	}
	if _, err := ParseOpenAIBaseURL(""); err == nil || !strings.Contains(err.Error(), OpenAIBaseURLEnv) {
		t.Errorf("empty: %v", err)
	}
}
