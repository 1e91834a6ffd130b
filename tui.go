package main

import (
	"context"
	"fmt"
	"time"

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
	backendErr := checkBackend(cctx, a.backend, cfg.Model, cfg.EmbedModel)
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
