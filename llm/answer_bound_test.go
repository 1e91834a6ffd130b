package llm

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"
)

// endless is a hostile model server: its answers never end. After the
// first piece it either streams text forever (flood) or says nothing more
// while holding the connection open (hang). It speaks Ollama's wire
// protocol (/api/show, /api/chat as NDJSON) and the OpenAI-compatible one
// (/v1/models, /v1/chat/completions as SSE).
func endless(t *testing.T, hang bool) *httptest.Server {
	t.Helper()
	piece := strings.Repeat("all work and no play ", 200)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/show":
			io.WriteString(w, `{"capabilities":["completion"],"model_info":{"general.architecture":"qwen3","qwen3.context_length":8192}}`)
			return
		case "/v1/models":
			io.WriteString(w, `{"object":"list","data":[{"id":"m","object":"model"}]}`)
			return
		}
		sse := strings.HasPrefix(r.URL.Path, "/v1/")
		if sse {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/x-ndjson")
		}
		for i := 0; ; i++ {
			var err error
			if sse {
				_, err = fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", piece)
			} else {
				_, err = fmt.Fprintf(w, "{\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":%q},\"done\":false}\n", piece)
			}
			w.(http.Flusher).Flush()
			if err != nil {
				return
			}
			if hang && i == 0 {
				<-r.Context().Done()
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestAnEndlessAnswerIsCut: an answer that never ends (a flood of text,
// or words and then silence) ends with ErrAnswerBound, on both backends,
// long before the call's own time limit, and the text it kept is within
// the limit: memory stays small (a run reached 4.6 GB in a minute before).
func TestAnEndlessAnswerIsCut(t *testing.T) {
	for _, backend := range []string{"ollama", "openai"} {
		for _, hang := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/hang=%v", backend, hang), func(t *testing.T) {
				srv := endless(t, hang)
				var b Backend
				var err error
				if backend == "ollama" {
					b, err = NewOllama(srv.URL, OllamaOptions{RequestTimeout: time.Minute, StallTimeout: 300 * time.Millisecond})
				} else {
					b, err = NewOpenAI(srv.URL, OpenAIOptions{MaxRetries: -1, RequestTimeout: time.Minute, StallTimeout: 300 * time.Millisecond})
				}
				if err != nil {
					t.Fatal(err)
				}
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				delivered := 0
				resp, err := b.Chat(t.Context(), ChatRequest{Model: "m", Messages: user("write forever")},
					func(d Delta) { delivered += len(d.Content) })
				runtime.ReadMemStats(&after)
				if !errors.Is(err, ErrAnswerBound) {
					t.Fatalf("an endless answer ended with %v; want ErrAnswerBound", err)
				}
				if errors.Is(err, ErrTimeout) {
					t.Fatalf("the call ran to its time limit: %v", err)
				}
				limit := answerLimit(0, 0) // the OpenAI-compatible path knows no context here
				if backend == "ollama" {
					limit = answerLimit(0, 8192)
				}
				if len(resp.Content) > limit || delivered > limit+8192 {
					t.Errorf("kept %d bytes and delivered %d; the limit is %d", len(resp.Content), delivered, limit)
				}
				if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
					t.Errorf("the call allocated %d MB", grew>>20)
				}
				t.Logf("%v", err)
			})
		}
	}
}

// TestAnswerLimit: the limit follows num_predict, else the context, within
// fixed bounds.
func TestAnswerLimit(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ maxTokens, numCtx, want int }{
		{100, 8192, minAnswerBytes},
		{8192, 32768, 8192 * answerSlack},
		{0, 32768, 32768 * answerSlack},
		{0, 0, fallbackAnswerTokens * answerSlack},
		{0, 1 << 30, maxAnswerBytes},
	} {
		if got := answerLimit(c.maxTokens, c.numCtx); got != c.want {
			t.Errorf("answerLimit(%d, %d) = %d, want %d", c.maxTokens, c.numCtx, got, c.want)
		}
	}
}
