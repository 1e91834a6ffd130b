package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/researchtui/researchtui/textkit"

	"github.com/researchtui/researchtui/llm"
)

// newBackend builds the model backend named in the config: Ollama (one
// host, or a pool when OLLAMA_HOST / ollama_host lists several separated
// by commas) or an OpenAI-compatible server.
func newBackend(cfg *Config) (llm.Backend, error) {
	switch cfg.Backend {
	case "ollama":
		b, err := llm.NewOllamaHosts(cfg.OllamaHost, llm.OllamaOptions{})
		if err != nil {
			return nil, fmt.Errorf("%w: OLLAMA_HOST: %v", errUsage, err)
		}
		return b, nil
	case "openai":
		base := cfg.OpenAIBaseURL
		if base == "" && cfg.OpenAIAPIKey != "" {
			base = llm.OpenAIDefaultBaseURL
		}
		b, err := llm.NewOpenAI(base, llm.OpenAIOptions{APIKey: cfg.OpenAIAPIKey, ContextLength: cfg.OpenAIContextLength})
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errUsage, err)
		}
		return b, nil
	}
	return nil, fmt.Errorf("%w: unknown backend %q (use ollama or openai)", errUsage, cfg.Backend)
}

// checkBackend makes sure the server answers and the models are present,
// the first of them (the chat model) one that can chat, so a run fails at
// once with the fix rather than minutes in (an embedding model as the chat
// model fails every call, and the run degrades to a report assembled from
// abstracts that looks like a result).
func checkBackend(ctx context.Context, b llm.Backend, models ...string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := b.Ping(ctx); err != nil {
		return printable(err)
	}
	for i, m := range models {
		mi, err := b.Show(ctx, m)
		if err != nil {
			return printable(err)
		}
		if i == 0 {
			if err := canChat(m, mi); err != nil {
				return err
			}
		}
	}
	return nil
}

// canChat refuses a model whose server says it cannot chat (an embedding
// model). A server that lists no capabilities is trusted.
func canChat(name string, mi llm.ModelInfo) error {
	if len(mi.Capabilities) == 0 || mi.Has("completion") {
		return nil
	}
	caps := make([]string, 0, min(len(mi.Capabilities), 8))
	for _, c := range mi.Capabilities[:min(len(mi.Capabilities), 8)] {
		caps = append(caps, textkit.Clip(textkit.CleanLine(c), 40))
	}
	return fmt.Errorf("%w: %s cannot chat (its server lists it for %s); choose a chat model", errUsage, textkit.CleanLine(name), strings.Join(caps, ", "))
}

// printableErr is an error whose words a server may have written (a
// status message, a model's capabilities) made safe to print: terminal
// controls and line breaks are taken out. errors.Is and As still see
// what it wraps.
type printableErr struct{ err error }

func (e printableErr) Error() string { return textkit.CleanLine(e.err.Error()) }
func (e printableErr) Unwrap() error { return e.err }

// printable wraps err as printableErr; nil stays nil.
func printable(err error) error {
	if err == nil {
		return nil
	}
	return printableErr{err}
}
