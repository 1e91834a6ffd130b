package ollamafake

import (
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/ollama/ollama/api"
)

// Nominal speeds reported when TokenDelay is 0 (so durations are non-zero
// and deterministic): 100 tokens/s generation, 10k tokens/s prompt.
const (
	nominalEval   = 10 * time.Millisecond
	nominalPrompt = 100 * time.Microsecond
)

// Echo is the default Responder: `{}` for calls with a format, otherwise a
// short sentence quoting the last user message.
func Echo(call ChatCall) Reply {
	if len(call.Format) > 0 {
		return Reply{Content: "{}"}
	}
	last := ""
	for _, m := range call.Messages {
		if m.Role == "user" {
			last = m.Content
		}
	}
	if len(last) > 60 {
		last = last[:60]
	}
	return Reply{Content: fmt.Sprintf("Fake answer to: %s", strings.Join(strings.Fields(last), " "))}
}

// Fixed answers every call with content.
func Fixed(content string) Responder {
	return func(ChatCall) Reply { return Reply{Content: content} }
}

// Sequence answers call N with replies[N-1], repeating the last one after.
func Sequence(replies ...Reply) Responder {
	return func(c ChatCall) Reply {
		if len(replies) == 0 {
			return Echo(c)
		}
		return replies[min(c.N, len(replies))-1]
	}
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	var req api.ChatRequest
	body, ok := readBody(w, r, &req)
	if !ok {
		s.record(r, "", body, nil)
		return
	}
	if req.Model == "" {
		s.record(r, "", body, nil)
		writeError(w, http.StatusBadRequest, "model is required")
		return
	}
	m, found := s.lookup(req.Model)
	if !found {
		s.record(r, req.Model, body, nil)
		notFound(w, req.Model)
		return
	}
	think := false
	if slices.Contains(m.Capabilities, "thinking") {
		think = req.Think == nil || req.Think.Bool()
	} else if req.Think != nil && req.Think.Bool() {
		s.record(r, req.Model, body, nil)
		writeError(w, http.StatusBadRequest, fmt.Sprintf("%q does not support thinking", req.Model))
		return
	}
	if !slices.Contains(m.Capabilities, "completion") {
		s.record(r, req.Model, body, nil)
		writeError(w, http.StatusBadRequest, fmt.Sprintf("%q does not support chat", req.Model))
		return
	}

	call := ChatCall{
		Model:    req.Model,
		Messages: req.Messages,
		Format:   req.Format,
		Options:  req.Options,
		Think:    think,
		Stream:   req.Stream == nil || *req.Stream,
	}
	s.mu.Lock()
	s.chats++
	call.N = s.chats
	s.log = append(s.log, Logged{Path: r.URL.Path, Model: req.Model, Body: body, Time: time.Now(), Call: call})
	s.mu.Unlock()

	reply := s.opt.Responder(call)
	if reply.Status != 0 {
		msg := reply.Error
		if msg == "" {
			msg = "fake ollama: " + strings.ToLower(http.StatusText(reply.Status))
		}
		writeError(w, reply.Status, msg)
		return
	}

	var chunks []api.Message
	if think {
		for _, p := range splitWords(reply.Thinking) {
			chunks = append(chunks, api.Message{Role: "assistant", Thinking: p})
		}
	}
	for _, p := range splitWords(reply.Content) {
		chunks = append(chunks, api.Message{Role: "assistant", Content: p})
	}
	prompt := reply.PromptTokens
	if prompt == 0 {
		chars := 0
		for _, msg := range req.Messages {
			chars += len(msg.Content)
		}
		prompt = chars/4 + 1
	}
	completion := reply.CompletionTokens
	if completion == 0 {
		for _, c := range chunks {
			completion += s.chunkTokens(c)
		}
	}
	final := api.ChatResponse{
		Model:      req.Model,
		Message:    api.Message{Role: "assistant"},
		Done:       true,
		DoneReason: "stop",
		Metrics: api.Metrics{
			PromptEvalCount:    prompt,
			PromptEvalDuration: time.Duration(prompt) * nominalPrompt,
			EvalCount:          completion,
			EvalDuration:       time.Duration(completion) * nominalEval,
		},
	}
	served := Totals{PromptTokens: prompt, CompletionTokens: completion}

	if !call.Stream {
		if reply.DropAfter > 0 {
			panic(http.ErrAbortHandler)
		}
		// An unstreamed answer costs the model what a streamed one does: it
		// waits for the slot, processes the prompt and generates every
		// token before the server answers.
		if !s.acquire(r) {
			return
		}
		defer s.release()
		if !pause(r, s.opt.FirstTokenDelay+s.prefill(call.N, req.Messages)+time.Duration(completion)*s.opt.TokenDelay) {
			return
		}
		final.Message.Content = reply.Content
		if think {
			final.Message.Thinking = reply.Thinking
		}
		final.CreatedAt = time.Now().UTC()
		final.TotalDuration = final.PromptEvalDuration + final.EvalDuration
		writeJSON(w, http.StatusOK, final)
		s.add(served)
		return
	}

	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	flush := func() {
		if flusher != nil {
			flusher.Flush()
		}
	}
	if !s.acquire(r) {
		return
	}
	defer s.release()
	if !pause(r, s.opt.FirstTokenDelay+s.prefill(call.N, req.Messages)) {
		return
	}
	start := time.Now()
	for i, msg := range chunks {
		if reply.DropAfter > 0 && i >= reply.DropAfter {
			break
		}
		if !pause(r, time.Duration(s.chunkTokens(msg))*s.opt.TokenDelay) {
			return
		}
		if r.Context().Err() != nil {
			return
		}
		writeLine(w, api.ChatResponse{Model: req.Model, CreatedAt: time.Now().UTC(), Message: msg})
		flush()
	}
	if reply.DropAfter > 0 {
		flush()
		panic(http.ErrAbortHandler) // drop the connection: no done chunk
	}
	if s.opt.TokenDelay > 0 {
		final.EvalDuration = max(time.Since(start), time.Microsecond)
	}
	final.CreatedAt = time.Now().UTC()
	final.TotalDuration = final.PromptEvalDuration + final.EvalDuration
	writeLine(w, final)
	flush()
	s.add(served)
}

