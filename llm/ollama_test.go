package llm

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/researchtui/researchtui/llm/ollamafake"
)

func newFake(t *testing.T, opt ollamafake.Options) (*ollamafake.Server, *Ollama) {
	t.Helper()
	srv := ollamafake.New(opt)
	t.Cleanup(srv.Close)
	o, err := NewOllama(srv.URL, OllamaOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return srv, o
}

// lastChatBody decodes the body of the last /api/chat request.
func lastChatBody(t *testing.T, srv *ollamafake.Server) map[string]any {
	t.Helper()
	reqs := srv.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if reqs[i].Path == "/api/chat" {
			var m map[string]any
			if err := json.Unmarshal(reqs[i].Body, &m); err != nil {
				t.Fatal(err)
			}
			return m
		}
	}
	t.Fatal("no chat request logged")
	return nil
}

func user(s string) []Message { return []Message{{Role: "user", Content: s}} }

func TestChatStreamsDeltasAndUsage(t *testing.T) {
	t.Parallel()
	srv, o := newFake(t, ollamafake.Options{Responder: ollamafake.Fixed("Hello brave new world.")})
	var deltas []Delta
	resp, err := o.Chat(context.Background(), ChatRequest{Model: "qwen3:8b", Messages: user("say hello")},
		func(d Delta) { deltas = append(deltas, d) })
	if err != nil {
		t.Fatal(err)
	}
	if len(deltas) != 4 {
		t.Fatalf("got %d deltas, want one per word: %+v", len(deltas), deltas)
	}
	var joined strings.Builder
	for _, d := range deltas {
		joined.WriteString(d.Content)
	}
	if joined.String() != "Hello brave new world." || resp.Content != joined.String() {
		t.Fatalf("content %q, deltas %q", resp.Content, joined.String())
	}
	if resp.Usage.PromptTokens != len("say hello")/4+1 || resp.Usage.CompletionTokens != 4 {
		t.Fatalf("usage %+v", resp.Usage)
	}
	if resp.Usage.EvalDuration <= 0 || resp.Usage.TotalDuration <= 0 || resp.Usage.TokensPerSecond() <= 0 {
		t.Fatalf("durations missing: %+v", resp.Usage)
	}
	if resp.DoneReason != "stop" || resp.Truncated || resp.NumCtx != 4096 {
		t.Fatalf("resp %+v", resp)
	}
	got := srv.Served()
	if got.PromptTokens != resp.Usage.PromptTokens || got.CompletionTokens != 4 {
		t.Fatalf("served %+v, usage %+v", got, resp.Usage)
	}
}

