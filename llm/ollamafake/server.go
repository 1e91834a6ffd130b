// Package ollamafake is an in-process fake Ollama server for tests. It speaks
// the real wire protocol (NDJSON streaming /api/chat, /api/embed, /api/show,
// /api/tags, /api/version, HEAD /) with deterministic answers, token counts
// and embeddings, and records every request.
package ollamafake

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ollama/ollama/api"
)

// Model describes one installed model.
type Model struct {
	ContextLength int
	Capabilities  []string // completion, embedding, thinking, ...
	EmbedDim      int      // vector size for /api/embed; 0: cannot embed
	Family        string   // details.family and the model_info key prefix
}

// Options configures a Server.
type Options struct {
	// Models maps installed names to models; nil installs DefaultModels().
	// Names without a tag also answer to ":latest" and the other way round.
	Models map[string]Model
	// Responder answers chat calls; nil uses Echo.
	Responder Responder
	// TokenDelay is slept before each streamed chunk, to simulate generation.
	TokenDelay time.Duration
	// FirstTokenDelay is slept once before the first chunk of a streamed
	// answer: prompt processing (~300 ms for an 8B model on a consumer GPU).
	FirstTokenDelay time.Duration
	// PrefillRate, when set, adds prompt processing at that many tokens a
	// second after FirstTokenDelay (an 8B model on a consumer GPU: ~1,500).
	// Like Ollama's runner, the server keeps the last prompt it processed
	// and does not charge again for the prefix a new prompt shares with it
	// (one cache for the server: exact when Parallel is 1).
	PrefillRate float64
	// TokensByChars counts a streamed chunk as its characters / 4 tokens
	// (at least 1), roughly as a BPE tokenizer does, instead of one token
	// per chunk (word): compact JSON then costs what it costs a real model.
	// TokenDelay is slept per token.
	TokensByChars bool
	// Parallel is how many chat answers are generated at once, like
	// OLLAMA_NUM_PARALLEL: further requests wait in a queue. 0 is unbounded.
	Parallel int
	// EmbedDelay is slept per embedding request.
	EmbedDelay time.Duration
	// Pullable are models /api/pull can install (they then answer like
	// installed ones); pulling any other name fails as Ollama's does.
	Pullable map[string]Model
}

// ChatCall is one /api/chat request as the Responder sees it.
type ChatCall struct {
	N        int // 1-based index of this chat call on the server
	Model    string
	Messages []api.Message
	Format   json.RawMessage
	Options  map[string]any
	Think    bool // effective: true when asked, or unset on a thinking model
	Stream   bool
}

// Reply is what the fake model answers.
type Reply struct {
	Content  string
	Thinking string // sent in message.thinking (before content) when Think
	// PromptTokens and CompletionTokens are reported as prompt_eval_count
	// and eval_count; 0 computes them: prompt = total message chars/4 + 1,
	// completion = number of streamed chunks.
	PromptTokens     int
	CompletionTokens int
	// Status, when non-zero, answers with that HTTP status and
	// {"error": Error} instead.
	Status int
	Error  string
	// DropAfter > 0 aborts the connection after that many chunks, with no
	// done chunk.
	DropAfter int
}

// Responder decides the answer to a chat call. It may be called from
// several goroutines at once.
type Responder func(call ChatCall) Reply

// Logged is one request the server received.
type Logged struct {
	Path  string
	Model string
	Body  []byte
	Time  time.Time
	Call  ChatCall // for /api/chat
}

// Totals are the token counts the server reported in completed responses.
type Totals struct {
	PromptTokens     int
	CompletionTokens int
	EmbeddingTokens  int
}

// Server is a running fake.
type Server struct {
	URL string

	opt Options
	ts  *httptest.Server

	slots chan struct{} // generation slots when Parallel > 0

	mu sync.Mutex
	// lastPrompt is the prompt text last processed (PrefillRate's cache);
	// prefilled and cachedPrompt count the prompt tokens processed and
	// served from that cache.
	lastPrompt              string
	prefilled, cachedPrompt int
	prefillByCall           map[int]int // chat call N → prompt tokens processed
	chats                   int
	log                     []Logged
	totals                  Totals
	busy                    busyMeter
}

