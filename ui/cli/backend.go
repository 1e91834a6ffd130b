package cli

import (
	"context"
	"fmt"
	"time"

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

// checkBackend makes sure the server answers and both models are present,
// so a run fails at once with the fix rather than minutes in.
func checkBackend(ctx context.Context, b llm.Backend, models ...string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := b.Ping(ctx); err != nil {
		return err
	}
	for _, m := range models {
		if _, err := b.Show(ctx, m); err != nil {
			return err
		}
	}
	return nil
}
