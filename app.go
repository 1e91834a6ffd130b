package main

import (
	"errors"
	"fmt"
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
	// Half a second: enough for another process that is just closing, short
	// enough that a second instance is told at once (exit 4).
	st, err := store.Open(cfg.dbPath(), store.Options{LockTimeout: 500 * time.Millisecond})
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
	srcs, fetcher := newSources(cfg, st) // with the store: the local corpus is a source
	a.engine = &pipeline.Engine{Store: st, LLM: b, Sources: srcs, Fetcher: fetcher, ModelParallel: cfg.modelParallel()}
	return a, nil
}

// defaultOptions are the run options from config, before flags.
func (c *Config) defaultOptions() pipeline.Options {
	o := pipeline.Options{
		Model: c.Model, EmbedModel: c.EmbedModel, Backend: c.Backend,
		Sources: c.Sources, Depth: c.Depth, MaxRevisions: 2, BudgetTokens: c.BudgetTokens, Think: c.Think,
	}
	if c.MaxRevisions != nil {
		o.MaxRevisions = *c.MaxRevisions
	}
	o.Rounds = c.Rounds
	o.Deadline, o.Grace = c.deadline, c.grace
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
