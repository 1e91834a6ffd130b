package tracing

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/goleak"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/history"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/store"
)

const question = "What limits the context length of transformers?"

// clearOTel unsets every variable that could turn export on.
func clearOTel(t *testing.T) {
	for _, v := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_HEADERS",
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_SERVICE_NAME", "OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER"} {
		t.Setenv(v, "")
	}
}

// TestOffByDefault: with no OTel variables and no config, New starts
// nothing (no goroutine: no batcher, no exporter) and a nil tracer's
// methods do nothing; a variable or the config turns it on, and
// OTEL_SDK_DISABLED turns it off again.
func TestOffByDefault(t *testing.T) {
	clearOTel(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	tr, err := New(context.Background(), Config{TraceContent: true})
	if tr != nil || err != nil {
		t.Fatalf("New with nothing set: %v, %v; want nil, nil", tr, err)
	}
	tr.Observe(pipeline.Event{Type: pipeline.RunStarted, SessionID: "s1", Seq: 1})
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !Enabled(Config{Endpoint: "http://127.0.0.1:4318"}) || !Enabled(Config{Enabled: true}) {
		t.Error("the config does not turn tracing on")
	}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
	if !Enabled(Config{}) {
		t.Error("OTEL_EXPORTER_OTLP_ENDPOINT does not turn tracing on")
	}
	t.Setenv("OTEL_SDK_DISABLED", "true")
	if Enabled(Config{Enabled: true}) {
		t.Error("OTEL_SDK_DISABLED=true does not turn tracing off")
	}
}

// traced runs one research with the tracer observing it and returns the
// spans it ended.
type tracedEnv struct {
	env *pipelinetest.Env
	exp *tracetest.InMemoryExporter
	tr  *Tracer
}

func newTraced(t *testing.T, content bool) *tracedEnv {
	t.Helper()
	clearOTel(t)
	env := pipelinetest.NewEnv(t, &pipelinetest.Script{RevisionRounds: 1}, "")
	exp := tracetest.NewInMemoryExporter()
	tr, err := newTracer(context.Background(), Config{
		TraceContent: content, Provider: "ollama",
		History: env.Engine.Events,
		Scores:  func(id string) (history.RunScores, error) { return history.LoadScores(env.Store, id) },
	}, exp)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Shutdown(context.Background()) })
	env.Engine.Observe = tr.Observe
	return &tracedEnv{env: env, exp: exp, tr: tr}
}

func (te *tracedEnv) spans(t *testing.T) tracetest.SpanStubs {
	t.Helper()
	if err := te.tr.tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	return te.exp.GetSpans()
}

func runDone(t *testing.T, r *pipeline.Run, cancelAt func(pipeline.Event) bool) store.Session {
	t.Helper()
	for ev := range r.Events() {
		switch {
		case cancelAt != nil && cancelAt(ev):
			r.Cancel()
		case ev.Type == pipeline.ReviewRequested:
			_ = r.Decide(pipeline.Decision{Approve: true})
		}
	}
	sess, _ := r.Wait()
	return sess
}