func writeLine(w http.ResponseWriter, v any) {
	b, _ := jsonMarshal(v)
	w.Write(append(b, '\n'))
}

// splitWords cuts s into chunks of one word each, every chunk carrying the
// whitespace before its word (like " word"), so the chunks join back to s.
func splitWords(s string) []string {
	var out []string
	start := 0
	prevSpace := true
	for i, r := range s {
		sp := unicode.IsSpace(r)
		if sp && !prevSpace {
			out = append(out, s[start:i])
			start = i
		}
		prevSpace = sp
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// words are the lower-cased letter/digit runs of s.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// Vector is the fake embedding of text: a hashed bag of words in dim
// buckets, L2-normalised, so texts that share words are close.
func Vector(text string, dim int) []float32 {
	v := make([]float64, dim)
	ws := words(text)
	if len(ws) == 0 {
		v[0] = 1
	}
	for _, w := range ws {
		h := fnv.New32a()
		h.Write([]byte(w))
		v[h.Sum32()%uint32(dim)]++
	}
	var norm float64
	for _, x := range v {
		norm += x * x
	}
	norm = math.Sqrt(norm)
	out := make([]float32, dim)
	for i, x := range v {
		out[i] = float32(x / norm)
	}
	return out
}

func (s *Server) embed(w http.ResponseWriter, r *http.Request) {
	var req api.EmbedRequest
	body, ok := readBody(w, r, &req)
	s.record(r, req.Model, body, nil)
	if !ok {
		return
	}
	var inputs []string
	switch in := req.Input.(type) {
	case nil:
	case string:
		if in != "" {
			inputs = append(inputs, in)
		}
	case []any:
		for _, v := range in {
			str, ok := v.(string)
			if !ok {
				writeError(w, http.StatusBadRequest, "invalid input type")
				return
			}
			inputs = append(inputs, str)
		}
	default:
		writeError(w, http.StatusBadRequest, "invalid input type")
		return
	}
	m, found := s.lookup(req.Model)
	if !found {
		notFound(w, req.Model)
		return
	}
	if m.EmbedDim <= 0 {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("%q does not support embeddings", req.Model))
		return
	}
	s.busy.enter()
	ok = pause(r, s.opt.EmbedDelay)
	s.busy.leave()
	if !ok {
		return
	}
	resp := api.EmbedResponse{Model: req.Model, Embeddings: [][]float32{}}
	for _, in := range inputs {
		resp.Embeddings = append(resp.Embeddings, Vector(in, m.EmbedDim))
		resp.PromptEvalCount += len(words(in))
	}
	resp.TotalDuration = time.Duration(resp.PromptEvalCount) * nominalPrompt
	writeJSON(w, http.StatusOK, resp)
	s.add(Totals{EmbeddingTokens: resp.PromptEvalCount})
}

// prefill is the time to process a prompt's tokens (chars/4) at
// PrefillRate, less the prefix it shares with the previous prompt, which
// the runner's cache already holds.
func (s *Server) prefill(n int, msgs []api.Message) time.Duration {
	if s.opt.PrefillRate <= 0 {
		return 0
	}
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(m.Role)
		b.WriteString("\x00")
		b.WriteString(m.Content)
		b.WriteString("\x00")
	}
	prompt := b.String()
	s.mu.Lock()
	shared := commonPrefix(s.lastPrompt, prompt)
	s.lastPrompt = prompt
	s.prefilled += (len(prompt) - shared) / 4
	if s.prefillByCall == nil {
		s.prefillByCall = map[int]int{}
	}
	s.prefillByCall[n] = (len(prompt) - shared) / 4
	s.cachedPrompt += shared / 4
	s.mu.Unlock()
	tokens := float64(len(prompt)-shared) / 4
	return time.Duration(tokens / s.opt.PrefillRate * float64(time.Second))
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// chunkTokens is how many tokens a streamed chunk counts as: one, or its
// characters / 4 with TokensByChars.
func (s *Server) chunkTokens(m api.Message) int {
	if !s.opt.TokensByChars {
		return 1
	}
	return max(1, (len(m.Content)+len(m.Thinking)+2)/4)
}
