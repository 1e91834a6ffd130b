package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/store"
)

// app is what a command needs: config, store, backend and engine.
type app struct {
	cfg     *Config
	store   *store.Store
	backend llm.Backend
	engine  *pipeline.Engine
	// unavailable lists requested sources this build cannot search.
	unavailable []string
}

func (a *app) Close() {
	if a.store != nil {
		a.store.Close()
	}
}

// openStore opens the database, failing fast (exit 4) when another process
// holds it. Sessions a dead process left running become interrupted.
func openStore(cfg *Config) (*store.Store, error) {
	st, err := store.Open(cfg.dbPath(), store.Options{LockTimeout: time.Second})
	if err != nil {
		if errors.Is(err, store.ErrLocked) {
			return nil, fmt.Errorf("%w; close the other researchtui (or wait for its run to finish) and try again", err)
		}
		return nil, err
	}
	if _, err := st.MarkInterrupted(); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

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

// newSources builds the searchable sources, with base URLs from the
// environment (for mirrors, proxies and tests).
func newSources(cfg *Config) (map[string]search.Source, *search.Fetcher) {
	client := search.NewClient(search.ClientOptions{UserAgent: "researchtui/" + version + " (+https://github.com/researchtui/researchtui)"})
	srcs := map[string]search.Source{
		"arxiv":    search.NewArxiv(client, os.Getenv("RESEARCHTUI_ARXIV_URL")),
		"openalex": search.NewOpenAlex(client, os.Getenv("RESEARCHTUI_OPENALEX_URL"), cfg.ContactEmail),
	}
	if cfg.FullText != nil && !*cfg.FullText {
		return srcs, nil
	}
	fetcher := search.NewFetcher(client, search.FetchOptions{AllowPrivate: os.Getenv("RESEARCHTUI_ALLOW_PRIVATE_FETCH") == "1"})
	return srcs, fetcher
}

// openApp opens everything a run needs.
func openApp(cfg *Config) (*app, error) {
	st, err := openStore(cfg)
	if err != nil {
		return nil, err
	}
	a := &app{cfg: cfg, store: st}
	b, err := newBackend(cfg)
	if err != nil {
		a.Close()
		return nil, err
	}
	a.backend = b
	srcs, fetcher := newSources(cfg)
	a.engine = &pipeline.Engine{Store: st, LLM: b, Sources: srcs, Fetcher: fetcher}
	return a, nil
}

// defaultOptions are the run options from config, before flags.
func (c *Config) defaultOptions() pipeline.Options {
	o := pipeline.Options{
		Model: c.Model, EmbedModel: c.EmbedModel, Backend: c.Backend,
		Sources: c.Sources, Depth: c.Depth, MaxRevisions: 2, BudgetTokens: c.BudgetTokens,
	}
	if c.MaxRevisions != nil {
		o.MaxRevisions = *c.MaxRevisions
	}
	return o
}

// unavailableSources are requested sources this build cannot search.
func unavailableSources(requested []string, have map[string]search.Source) []string {
	var out []string
	for _, s := range requested {
		if _, ok := have[strings.ToLower(strings.TrimSpace(s))]; !ok && s != "" {
			out = append(out, s)
		}
	}
	return out
}

func joinArgs(args []string) string { return strings.TrimSpace(strings.Join(args, " ")) }
