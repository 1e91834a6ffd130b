//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/store/vector"
)

func ollama(t *testing.T, opt llm.OllamaOptions) *llm.Ollama {
	t.Helper()
	o, err := llm.NewOllama(ollamaURL, opt)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func openAI(t *testing.T) *llm.OpenAI {
	t.Helper()
	o, err := llm.NewOpenAI(ollamaURL+"/v1", llm.OpenAIOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func user(s string) []llm.Message { return []llm.Message{{Role: "user", Content: s}} }

// Both backends, for the tests that apply to each.
func backends(t *testing.T) map[string]llm.Backend {
	return map[string]llm.Backend{"ollama": ollama(t, llm.OllamaOptions{}), "openai": openAI(t)}
}

func TestDiscoveryAndCapabilities(t *testing.T) {
	ctx := t.Context()
	o := ollama(t, llm.OllamaOptions{})
	if err := o.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	names, err := o.ListModels(ctx)
	if err != nil || !slices.Contains(names, "tiny-chat:latest") || !slices.Contains(names, "tiny-embed:latest") {
		t.Fatalf("models %v err %v", names, err)
	}
	chat, err := o.Show(ctx, chatModel)
	if err != nil {
		t.Fatal(err)
	}
	if chat.ContextLength != 32768 || !chat.Has("completion") || chat.Has("thinking") || chat.Has("embedding") {
		t.Fatalf("tiny-chat: %+v", chat)
	}
	emb, err := o.Show(ctx, embedModel)
	if err != nil || emb.ContextLength != 2048 || !emb.Has("embedding") || emb.Has("completion") {
		t.Fatalf("tiny-embed: %+v %v", emb, err)
	}

	// The real server refuses think:true for this model; the backend asks
	// for thinking only from models that have it, so Think:true is safe.
	resp, err := http.Post(ollamaURL+"/api/chat", "application/json",
		strings.NewReader(`{"model":"tiny-chat","think":true,"stream":false,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("raw think:true gave %d, want the server's 400", resp.StatusCode)
	}
	r, err := o.Chat(ctx, llm.ChatRequest{Model: chatModel, Messages: user("hi"), Think: true}, nil)
	if err != nil || r.Thinking != "" || strings.TrimSpace(r.Content) == "" {
		t.Fatalf("Think:true on a non-thinking model: %+v %v", r, err)
	}

	// OpenAI-compatible listing of the same server.
	oa := openAI(t)
	ids, err := oa.ListModels(ctx)
	if err != nil || !slices.Contains(ids, "tiny-chat:latest") {
		t.Fatalf("/v1/models: %v %v", ids, err)
	}
	if _, err := oa.Show(ctx, chatModel); err != nil {
		t.Fatalf("/v1 show tiny-chat: %v", err)
	}
}

func TestStreamedChatUsage(t *testing.T) {
	for name, b := range backends(t) {
		t.Run(name, func(t *testing.T) {
			var streamed strings.Builder
			n := 0
			seed := 7
			r, err := b.Chat(t.Context(), llm.ChatRequest{Model: chatModel, Messages: user("Say something."), Seed: &seed},
				func(d llm.Delta) { n++; streamed.WriteString(d.Content) })
			if err != nil {
				t.Fatal(err)
			}
			if n < 2 || streamed.String() != r.Content || strings.TrimSpace(r.Content) == "" {
				t.Fatalf("%d deltas %q vs content %q", n, streamed.String(), r.Content)
			}
			if r.Usage.PromptTokens <= 0 || r.Usage.CompletionTokens <= 0 || r.DoneReason == "" {
				t.Fatalf("usage %+v reason %q", r.Usage, r.DoneReason)
			}
			if name == "ollama" && (r.Usage.EvalDuration <= 0 || r.NumCtx < 4096) {
				t.Fatalf("durations/num_ctx missing: %+v numctx %d", r.Usage, r.NumCtx)
			}
			// num_predict / max_tokens caps the answer.
			r, err = b.Chat(t.Context(), llm.ChatRequest{Model: chatModel, Messages: user("Talk at length."), MaxTokens: 3}, nil)
			if err != nil || r.Usage.CompletionTokens > 3 {
				t.Fatalf("MaxTokens 3: %+v %v", r.Usage, err)
			}
		})
	}
}

type finding struct {
	Title  string   `json:"title"`
	Tags   []string `json:"tags"`
	Score  float64  `json:"score"`
	Nested struct {
		Kind string `json:"kind"`
		N    int    `json:"n"`
		OK   bool   `json:"ok"`
	} `json:"nested"`
}

const findingSchema = `{"type":"object","properties":{
 "title":{"type":"string"},
 "tags":{"type":"array","items":{"type":"string"},"maxItems":3},
 "score":{"type":"number"},
 "nested":{"type":"object","properties":{"kind":{"type":"string","enum":["a","b"]},"n":{"type":"integer"},"ok":{"type":"boolean"}},"required":["kind","n","ok"]}},
 "required":["title","tags","score","nested"]}`

// TestStructuredOutputRealGrammar sends a JSON schema; the real server
// constrains sampling to it, so every raw answer must be valid JSON of the
// schema's shape, on both APIs, also with several calls at once. Through
// llm.Structured the typed result is always usable. (The grammar admits
// numbers such as 1e3599 that overflow float64: Go's decoder rejects them,
// and Structured then retries; seen in ~7% of answers at temperature 1.2.)
func TestStructuredOutputRealGrammar(t *testing.T) {
	for name, b := range backends(t) {
		t.Run(name, func(t *testing.T) {
			var wg sync.WaitGroup
			var mu sync.Mutex
			retries, fallbacks := 0, 0
			for i := range 6 {
				wg.Go(func() {
					temp := []float64{0, 0.7, 1.0, 1.2}[i%4]
					req := llm.ChatRequest{Model: chatModel, Messages: user(fmt.Sprintf("Describe finding %d as JSON.", i)),
						Schema: json.RawMessage(findingSchema), Temperature: &temp, MaxTokens: 400}
					r, err := b.Chat(t.Context(), req, nil)
					if err != nil {
						t.Error(err)
						return
					}
					dec := json.NewDecoder(strings.NewReader(r.Content))
					dec.UseNumber()
					var raw map[string]any
					if err := dec.Decode(&raw); err != nil {
						t.Errorf("call %d: not JSON: %v: %q", i, err, r.Content)
						return
					}
					nested, _ := raw["nested"].(map[string]any)
					tags, _ := raw["tags"].([]any)
					if _, ok := raw["title"].(string); !ok || nested == nil || len(tags) > 3 || (nested["kind"] != "a" && nested["kind"] != "b") {
						t.Errorf("call %d: does not follow the schema: %q", i, r.Content)
					}
					v, info, err := llm.Structured(t.Context(), b, req, func(f *finding) error {
						if f.Nested.Kind != "a" && f.Nested.Kind != "b" {
							return fmt.Errorf("kind %q", f.Nested.Kind)
						}
						return nil
					}, func() finding {
						return finding{Title: "fallback", Nested: struct {
							Kind string `json:"kind"`
							N    int    `json:"n"`
							OK   bool   `json:"ok"`
						}{Kind: "a"}}
					}, nil)
					if err != nil || (v.Nested.Kind != "a" && v.Nested.Kind != "b") || info.Usage.CompletionTokens <= 0 {
						t.Errorf("call %d: Structured %+v %+v %v", i, v, info, err)
					}
					mu.Lock()
					retries += info.Attempts - 1
					if info.Fallback {
						fallbacks++
					}
					mu.Unlock()
				})
			}
			wg.Wait()
			t.Logf("Structured: %d retries, %d fallbacks over 6 calls", retries, fallbacks)
		})
	}
}

// TestEmbeddingsBatchedAndStored embeds in several batches, checks the
// 384-d vectors, and stores them beside another model's 768-d vectors
// without the two ever meeting in an index.
func TestEmbeddingsBatchedAndStored(t *testing.T) {
	inputs := make([]string, 37)
	for i := range inputs {
		inputs[i] = fmt.Sprintf("chunk number %d about topic %c", i, 'a'+i%26)
	}
	var first [][]float32
	for name, b := range map[string]llm.Backend{
		"ollama": ollama(t, llm.OllamaOptions{EmbedBatchSize: 8}),
		"openai": func() llm.Backend {
			o, _ := llm.NewOpenAI(ollamaURL, llm.OpenAIOptions{EmbedBatchSize: 8})
			return o
		}(),
	} {
		vecs, u, err := b.Embed(t.Context(), embedModel, inputs)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(vecs) != len(inputs) || u.EmbeddingTokens <= 0 {
			t.Fatalf("%s: %d vectors, usage %+v", name, len(vecs), u)
		}
		for i, v := range vecs {
			var sum float64
			for _, x := range v {
				sum += float64(x) * float64(x)
			}
			if len(v) != 384 || math.Abs(sum-1) > 1e-3 {
				t.Fatalf("%s: vector %d has %d dims, norm² %f", name, i, len(v), sum)
			}
		}
		if first == nil {
			first = vecs
		} else {
			// Same server, same model, both APIs: same vectors, same order.
			for i := range vecs {
				if d := cosine(vecs[i], first[i]); d < 0.999 {
					t.Fatalf("input %d: the two APIs disagree (cos %f)", i, d)
				}
			}
		}
	}

	st, err := store.Open(filepath.Join(t.TempDir(), "db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	items := map[string][]float32{}
	for i, v := range first {
		items[fmt.Sprintf("h%02d", i)] = v
	}
	if err := st.PutEmbeddings(embedModel, items); err != nil {
		t.Fatal(err)
	}
	other := make([]float32, 768)
	other[0] = 1
	if err := st.PutEmbeddings("nomic-embed-text", map[string][]float32{"h00": other}); err != nil {
		t.Fatal(err)
	}
	got, ok, err := st.Embedding(embedModel, "h00")
	if err != nil || !ok || len(got) != 384 {
		t.Fatalf("stored 384-d vector: %d dims %v %v", len(got), ok, err)
	}
	idx := vector.New(384, vector.Options{})
	for h, v := range items {
		if err := idx.Add(h, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := idx.Add("intruder", other); err == nil {
		t.Fatal("a 768-d vector was added to the 384-d index")
	}
	hits, err := idx.Search(first[5], 3)
	if err != nil || len(hits) != 3 || hits[0].ID != "h05" {
		t.Fatalf("search: %+v %v", hits, err)
	}
}

func cosine(a, b []float32) float64 {
	var d float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
	}
	return d
}

// TestNumCtxChanges sizes num_ctx from the prompt: a long prompt gets a
// bigger window, the real server reloads the runner and /api/ps says so.
func TestNumCtxChanges(t *testing.T) {
	o := ollama(t, llm.OllamaOptions{})
	ctx := t.Context()
	short, err := o.Chat(ctx, llm.ChatRequest{Model: chatModel, Messages: user("short"), MaxTokens: 8}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := psContext(t); got != short.NumCtx {
		t.Fatalf("/api/ps context %d, backend said %d", got, short.NumCtx)
	}
	// Room for a long answer: num_ctx grows past the 4096 floor and the
	// real server reloads the runner.
	t0 := time.Now()
	big, err := o.Chat(ctx, llm.ChatRequest{Model: chatModel, Messages: user(strings.Repeat("evidence ", 100)), MaxTokens: 6000}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("num_ctx %d -> %d (reload took %s)", short.NumCtx, big.NumCtx, time.Since(t0).Round(time.Millisecond))
	if big.NumCtx <= short.NumCtx || big.NumCtx > 32768 || big.Truncated {
		t.Fatalf("num_ctx %d -> %d truncated %v", short.NumCtx, big.NumCtx, big.Truncated)
	}
	if got := psContext(t); got != big.NumCtx {
		t.Fatalf("/api/ps context %d, want %d", got, big.NumCtx)
	}
	// A prompt the size estimate underrates (this byte-level tokenizer
	// makes ~1 token per byte; the estimate assumes 3.5 bytes): the server
	// cuts it, and the backend reports that instead of staying silent.
	cut, err := o.Chat(ctx, llm.ChatRequest{Model: chatModel, Messages: user(strings.Repeat("evidence ", 500)), MaxTokens: 8}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("4500-byte prompt: num_ctx %d, server counted %d prompt tokens, warning %q", cut.NumCtx, cut.Usage.PromptTokens, cut.Warning)
	if !cut.Truncated || !strings.Contains(cut.Warning, "context tokens") {
		t.Fatalf("truncation not reported: %+v", cut)
	}
}

func psContext(t *testing.T) int {
	t.Helper()
	resp, err := http.Get(ollamaURL + "/api/ps")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ps struct {
		Models []struct {
			Name          string `json:"name"`
			ContextLength int    `json:"context_length"`
		} `json:"models"`
	}
	json.NewDecoder(resp.Body).Decode(&ps)
	for _, m := range ps.Models {
		if strings.HasPrefix(m.Name, chatModel) {
			return m.ContextLength
		}
	}
	t.Fatalf("tiny-chat not loaded: %+v", ps)
	return 0
}

func TestMissingModelAndWrongKind(t *testing.T) {
	ctx := t.Context()
	for name, b := range backends(t) {
		_, err := b.Show(ctx, "no-such-model")
		if !llm.IsModelMissing(err) {
			t.Fatalf("%s show: %T %v", name, err, err)
		}
		_, err = b.Chat(ctx, llm.ChatRequest{Model: "no-such-model", Messages: user("x")}, nil)
		if !llm.IsModelMissing(err) {
			t.Fatalf("%s chat: %T %v", name, err, err)
		}
		_, _, err = b.Embed(ctx, "no-such-model", []string{"x"})
		if !llm.IsModelMissing(err) && name == "ollama" {
			t.Fatalf("%s embed: %T %v", name, err, err)
		}
		// Chat with the embedding model: a plain error (400), not exit 3.
		_, err = b.Chat(ctx, llm.ChatRequest{Model: embedModel, Messages: user("x")}, nil)
		if err == nil || llm.IsUnreachable(err) || llm.IsModelMissing(err) || !strings.Contains(err.Error(), "does not support") {
			t.Fatalf("%s chat with the embedding model: %v", name, err)
		}
	}
	var mm *llm.ModelMissingError
	_, err := ollama(t, llm.OllamaOptions{}).Show(ctx, "no-such-model")
	if !errors.As(err, &mm) || !strings.Contains(err.Error(), "ollama pull no-such-model") {
		t.Fatalf("message: %v", err)
	}
}

// TestPoolOverRealServer: one real host and one dead one.
func TestPoolOverRealServer(t *testing.T) {
	b, err := llm.NewOllamaHosts("http://127.0.0.1:1,"+ollamaURL, llm.OllamaOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	for range 3 {
		if _, err := b.Chat(ctx, llm.ChatRequest{Model: chatModel, Messages: user("hi"), MaxTokens: 8}, nil); err != nil {
			t.Fatal(err)
		}
	}
	st := b.(*llm.Pool).Status()
	if st[0].Up || !st[1].Up || st[1].Served < 3 {
		t.Fatalf("status %+v", st)
	}
}
