package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/ui"
)

// runTUI opens the terminal UI. The backend is checked but not required:
// with no backend the stored sessions can still be browsed.
func runTUI(ctx context.Context, question string) error {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	a, err := openApp(cfg)
	if err != nil {
		return err
	}
	defer a.Close()
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	backendErr := bannerError(checkBackend(cctx, a.backend, cfg.Model, cfg.EmbedModel), a.backend.Host())
	cancel()
	if err := ui.Run(ctx, ui.Config{
		Engine:     a.engine,
		Store:      a.store,
		Defaults:   cfg.defaultOptions(),
		BackendErr: backendErr,
		Theme:      cfg.Theme,
		Question:   question,
		DataDir:    cfg.dataDir,
	}); err != nil {
		return fmt.Errorf("terminal UI: %w", err)
	}
	return nil
}

// bannerError phrases a backend problem as one line for the TUI's banner:
// what is wrong and the fix.
func bannerError(err error, host string) error {
	var missing *llm.ModelMissingError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &missing):
		return fmt.Errorf("model %s is not installed: run `ollama pull %s`", missing.Model, missing.Model)
	case llm.IsUnreachable(err):
		return fmt.Errorf("No Ollama at %s: run `ollama serve` or set OLLAMA_HOST", strings.TrimPrefix(strings.TrimPrefix(host, "http://"), "https://"))
	}
	return err
}
