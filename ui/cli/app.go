package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/history"
	"github.com/researchtui/researchtui/pipeline/tracing"
	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/textkit"
)

// app is what a command needs: config, store, backend and engine.
type app struct {
	cfg *Config
	// store is the data dir: owned by this process, or reached through the
	// researchtui that owns it (store/README.md); runs work either way.
	store   *store.Conn
	backend llm.Backend
	engine  *pipeline.Engine
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
		fmt.Fprintln(a.warnTo, "researchtui:", textkit.StripControls(msg))
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
		Scores:  func(id string) (history.RunScores, error) { return history.LoadScores(a.store, id) },
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

// openApp opens everything a run needs.
func openApp(cfg *Config) (*app, error) {
	db, err := openStore(cfg, reach)
	if err != nil {
		return nil, err
	}
	st := db.(*store.Conn)
	a := &app{cfg: cfg, store: st, warnTo: os.Stderr}
	b, err := newBackend(cfg)
	if err != nil {
		a.Close()
		return nil, err
	}
	a.backend = b
	srcs, fetcher, off := newSources(cfg, st) // with the store: the local corpus is a source
	a.engine = &pipeline.Engine{Store: st, LLM: b, Sources: srcs, SourcesOff: off, Fetcher: fetcher, ModelParallel: cfg.modelParallel()}
	if err := a.startTracing(); err != nil {
		a.Close()
		return nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	return a, nil
}