func TestChatThinkingKeptApart(t *testing.T) {
	t.Parallel()
	srv, o := newFake(t, ollamafake.Options{Responder: func(c ollamafake.ChatCall) ollamafake.Reply {
		return ollamafake.Reply{Thinking: "The user wants JSON. {\"not\": \"this\"}", Content: `{"a": 1}`}
	}})
	var order []string
	resp, err := o.Chat(context.Background(), ChatRequest{Model: "qwen3:8b", Messages: user("x"), Think: true},
		func(d Delta) {
			if d.Thinking != "" && d.Content != "" {
				t.Errorf("delta mixes thinking and content: %+v", d)
			}
			if d.Thinking != "" {
				order = append(order, "t")
			} else {
				order = append(order, "c")
			}
		})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != `{"a": 1}` || !strings.HasPrefix(resp.Thinking, "The user wants JSON.") {
		t.Fatalf("content %q thinking %q", resp.Content, resp.Thinking)
	}
	if s := strings.Join(order, ""); !strings.HasPrefix(s, "tttt") || strings.Contains(strings.TrimLeft(s, "t"), "t") {
		t.Fatalf("thinking should stream first: %s", s)
	}
	if body := lastChatBody(t, srv); body["think"] != true {
		t.Fatalf("think not sent: %v", body["think"])
	}

	// Not asked: a thinking model is told not to think.
	resp, err = o.Chat(context.Background(), ChatRequest{Model: "qwen3:8b", Messages: user("x")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if body := lastChatBody(t, srv); body["think"] != false || resp.Thinking != "" {
		t.Fatalf("think %v, thinking %q", body["think"], resp.Thinking)
	}
}

func TestChatThinkNotSentToNonThinkingModel(t *testing.T) {
	t.Parallel()
	srv, o := newFake(t, ollamafake.Options{Models: map[string]ollamafake.Model{
		"llama3.2": {ContextLength: 131072, Capabilities: []string{"completion"}, Family: "llama"},
	}})
	if _, err := o.Chat(context.Background(), ChatRequest{Model: "llama3.2", Messages: user("x"), Think: true}, nil); err != nil {
		t.Fatal(err) // the fake answers 400 "does not support thinking" if think:true is sent
	}
	if _, ok := lastChatBody(t, srv)["think"]; ok {
		t.Fatal("think sent to a model without the thinking capability")
	}
}

func TestNumCtxSizedFromShow(t *testing.T) {
	t.Parallel()
	srv, o := newFake(t, ollamafake.Options{Models: map[string]ollamafake.Model{
		"big:8b":   {ContextLength: 40960, Capabilities: []string{"completion"}, Family: "qwen3"},
		"small:1b": {ContextLength: 8192, Capabilities: []string{"completion"}, Family: "llama"},
	}})
	cases := []struct {
		model string
		chars int
		want  int
	}{
		{"big:8b", 100, 4096},     // 34+8+2048 → the 4096 floor
		{"small:1b", 3000, 4096},  // 1000+8+2048 → 3072 → floor
		{"big:8b", 21504, 10240},  // 7168+8+2048 = 9224 → 10 * 1024
		{"big:8b", 30000, 12288},  // 10000+8+2048 = 12056 → 12 * 1024
		{"small:1b", 20000, 8192}, // 6667+8+2048 = 8723 → cut to the model's 8192
		{"big:8b", 200000, 40960}, // cut to fit, never above the model's 40960
	}
	for _, c := range cases {
		resp, err := o.Chat(context.Background(), ChatRequest{Model: c.model, Messages: user(strings.Repeat("a", c.chars))}, nil)
		if err != nil {
			t.Fatal(err)
		}
		opts := lastChatBody(t, srv)["options"].(map[string]any)
		if got := int(opts["num_ctx"].(float64)); got != c.want || resp.NumCtx != c.want {
			t.Errorf("%s with %d chars: num_ctx sent %d, resp %d, want %d", c.model, c.chars, got, resp.NumCtx, c.want)
		}
	}
	// /api/show is asked once per model.
	shows := 0
	for _, r := range srv.Requests() {
		if r.Path == "/api/show" {
			shows++
		}
	}
	if shows != 2 {
		t.Fatalf("%d /api/show calls, want 2 (cached)", shows)
	}
}

func TestTruncationWarning(t *testing.T) {
	t.Parallel()
	srv, o := newFake(t, ollamafake.Options{Models: map[string]ollamafake.Model{
		"small:1b": {ContextLength: 8192, Capabilities: []string{"completion"}, Family: "llama"},
	}})
	long := "HEAD " + strings.Repeat("lorem ipsum ", 6000) + " TAIL"
	resp, err := o.Chat(context.Background(), ChatRequest{Model: "small:1b", Messages: []Message{
		{Role: "system", Content: "Be brief."},
		{Role: "user", Content: long},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Truncated || !strings.Contains(resp.Warning, "cut") || !strings.Contains(resp.Warning, "8192") {
		t.Fatalf("truncated %v, warning %q", resp.Truncated, resp.Warning)
	}
	sent := srv.ChatCalls()[0].Messages[1].Content
	if len(sent) >= len(long) || !strings.Contains(sent, "[…truncated…]") ||
		!strings.HasPrefix(sent, "HEAD ") || !strings.HasSuffix(sent, " TAIL") {
		t.Fatalf("sent %d chars (of %d), head/tail/marker missing", len(sent), len(long))
	}
}

func TestNearFullContextWarns(t *testing.T) {
	t.Parallel()
	_, o := newFake(t, ollamafake.Options{Responder: func(c ollamafake.ChatCall) ollamafake.Reply {
		return ollamafake.Reply{Content: "ok", PromptTokens: 3950} // of num_ctx 4096: 96%
	}})
	resp, err := o.Chat(context.Background(), ChatRequest{Model: "qwen3:8b", Messages: user("hi")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Truncated || !strings.Contains(resp.Warning, "3950 of 4096") {
		t.Fatalf("truncated %v warning %q", resp.Truncated, resp.Warning)
	}
}

func TestContextTooSmall(t *testing.T) {
	t.Parallel()
	_, o := newFake(t, ollamafake.Options{Models: map[string]ollamafake.Model{
		"tiny": {ContextLength: 2048, Capabilities: []string{"completion"}, Family: "llama"},
	}})
	_, err := o.Chat(context.Background(), ChatRequest{Model: "tiny", Messages: []Message{
		{Role: "system", Content: strings.Repeat("rules ", 3000)},
		{Role: "user", Content: "short"},
	}}, nil)
	var cts *ContextTooSmallError
	if !errors.As(err, &cts) || cts.Have != 2048 {
		t.Fatalf("err %v", err)
	}
}

func TestOptionsSentVerbatim(t *testing.T) {
	t.Parallel()
	srv, o := newFake(t, ollamafake.Options{})
	zero, seed := 0.0, 42
	_, err := o.Chat(context.Background(), ChatRequest{Model: "qwen3:8b", Messages: user("x"),
		Temperature: &zero, Seed: &seed, MaxTokens: 300}, nil)
	if err != nil {
		t.Fatal(err)
	}
	opts := lastChatBody(t, srv)["options"].(map[string]any)
	if v, ok := opts["temperature"]; !ok || v != 0.0 {
		t.Fatalf("temperature 0 not sent: %v", opts)
	}
	if opts["seed"] != 42.0 || opts["num_predict"] != 300.0 || opts["num_ctx"] != 4096.0 {
		t.Fatalf("options %v", opts)
	}
	// Without a temperature, none is sent.
	if _, err := o.Chat(context.Background(), ChatRequest{Model: "qwen3:8b", Messages: user("x")}, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := lastChatBody(t, srv)["options"].(map[string]any)["temperature"]; ok {
		t.Fatal("temperature sent though unset")
	}
}

func TestFormat(t *testing.T) {
	t.Parallel()
	srv, o := newFake(t, ollamafake.Options{})
	if _, err := o.Chat(context.Background(), ChatRequest{Model: "qwen3:8b", Messages: user("x"), JSONMode: true}, nil); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if body := string(reqs[len(reqs)-1].Body); !strings.Contains(body, `"format":"json"`) {
		t.Fatalf("body %s", body)
	}
	schema := json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}`)
	if _, err := o.Chat(context.Background(), ChatRequest{Model: "qwen3:8b", Messages: user("x"), Schema: schema}, nil); err != nil {
		t.Fatal(err)
	}
	if got := srv.ChatCalls()[1].Format; string(got) != string(schema) {
		t.Fatalf("format %s", got)
	}
	if _, ok := lastChatBody(t, srv)["format"].(map[string]any); !ok {
		t.Fatal("schema not sent as an object")
	}
}

func TestModelMissing(t *testing.T) {
	t.Parallel()
	_, o := newFake(t, ollamafake.Options{})
	_, err := o.Chat(context.Background(), ChatRequest{Model: "nope:1b", Messages: user("x")}, nil)
	if !IsModelMissing(err) || !strings.Contains(err.Error(), "ollama pull nope:1b") {
		t.Fatalf("chat: %v", err)
	}
	_, _, err = o.Embed(context.Background(), "nope-embed", []string{"x"})
	if !IsModelMissing(err) || !strings.Contains(err.Error(), "ollama pull nope-embed") {
		t.Fatalf("embed: %v", err)
	}
	if _, err := o.Show(context.Background(), "nope:1b"); !IsModelMissing(err) {
		t.Fatalf("show: %v", err)
	}
	// ":latest" is optional, as with Ollama.
	if _, err := o.Show(context.Background(), "nomic-embed-text:latest"); err != nil {
		t.Fatal(err)
	}
}

func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestUnreachable(t *testing.T) {
	t.Parallel()
	addr := closedAddr(t)
	o, err := NewOllama(addr, OllamaOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if o.Host() != "http://"+addr {
		t.Fatalf("host %s", o.Host())
	}
	_, err = o.Chat(context.Background(), ChatRequest{Model: "qwen3:8b", Messages: user("x")}, nil)
	if !IsUnreachable(err) || !strings.Contains(err.Error(), "OLLAMA_HOST") || !strings.Contains(err.Error(), addr) {
		t.Fatalf("chat: %v", err)
	}
	if err := o.Ping(context.Background()); !IsUnreachable(err) {
		t.Fatalf("ping: %v", err)
	}
	if _, _, err := o.Embed(context.Background(), "nomic-embed-text", []string{"x"}); !IsUnreachable(err) {
		t.Fatalf("embed: %v", err)
	}
	if _, err := o.ListModels(context.Background()); !IsUnreachable(err) {
		t.Fatalf("list: %v", err)
	}
}

func TestPingAndHostFromEnv(t *testing.T) {
	srv := ollamafake.New(ollamafake.Options{})
	defer srv.Close()
	t.Setenv("OLLAMA_HOST", strings.TrimPrefix(srv.URL, "http://"))
	o, err := NewOllama("", OllamaOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if o.Host() != srv.URL {
		t.Fatalf("host %s, want %s", o.Host(), srv.URL)
	}
	if err := o.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	if v, err := o.Version(context.Background()); err != nil || v == "" {
		t.Fatalf("version %q %v", v, err)
	}
}

func TestParseHost(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                           "http://127.0.0.1:11434",
		"localhost":                  "http://localhost:11434",
		"10.0.0.5:8080":              "http://10.0.0.5:8080",
		"0.0.0.0":                    "http://0.0.0.0:11434",
		"http://gpu-box":             "http://gpu-box:80",
		"https://ollama.example.org": "https://ollama.example.org:443",
		"http://[::1]:11434":         "http://[::1]:11434",
		"https://host:8443/ollama":   "https://host:8443/ollama",
	} {
		u, err := ParseHost(in)
		if err != nil || u.String() != want {
			t.Errorf("ParseHost(%q) = %v, %v; want %s", in, u, err, want)
		}
	}
	if _, err := ParseHost("ftp://x"); err == nil {
		t.Error("ftp accepted")
	}
}

func TestDroppedStreamIsUnexpectedEOF(t *testing.T) {
	t.Parallel()
	_, o := newFake(t, ollamafake.Options{Responder: func(ollamafake.ChatCall) ollamafake.Reply {
		return ollamafake.Reply{Content: "one two three four five", DropAfter: 2}
	}})
	var got string
	resp, err := o.Chat(context.Background(), ChatRequest{Model: "qwen3:8b", Messages: user("x")},
		func(d Delta) { got += d.Content })
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("err %v", err)
	}
	if got != "one two" || resp.Content != "one two" {
		t.Fatalf("partial %q / %q", got, resp.Content)
	}
}

func TestServerErrorStatus(t *testing.T) {
	t.Parallel()
	_, o := newFake(t, ollamafake.Options{Responder: func(ollamafake.ChatCall) ollamafake.Reply {
		return ollamafake.Reply{Status: 500, Error: "llama runner process has terminated"}
	}})
	_, err := o.Chat(context.Background(), ChatRequest{Model: "qwen3:8b", Messages: user("x")}, nil)
	if err == nil || IsUnreachable(err) || IsModelMissing(err) || !strings.Contains(err.Error(), "runner process") {
		t.Fatalf("err %v", err)
	}
}

func TestRequestTimeout(t *testing.T) {
	t.Parallel()
	srv := ollamafake.New(ollamafake.Options{TokenDelay: 300 * time.Millisecond})
	defer srv.Close()
	o, _ := NewOllama(srv.URL, OllamaOptions{RequestTimeout: 100 * time.Millisecond})
	_, err := o.Chat(context.Background(), ChatRequest{Model: "qwen3:8b", Messages: user("x")}, nil)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := o.Chat(ctx, ChatRequest{Model: "qwen3:8b", Messages: user("x")}, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}
