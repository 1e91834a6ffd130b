// Package tracing exports research runs as OpenTelemetry traces over OTLP
// HTTP, with the official Go SDK. It is one more consumer of the pipeline's
// event stream (pipeline.Engine.Observe), like the TUI and headless mode:
// nothing in the agents knows about it, and only the command line (ui/cli) imports it.
//
// It is off unless the standard OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT variables are set or the config's
// [tracing] table turns it on; off, New returns nil and nothing is started.
// On, a run is one trace: spans for its stages, agents, model calls (GenAI
// semantic conventions), source searches and document reads; warnings are
// span events, failures set the status, and the session and the run's
// scores are attributes Langfuse reads. A resumed run's trace links to the
// session's earlier ones. Prompts and completions leave the machine only
// with TraceContent.
//
// Export never slows a run: spans go to a bounded queue that a batcher
// sends in the background (spans are dropped when it is full), a dead
// collector costs one warning, and Shutdown flushes within a deadline.
package tracing

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/history"
	"github.com/researchtui/researchtui/textkit"
)

// Config is what ui/cli knows about tracing: the [tracing] table of the
// config file and a few hooks into the store. The OTEL_* variables win over
// the file.
type Config struct {
	// Enabled turns export on with the OTLP defaults (localhost:4318)
	// when no endpoint is given.
	Enabled bool
	// Endpoint is the collector's OTLP/HTTP base URL (e.g.
	// http://localhost:4318); /v1/traces is added when it has no path.
	Endpoint string
	// Headers go with every export (e.g. Langfuse's Authorization).
	Headers map[string]string
	// ServiceName defaults to researchtui (OTEL_SERVICE_NAME wins).
	ServiceName string
	Version     string
	// Provider is the model backend (ollama, openai): gen_ai.provider.name.
	Provider string
	// TraceContent exports the question, prompts and completions. Off by
	// default: they can hold private material.
	TraceContent bool
	// Warn reports, once, that traces cannot be exported.
	Warn func(msg string)
	// History reads a session's stored events, so a resumed run's trace
	// links to the session's earlier ones (nil: no links).
	History func(id string) ([]pipeline.Event, error)
	// Scores are a finished run's scores, set on its trace (nil: none).
	Scores func(id string) (history.RunScores, error)
}

// Enabled reports whether the environment or the config turn export on.
// OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none turn it off.
func Enabled(cfg Config) bool {
	if strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") || strings.EqualFold(os.Getenv("OTEL_TRACES_EXPORTER"), "none") {
		return false
	}
	if envEndpoint() {
		return true
	}
	return cfg.Enabled || cfg.Endpoint != ""
}

func envEndpoint() bool {
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Tracer turns run events into spans. A nil *Tracer does nothing.
type Tracer struct {
	cfg    Config
	tp     *sdktrace.TracerProvider
	tracer trace.Tracer
	failed atomic.Bool // an export failed: the collector is likely gone

	mu   sync.Mutex
	runs map[string]*runTrace // by session ID
}

// New starts the exporter when tracing is enabled; it returns nil, nil
// when it is not, having started nothing.
func New(ctx context.Context, cfg Config) (*Tracer, error) {
	if !Enabled(cfg) {
		return nil, nil
	}
	var opts []otlptracehttp.Option
	if !envEndpoint() && cfg.Endpoint != "" {
		u, err := url.Parse(cfg.Endpoint)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return nil, fmt.Errorf("tracing endpoint %q is not a URL like http://localhost:4318", cfg.Endpoint)
		}
		if u.Path == "" || u.Path == "/" {
			u.Path = "/v1/traces"
		}
		opts = append(opts, otlptracehttp.WithEndpointURL(u.String()))
	}
	if len(cfg.Headers) > 0 && os.Getenv("OTEL_EXPORTER_OTLP_HEADERS") == "" && os.Getenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS") == "" {
		opts = append(opts, otlptracehttp.WithHeaders(cfg.Headers))
	}
	opts = append(opts,
		otlptracehttp.WithTimeout(5*time.Second),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: true, InitialInterval: time.Second, MaxInterval: 4 * time.Second, MaxElapsedTime: 10 * time.Second}),
	)
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	return newTracer(ctx, cfg, exp)
}

