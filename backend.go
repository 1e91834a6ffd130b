package main

import (
	"context"
	"fmt"
	"time"

	"github.com/researchtui/researchtui/llm"
)

// newBackend builds the model backend named in the config.
func newBackend(cfg *Config) (llm.Backend, error) {
	switch cfg.Backend {
	case "ollama":
		return llm.NewOllama(cfg.OllamaHost, llm.OllamaOptions{})
	case "openai":
		return nil, fmt.Errorf("%w: the openai backend is not available in this build yet; use --backend ollama", errUsage)
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