// DefaultModels are installed when Options.Models is nil.
func DefaultModels() map[string]Model {
	return map[string]Model{
		"qwen3:8b":         {ContextLength: 40960, Capabilities: []string{"completion", "tools", "thinking"}, Family: "qwen3"},
		"nomic-embed-text": {ContextLength: 2048, Capabilities: []string{"embedding"}, EmbedDim: 768, Family: "nomic-bert"},
	}
}

// New starts a fake server; Close it when done.
func New(opt Options) *Server {
	if opt.Models == nil {
		opt.Models = DefaultModels()
	}
	opt.Models = maps.Clone(opt.Models) // pulls add to it
	if opt.Responder == nil {
		opt.Responder = Echo
	}
	s := &Server{opt: opt}
	if opt.Parallel > 0 {
		s.slots = make(chan struct{}, opt.Parallel)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/chat", s.chat)
	mux.HandleFunc("POST /api/embed", s.embed)
	mux.HandleFunc("POST /api/show", s.show)
	mux.HandleFunc("GET /api/tags", s.tags)
	mux.HandleFunc("POST /api/pull", s.pull)
	mux.HandleFunc("GET /api/version", func(w http.ResponseWriter, r *http.Request) {
		s.record(r, "", nil, nil)
		writeJSON(w, http.StatusOK, map[string]string{"version": "0.17.4"})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
			http.NotFound(w, r)
			return
		}
		s.record(r, "", nil, nil)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if r.Method == http.MethodGet {
			io.WriteString(w, "Ollama is running")
		}
	})
	s.ts = httptest.NewServer(mux)
	s.URL = s.ts.URL
	return s
}

// Close shuts the server down.
func (s *Server) Close() { s.ts.Close() }