// newTracer builds the tracer over any exporter (tests use an in-memory
// one).
func newTracer(ctx context.Context, cfg Config, exp sdktrace.SpanExporter) (*Tracer, error) {
	name := cfg.ServiceName
	if name == "" {
		name = "researchtui"
	}
	attrs := []attribute.KeyValue{attribute.String("service.name", name)}
	if cfg.Version != "" {
		attrs = append(attrs, attribute.String("service.version", cfg.Version))
	}
	res, err := resource.New(ctx, resource.WithAttributes(attrs...), resource.WithFromEnv())
	if err != nil && res == nil {
		return nil, fmt.Errorf("tracing resource: %w", err)
	}
	t := &Tracer{cfg: cfg, runs: map[string]*runTrace{}}
	var once sync.Once
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		t.failed.Store(true)
		once.Do(func() {
			if cfg.Warn != nil {
				cfg.Warn(fmt.Sprintf("traces cannot be exported (%v); runs go on without them", shortErr(err)))
			}
		})
	}))
	bsp := sdktrace.NewBatchSpanProcessor(exp,
		sdktrace.WithMaxQueueSize(4096), // bounded: when full, spans are dropped, never waited for
		sdktrace.WithMaxExportBatchSize(512),
		sdktrace.WithBatchTimeout(2*time.Second),
		sdktrace.WithExportTimeout(10*time.Second),
	)
	t.tp = sdktrace.NewTracerProvider(
		sdktrace.WithResource(res),
		sdktrace.WithSpanProcessor(bsp),
		sdktrace.WithIDGenerator(&idGenerator{}),
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
	)
	t.tracer = t.tp.Tracer("github.com/researchtui/researchtui/pipeline/tracing")
	return t, nil
}

// Shutdown ends what is still open and flushes the queue within ctx's
// deadline (a second at most once the collector has failed).
func (t *Tracer) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	for id, rt := range t.runs {
		rt.endAll(time.Now(), "the program ended during the run")
		delete(t.runs, id)
	}
	t.mu.Unlock()
	if t.failed.Load() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Second)
		defer cancel()
	}
	err := t.tp.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("tracing: some spans were not sent before the deadline")
	}
	return err
}

// rootIDs are a run's trace and root span IDs, derived from the session
// and the run's first sequence number, so a later run of the session can
// link to them without storing anything.
func rootIDs(sessionID string, seq int64) (trace.TraceID, trace.SpanID) {
	sum := sha256.Sum256(fmt.Appendf(nil, "researchtui/%s/%d", sessionID, seq))
	var tid trace.TraceID
	var sid trace.SpanID
	copy(tid[:], sum[:16])
	copy(sid[:], sum[16:24])
	return tid, sid
}

// idGenerator gives root spans their derived IDs and every other span
// random ones.
type idGenerator struct{}

type wantIDsKey struct{}

type wantIDs struct {
	tid trace.TraceID
	sid trace.SpanID
}

func (g *idGenerator) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	if w, ok := ctx.Value(wantIDsKey{}).(wantIDs); ok {
		return w.tid, w.sid
	}
	var tid trace.TraceID
	randRead(tid[:])
	return tid, g.NewSpanID(ctx, tid)
}

func (g *idGenerator) NewSpanID(context.Context, trace.TraceID) trace.SpanID {
	var sid trace.SpanID
	for sid == (trace.SpanID{}) {
		randRead(sid[:])
	}
	return sid
}

func randRead(b []byte) { _, _ = rand.Read(b) }

// shortErr is an export error short enough for one warning: at most 160
// runes.
func shortErr(err error) string { return textkit.Clip(err.Error(), 160) }