func attr(s tracetest.SpanStub, key string) (attribute.Value, bool) {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

// TestRunIsOneTrace: a finished run is one trace whose root carries the
// session and the scores; every stage has a span; model calls are spans
// after the GenAI conventions whose tokens add up to the session's; source
// searches are spans; and no prompt or completion is exported.
func TestRunIsOneTrace(t *testing.T) {
	te := newTraced(t, false)
	r, err := te.env.Engine.Start(context.Background(), te.env.Options(question))
	if err != nil {
		t.Fatal(err)
	}
	sess := runDone(t, r, nil)
	if sess.Status != store.StatusCompleted {
		t.Fatalf("status %s", sess.Status)
	}
	spans := te.spans(t)
	traces := map[string]bool{}
	var roots []tracetest.SpanStub
	stages := map[string]bool{}
	in, out, emb, searches := 0, 0, 0, 0
	for _, s := range spans {
		traces[s.SpanContext.TraceID().String()] = true
		if !s.Parent.IsValid() {
			roots = append(roots, s)
		}
		if v, ok := attr(s, "researchtui.stage"); ok && strings.HasPrefix(s.Name, "stage ") {
			stages[v.AsString()] = true
		}
		if strings.HasPrefix(s.Name, "search ") {
			searches++
		}
		for _, key := range []string{"gen_ai.input.messages", "gen_ai.output.messages", "input.value", "output.value", "langfuse.trace.input"} {
			if _, ok := attr(s, key); ok {
				t.Errorf("span %q exports %s without trace_content", s.Name, key)
			}
		}
		op, ok := attr(s, "gen_ai.operation.name")
		if !ok {
			continue
		}
		if m, _ := attr(s, "gen_ai.request.model"); m.AsString() == "" || s.Name != op.AsString()+" "+m.AsString() {
			t.Errorf("model span %q: model %q", s.Name, m.AsString())
		}
		i, _ := attr(s, "gen_ai.usage.input_tokens")
		o, _ := attr(s, "gen_ai.usage.output_tokens")
		if op.AsString() == "embeddings" {
			emb += int(i.AsInt64())
			continue
		}
		in, out = in+int(i.AsInt64()), out+int(o.AsInt64())
		if so, ok := attr(s, "researchtui.structured_output"); ok && so.AsString() != pipeline.StructuredOK {
			t.Logf("structured output %s in %q", so.AsString(), s.Name)
		}
	}
	if len(traces) != 1 || len(roots) != 1 {
		t.Fatalf("%d traces and %d roots, want one of each", len(traces), len(roots))
	}
	root := roots[0]
	if v, _ := attr(root, "langfuse.session.id"); v.AsString() != sess.ID {
		t.Errorf("root langfuse.session.id %q, want %s", v.AsString(), sess.ID)
	}
	if root.Status.Code != codes.Ok {
		t.Errorf("root status %v", root.Status)
	}
	for _, key := range []string{"researchtui.score.reviewer_approved", "researchtui.score.steps_used", "researchtui.score.grounding_ratio",
		"researchtui.score.citations", "researchtui.score.sources_cited", "langfuse.trace.metadata.revision_rounds"} {
		if _, ok := attr(root, key); !ok {
			t.Errorf("root lacks %s", key)
		}
	}
	if v, _ := attr(root, "researchtui.score.steps_used"); int(v.AsInt64()) != sess.Steps {
		t.Errorf("steps_used %d, session %d", v.AsInt64(), sess.Steps)
	}
	for _, st := range pipeline.Stages {
		if !stages[string(st)] {
			t.Errorf("no span for stage %s", st)
		}
	}
	if in != sess.Usage.PromptTokens || out != sess.Usage.CompletionTokens || emb != sess.Usage.EmbeddingTokens {
		t.Errorf("model spans' tokens %d/%d/%d, the session's %d/%d/%d", in, out, emb,
			sess.Usage.PromptTokens, sess.Usage.CompletionTokens, sess.Usage.EmbeddingTokens)
	}
	if searches == 0 {
		t.Error("no source search spans")
	}
}

// TestContentOnlyWhenAsked: with TraceContent the question, the prompts
// and the completions are on the spans.
func TestContentOnlyWhenAsked(t *testing.T) {
	te := newTraced(t, true)
	r, err := te.env.Engine.Start(context.Background(), te.env.Options(question))
	if err != nil {
		t.Fatal(err)
	}
	runDone(t, r, nil)
	found := map[string]bool{}
	for _, s := range te.spans(t) {
		for _, key := range []string{"gen_ai.input.messages", "gen_ai.output.messages", "langfuse.trace.input"} {
			if v, ok := attr(s, key); ok && v.AsString() != "" {
				found[key] = true
			}
		}
		if v, ok := attr(s, "langfuse.trace.input"); ok && v.AsString() != question {
			t.Errorf("trace input %q", v.AsString())
		}
	}
	if len(found) != 3 {
		t.Errorf("content attributes found: %v", found)
	}
}

// TestResumeLinksToTheSession: a cancelled run's trace ends with its
// unfinished spans marked and no error; the resume is a second trace,
// linked to the first, in the same Langfuse session.
func TestResumeLinksToTheSession(t *testing.T) {
	te := newTraced(t, false)
	r, err := te.env.Engine.Start(context.Background(), te.env.Options(question))
	if err != nil {
		t.Fatal(err)
	}
	sess := runDone(t, r, func(ev pipeline.Event) bool {
		return ev.Type == pipeline.AgentStarted && strings.HasPrefix(ev.Agent, "analyst")
	})
	if sess.Status != store.StatusCancelled {
		t.Fatalf("status %s, want cancelled", sess.Status)
	}
	r2, err := te.env.Engine.Resume(context.Background(), sess.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := runDone(t, r2, nil); s.Status != store.StatusCompleted {
		t.Fatalf("resume ended %s", s.Status)
	}
	var roots []tracetest.SpanStub
	unfinished := 0
	for _, s := range te.spans(t) {
		if !s.Parent.IsValid() {
			roots = append(roots, s)
		}
		if v, ok := attr(s, "researchtui.unfinished"); ok && v.AsBool() {
			unfinished++
		}
	}
	if len(roots) != 2 {
		t.Fatalf("%d traces, want 2", len(roots))
	}
	first, second := roots[0], roots[1]
	if first.StartTime.After(second.StartTime) {
		first, second = second, first
	}
	if first.Status.Code == codes.Error {
		t.Errorf("a cancelled run is marked as an error: %v", first.Status)
	}
	if v, _ := attr(first, "researchtui.status"); v.AsString() != store.StatusCancelled {
		t.Errorf("first run's status attribute %q", v.AsString())
	}
	if unfinished == 0 {
		t.Error("the cancelled run's open spans are not marked unfinished")
	}
	for _, r := range roots {
		if v, _ := attr(r, "langfuse.session.id"); v.AsString() != sess.ID {
			t.Errorf("trace %s is not in session %s", r.SpanContext.TraceID(), sess.ID)
		}
	}
	if len(second.Links) != 1 || second.Links[0].SpanContext.TraceID() != first.SpanContext.TraceID() ||
		second.Links[0].SpanContext.SpanID() != first.SpanContext.SpanID() {
		t.Errorf("the resume's links %+v do not point at the first run's root %s/%s", second.Links, first.SpanContext.TraceID(), first.SpanContext.SpanID())
	}
}

// TestDeadCollectorWarnsOnce: a collector that refuses costs one warning,
// the run is unaffected, and shutdown returns within its deadline.
func TestDeadCollectorWarnsOnce(t *testing.T) {
	clearOTel(t)
	var mu sync.Mutex
	var warnings []string
	tr, err := newTracer(context.Background(), Config{Warn: func(m string) {
		mu.Lock()
		warnings = append(warnings, m)
		mu.Unlock()
	}}, failingExporter{})
	if err != nil {
		t.Fatal(err)
	}
	env := pipelinetest.NewEnv(t, nil, "")
	env.Engine.Observe = tr.Observe
	r, err := env.Engine.Start(context.Background(), env.Options(question))
	if err != nil {
		t.Fatal(err)
	}
	if s := runDone(t, r, nil); s.Status != store.StatusCompleted {
		t.Fatalf("run ended %s with the collector down", s.Status)
	}
	_ = tr.Shutdown(context.Background())    // the batch is sent, and refused, here
	otel.Handle(errors.New("refused again")) // as every later batch would be
	mu.Lock()
	defer mu.Unlock()
	if len(warnings) != 1 || !strings.Contains(warnings[0], "connection refused") {
		t.Errorf("warnings %q, want one about the collector", warnings)
	}
}

type failingExporter struct{}

func (failingExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error {
	return errors.New("dial tcp 127.0.0.1:4318: connect: connection refused")
}
func (failingExporter) Shutdown(context.Context) error { return nil }

// The time a run waits for a person's review decision is a span of its
// own, marked as a person's wait, from the request to the decision.
func TestReviewWaitIsASpanOfItsOwn(t *testing.T) {
	te := newTraced(t, false)
	r, err := te.env.Engine.Start(context.Background(), te.env.Options(question))
	if err != nil {
		t.Fatal(err)
	}
	const reading = 300 * time.Millisecond
	pipelinetest.ApproveAll(t, r, reading)
	var waits []tracetest.SpanStub
	for _, s := range te.spans(t) {
		if s.Name == history.WaitName {
			waits = append(waits, s)
		}
	}
	if len(waits) != 1 {
		t.Fatalf("%d wait spans, want 1 (one review asked for changes)", len(waits))
	}
	w := waits[0]
	if v, ok := attr(w, "researchtui.human_wait"); !ok || !v.AsBool() {
		t.Error("the wait span is not marked researchtui.human_wait")
	}
	if d := w.EndTime.Sub(w.StartTime); d < reading {
		t.Errorf("the wait lasted %v, the person read for %v", d, reading)
	}
}