// Requests returns a copy of the request log, oldest first.
func (s *Server) Requests() []Logged {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// Served returns the token counts reported in completed responses.
func (s *Server) Served() Totals {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.totals
}

// Prefill reports the prompt tokens processed and those served from the
// prompt cache (PrefillRate only).
func (s *Server) Prefill() (processed, cached int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.prefilled, s.cachedPrompt
}

// PrefillOf reports the prompt tokens chat call n (ChatCall.N) processed,
// less the prefix the cache held (PrefillRate only), so a benchmark can say
// which agent's prompts cost the time.
func (s *Server) PrefillOf(n int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.prefillByCall[n]
}

// ChatCalls returns the logged chat calls, oldest first.
func (s *Server) ChatCalls() []ChatCall {
	var out []ChatCall
	for _, l := range s.Requests() {
		if l.Path == "/api/chat" {
			out = append(out, l.Call)
		}
	}
	return out
}

func (s *Server) record(r *http.Request, model string, body []byte, call *ChatCall) {
	l := Logged{Path: r.URL.Path, Model: model, Body: body, Time: time.Now()}
	if call != nil {
		l.Call = *call
	}
	s.mu.Lock()
	s.log = append(s.log, l)
	s.mu.Unlock()
}

func (s *Server) add(t Totals) {
	s.mu.Lock()
	s.totals.PromptTokens += t.PromptTokens
	s.totals.CompletionTokens += t.CompletionTokens
	s.totals.EmbeddingTokens += t.EmbeddingTokens
	s.mu.Unlock()
}

// lookup finds a model, accepting names with or without ":latest".
func (s *Server) lookup(name string) (Model, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.opt.Models[name]; ok {
		return m, true
	}
	alt := name + ":latest"
	if base, ok := strings.CutSuffix(name, ":latest"); ok {
		alt = base
	}
	m, ok := s.opt.Models[alt]
	return m, ok
}

// modelNamed is the model a show or pull request names: its model field,
// else the deprecated name field older clients send.
func modelNamed(model, name string) string {
	if model != "" {
		return model
	}
	return name
}

func (s *Server) show(w http.ResponseWriter, r *http.Request) {
	var req api.ShowRequest
	body, ok := readBody(w, r, &req)
	if !ok {
		return
	}
	name := modelNamed(req.Model, req.Name) //nolint:staticcheck // older clients still send the deprecated Name, as Ollama accepts
	s.record(r, name, body, nil)
	m, found := s.lookup(name)
	if !found {
		notFound(w, name)
		return
	}
	resp := map[string]any{
		"modelfile":  "# fake\nFROM " + name,
		"parameters": "",
		"template":   "{{ .Prompt }}",
		"details": api.ModelDetails{
			Format: "gguf", Family: m.Family, Families: []string{m.Family},
			ParameterSize: "8B", QuantizationLevel: "Q4_K_M",
		},
		"model_info": map[string]any{
			"general.architecture":             m.Family,
			m.Family + ".context_length":       m.ContextLength,
			m.Family + ".embedding_length":     max(m.EmbedDim, 4096),
			"general.parameter_count":          8190735360,
			"tokenizer.ggml.model":             "gpt2",
			"general.basename":                 strings.Split(name, ":")[0],
			m.Family + ".attention.head_count": 32,
		},
		"capabilities": m.Capabilities,
		"modified_at":  time.Date(2025, 8, 1, 12, 0, 0, 0, time.UTC),
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) tags(w http.ResponseWriter, r *http.Request) {
	s.record(r, "", nil, nil)
	s.mu.Lock()
	models := maps.Clone(s.opt.Models)
	s.mu.Unlock()
	names := make([]string, 0, len(models))
	for n := range models {
		names = append(names, n)
	}
	slices.Sort(names)
	var resp api.ListResponse
	for _, n := range names {
		full := n
		if !strings.Contains(n, ":") {
			full += ":latest"
		}
		m := models[n]
		resp.Models = append(resp.Models, api.ListModelResponse{
			Name: full, Model: full, Size: 5_000_000_000,
			Digest:     fmt.Sprintf("%064x", len(full)),
			ModifiedAt: time.Date(2025, 8, 1, 12, 0, 0, 0, time.UTC),
			Details:    api.ModelDetails{Format: "gguf", Family: m.Family, Families: []string{m.Family}},
		})
	}
	if resp.Models == nil {
		resp.Models = []api.ListModelResponse{}
	}
	writeJSON(w, http.StatusOK, resp)
}

// readBody reads and decodes a JSON body, answering 400 like Ollama on error.
func readBody(w http.ResponseWriter, r *http.Request, v any) ([]byte, bool) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return nil, false
	}
	if len(body) == 0 {
		writeError(w, http.StatusBadRequest, "missing request body")
		return nil, false
	}
	if err := json.Unmarshal(body, v); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return body, false
	}
	return body, true
}

func notFound(w http.ResponseWriter, model string) {
	writeError(w, http.StatusNotFound, fmt.Sprintf("model '%s' not found", model))
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// pull streams Ollama's pull progress for a Pullable model and installs it.
func (s *Server) pull(w http.ResponseWriter, r *http.Request) {
	var req api.PullRequest
	body, ok := readBody(w, r, &req)
	if !ok {
		return
	}
	name := modelNamed(req.Model, req.Name) //nolint:staticcheck // older clients still send the deprecated Name, as Ollama accepts
	s.record(r, name, body, nil)
	m, found := s.opt.Pullable[name]
	if !found {
		writeError(w, http.StatusInternalServerError, "pull model manifest: file does not exist")
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	flusher, _ := w.(http.Flusher)
	send := func(p api.ProgressResponse) {
		b, _ := json.Marshal(p)
		w.Write(append(b, '\n'))
		if flusher != nil {
			flusher.Flush()
		}
	}
	send(api.ProgressResponse{Status: "pulling manifest"})
	const total = 4_000_000
	digest := fmt.Sprintf("sha256:%064x", len(name))
	for done := int64(0); done <= total; done += total / 4 {
		if s.opt.TokenDelay > 0 {
			time.Sleep(s.opt.TokenDelay)
		}
		send(api.ProgressResponse{Status: "pulling " + digest[7:19], Digest: digest, Total: total, Completed: done})
	}
	send(api.ProgressResponse{Status: "verifying sha256 digest"})
	send(api.ProgressResponse{Status: "writing manifest"})
	s.mu.Lock()
	s.opt.Models[name] = m
	s.mu.Unlock()
	send(api.ProgressResponse{Status: "success"})
}
