// Package llm owns the model backends behind one interface: chat (streaming,
// optionally constrained by a JSON schema), embeddings, model information,
// usage and cost, and the structured-output path that never lets a model's
// broken JSON fail a run. It imports none of the other researchtui packages.
package llm

import (
	"context"
	"encoding/json"
	"time"
)

// Message is one chat turn.
type Message struct {
	Role    string `json:"role"` // system, user, assistant
	Content string `json:"content"`
}

// ChatRequest is a backend-neutral chat call.
type ChatRequest struct {
	Model    string
	Messages []Message
	// Schema, when set, is a JSON schema the answer must follow (Ollama's
	// `format`). Use JSONMode for plain JSON without a schema.
	Schema      json.RawMessage
	JSONMode    bool
	Temperature *float64 // nil: backend default
	Seed        *int
	MaxTokens   int  // 0: no cap (num_predict)
	Think       bool // ask for thinking when the model supports it
}

// Delta is one streamed piece of an answer. Thinking text is kept apart so it
// is shown but never parsed as output.
type Delta struct {
	Content  string
	Thinking string
}

// Usage is what one call cost, as the backend reported it.
type Usage struct {
	PromptTokens     int           `json:"prompt_tokens"`
	CompletionTokens int           `json:"completion_tokens"`
	EmbeddingTokens  int           `json:"embedding_tokens,omitempty"`
	PromptDuration   time.Duration `json:"prompt_duration,omitempty"`
	EvalDuration     time.Duration `json:"eval_duration,omitempty"`
	TotalDuration    time.Duration `json:"total_duration,omitempty"`
}

// Add sums two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		PromptTokens:     u.PromptTokens + o.PromptTokens,
		CompletionTokens: u.CompletionTokens + o.CompletionTokens,
		EmbeddingTokens:  u.EmbeddingTokens + o.EmbeddingTokens,
		PromptDuration:   u.PromptDuration + o.PromptDuration,
		EvalDuration:     u.EvalDuration + o.EvalDuration,
		TotalDuration:    u.TotalDuration + o.TotalDuration,
	}
}

// TokensPerSecond is the generation speed of a call, 0 when unknown.
func (u Usage) TokensPerSecond() float64 {
	if u.EvalDuration <= 0 {
		return 0
	}
	return float64(u.CompletionTokens) / u.EvalDuration.Seconds()
}

// ChatResponse is the whole answer of a chat call.
type ChatResponse struct {
	Content    string
	Thinking   string
	Usage      Usage
	DoneReason string // stop, length, ...
	NumCtx     int    // the context window the call ran with (0 if unknown)
	// Truncated is true when the prompt was cut or came within 5% of NumCtx.
	Truncated bool
	Warning   string // why Truncated is set, for the user
}

// ModelInfo is what the backend knows about a model.
type ModelInfo struct {
	Name          string
	ContextLength int      // 0 when unknown
	Capabilities  []string // completion, embedding, thinking, tools, ...
	Family        string
}

// Has reports whether the model has a capability.
func (m ModelInfo) Has(capability string) bool {
	for _, c := range m.Capabilities {
		if c == capability {
			return true
		}
	}
	return false
}

// Backend is a model server: Ollama (default) or an OpenAI-compatible API.
type Backend interface {
	// Chat runs one chat call. onDelta, when not nil, receives the answer as
	// it streams; it must not block for long.
	Chat(ctx context.Context, req ChatRequest, onDelta func(Delta)) (ChatResponse, error)
	// Embed returns one vector per input, in order.
	Embed(ctx context.Context, model string, inputs []string) ([][]float32, Usage, error)
	// Show describes a model; a missing model is a *ModelMissingError.
	Show(ctx context.Context, model string) (ModelInfo, error)
	// Ping checks that the server answers; failure is an *UnreachableError.
	Ping(ctx context.Context) error
	// Name is "ollama" or "openai"; Host is the address in use, for messages.
	Name() string
	Host() string
}
