package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
	state, err := loadTUIState(cfg.tuiStatePath())
	notice := ""
	if err != nil {
		// Shown in the TUI, where the person looks; the next choice
		// (t, or a run from the form) writes the file afresh.
		notice = "the remembered theme and form choices are not used: " + err.Error()
	} else if err := forgetStaleTheme(cfg.tuiStatePath(), state, cfg.Theme); err != nil {
		notice = "the theme chosen with t could not be forgotten: " + err.Error()
	}
	theme := state.theme(cfg.Theme)
	if a.tracer != nil {
		// Nothing may print over the TUI: tracing's warning goes to the log.
		lf := tuiLog(cfg)
		defer lf.Close()
		a.setWarnings(lf)
		defer a.setWarnings(os.Stderr) // Close (deferred first, run last) may still warn
	}
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	backendErr := checkBackend(cctx, a.backend, cfg.Model, cfg.EmbedModel)
	var missing []string
	if llm.IsModelMissing(backendErr) {
		missing = missingModels(cctx, a.backend, cfg.Model, cfg.EmbedModel)
	}
	cancel()
	if err := ui.Run(ctx, ui.Config{
		Engine:        a.engine,
		Store:         a.store,
		Defaults:      cfg.tuiOptions(state),
		BackendErr:    bannerError(backendErr, a.backend.Host(), missing),
		MissingModels: missing,
		Theme:         theme,
		Notice:        notice,
		Question:      question,
		DataDir:       cfg.dataDir,
		SaveSettings:  func(s ui.Settings) error { return saveTUIState(cfg.tuiStatePath(), s, cfg.Theme) },
		Collections:   func() ([]ui.LibraryCollection, error) { return tuiCollections(cfg) },
		CheckBackend: func(ctx context.Context, models ...string) error {
			return checkBackend(ctx, a.backend, models...)
		},
	}); err != nil {
		return fmt.Errorf("terminal UI: %w", err)
	}
	return nil
}

// tuiLog opens the log file the TUI writes warnings to (a discarding one
// when it can't be opened).
func tuiLog(cfg *Config) io.WriteCloser {
	if err := os.MkdirAll(cfg.logDir(), 0o755); err == nil {
		if f, err := os.OpenFile(filepath.Join(cfg.logDir(), "researchtui.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err == nil {
			return f
		}
	}
	return nopCloser{io.Discard}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// bannerError phrases a backend problem as one line for the TUI's banner:
// what is wrong and the fix.
func bannerError(err error, host string, missing []string) error {
	switch {
	case err == nil:
		return nil
	case len(missing) == 1:
		return fmt.Errorf("model %s is not installed on %s", missing[0], host)
	case len(missing) > 1:
		return fmt.Errorf("models %s are not installed on %s", strings.Join(missing, " and "), host)
	case llm.IsUnreachable(err):
		return fmt.Errorf("No Ollama at %s: run `ollama serve` or set OLLAMA_HOST", strings.TrimPrefix(strings.TrimPrefix(host, "http://"), "https://"))
	}
	return err
}

// missingModels lists the models the backend lacks, for the TUI to offer
// to pull.
func missingModels(ctx context.Context, b llm.Backend, models ...string) []string {
	var out []string
	for _, m := range models {
		if _, err := b.Show(ctx, m); llm.IsModelMissing(err) {
			out = append(out, m)
		}
	}
	return out
}
