package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/tracing"
)

// app is what a command needs: config, store, backend and engine.
type app struct {
	cfg *Config
	// store is the data dir: owned by this process, or reached through the
	// researchtui that owns it (store/README.md); runs work either way.
	store   *store.Conn
	backend llm.Backend
	engine  *pipeline.Engine
	// unavailable lists requested sources this build cannot search.
	unavailable []string
	// tracer exports runs to an OpenTelemetry collector; nil when off.
	tracer *tracing.Tracer
	// warnMu guards warnTo, where tracing's one warning goes (stderr; the
	// TUI sends it to its log file instead).
	warnMu sync.Mutex
	warnTo io.Writer
}

func (a *app) Close() {
	if a.tracer != nil {
		// Flush what the last run left in the queue, within a deadline.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := a.tracer.Shutdown(ctx); err != nil {
			a.warn(err.Error())
		}
		cancel()
	}
	if a.store != nil {
		a.store.Close()
	}
}

func (a *app) warn(msg string) {
	a.warnMu.Lock()
	defer a.warnMu.Unlock()
	if a.warnTo != nil {
		fmt.Fprintln(a.warnTo, "researchtui:", sanitize(msg))
	}
}

// setWarnings sends tracing's warnings to w.
func (a *app) setWarnings(w io.Writer) {
	a.warnMu.Lock()
	a.warnTo = w
	a.warnMu.Unlock()
}

// startTracing makes the engine's runs observable from outside when the
// environment or the config turn tracing on; otherwise nothing is started.
func (a *app) startTracing() error {
	c := a.cfg.Tracing
	tc := tracing.Config{
		Enabled: c.Enabled, Endpoint: c.Endpoint, Headers: c.Headers, ServiceName: c.ServiceName,
		TraceContent: c.TraceContent, Version: version, Provider: a.cfg.Backend,
		Warn:    func(msg string) { a.warn("tracing: " + msg) },
		History: a.engine.Events,
		Scores:  func(id string) (pipeline.RunScores, error) { return pipeline.LoadScores(a.store, id) },
	}
	if !tracing.Enabled(tc) {
		return nil
	}
	t, err := tracing.New(context.Background(), tc)
	if err != nil {
		return err
	}
	a.tracer = t
	a.engine.Observe = t.Observe
	return nil
}

// openStore opens the database for what only its owner may do (corpus
// add, compaction, doctor's checks), failing fast (exit 4) when another
// process holds it. Sessions a dead process left running become
// interrupted.
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
	// This process owns the data dir now: serve it to the others (see
	// store/README.md). A data dir that cannot take a socket (a path over
	// the socket limit, a filesystem without them) still works alone.
	_, _ = st.Share(store.SocketPath(cfg.dbPath()))
	return st, nil
}

// connectStore opens the data dir's store as its owner (serving it to
// later processes) or connects to the researchtui that owns it. Exit code 4
// (ErrLocked) remains only for a store that truly cannot be reached.
func connectStore(cfg *Config) (*store.Conn, error) {
	st, err := store.Connect(cfg.dbPath(), store.Options{LockTimeout: 500 * time.Millisecond}, resolveWait)
	if err != nil && errors.Is(err, store.ErrLocked) {
		return nil, fmt.Errorf("%w; close the other researchtui (or wait for its run to finish) and try again", err)
	}
	return st, err
}

// openApp opens everything a run needs.
func openApp(cfg *Config) (*app, error) {
	st, err := connectStore(cfg)
	if err != nil {
		return nil, err
	}
	a := &app{cfg: cfg, store: st, warnTo: os.Stderr}
	b, err := newBackend(cfg)
	if err != nil {
		a.Close()
		return nil, err
	}
	a.backend = b
	srcs, fetcher := newSources(cfg, st) // with the store: the local corpus is a source
	a.engine = &pipeline.Engine{Store: st, LLM: b, Sources: srcs, Fetcher: fetcher, ModelParallel: cfg.modelParallel()}
	if err := a.startTracing(); err != nil {
		a.Close()
		return nil, fmt.Errorf("%w: %v", errUsage, err)
	}
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
	o.Screen = c.Screen
	o.Deadline, o.Grace = c.deadline, c.grace
	o.Verify, o.Unsupported = c.Verify, c.Unsupported
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
