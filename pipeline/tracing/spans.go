package tracing

import (
	"context"
	"encoding/json"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/history"
)

// spanRef is an open span and the context its children start from.
type spanRef struct {
	span trace.Span
	ctx  context.Context
}

// runTrace is one run's open spans. Each run's events arrive in order on
// its own goroutine; the Tracer's mutex guards the map of runs.
type runTrace struct {
	t      *Tracer
	id     string
	root   spanRef
	stages map[pipeline.Stage]spanRef
	agents map[string]spanRef
	docs   map[string]spanRef // document reads, by source key
	wait   *spanRef           // the run waiting for a person's decision
}

// Observe turns one event into spans; it is pipeline.Engine.Observe. It
// never blocks on the network: ended spans go to the batcher's queue.
func (t *Tracer) Observe(ev pipeline.Event) {
	if t == nil || ev.Type == pipeline.TokenDelta || ev.Type == pipeline.UsageUpdated {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	rt := t.runs[ev.SessionID]
	if ev.Type == pipeline.RunStarted {
		if rt != nil {
			rt.endAll(ev.Time, "a new run of the session started")
		}
		t.runs[ev.SessionID] = t.startRun(ev)
		return
	}
	if rt == nil {
		return
	}
	if ev.Type.Terminal() {
		rt.finish(ev)
		delete(t.runs, ev.SessionID)
		return
	}
	rt.observe(ev)
}

// startRun opens a run's root span: a trace of its own, linked to the
// session's earlier runs (a resume, a follow-up question).
func (t *Tracer) startRun(ev pipeline.Event) *runTrace {
	rt := &runTrace{t: t, id: ev.SessionID, stages: map[pipeline.Stage]spanRef{}, agents: map[string]spanRef{}, docs: map[string]spanRef{}}
	var links []trace.Link
	if ev.Seq > 1 && t.cfg.History != nil {
		if evs, err := t.cfg.History(ev.SessionID); err == nil {
			for _, p := range evs {
				if p.Type == pipeline.RunStarted && p.Seq < ev.Seq {
					tid, sid := rootIDs(ev.SessionID, p.Seq)
					links = append(links, trace.Link{
						SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, Remote: true}),
						Attributes:  []attribute.KeyValue{attribute.String("researchtui.link", "an earlier run of the session")},
					})
				}
			}
		}
	}
	attrs := []attribute.KeyValue{
		attribute.String("langfuse.session.id", ev.SessionID),
		attribute.String("session.id", ev.SessionID),
		attribute.String("langfuse.trace.name", "research"),
		attribute.String("researchtui.session_id", ev.SessionID),
		attribute.Int("researchtui.attempt", len(links)+1),
		attribute.Bool("researchtui.resumed", ev.Seq > 1),
		attribute.String("openinference.span.kind", "CHAIN"),
	}
	if t.cfg.TraceContent && ev.Message != "" {
		attrs = append(attrs, attribute.String("langfuse.trace.input", ev.Message), attribute.String("input.value", ev.Message))
	}
	tid, sid := rootIDs(ev.SessionID, ev.Seq)
	ctx := context.WithValue(context.Background(), wantIDsKey{}, wantIDs{tid: tid, sid: sid})
	name := "research"
	if ev.Seq > 1 {
		name = "research (continued)"
	}
	_, span := t.tracer.Start(ctx, name, trace.WithNewRoot(), trace.WithTimestamp(ev.Time), trace.WithLinks(links...), trace.WithAttributes(attrs...))
	rt.root = spanRef{span: span, ctx: trace.ContextWithSpan(context.Background(), span)}
	return rt
}

// parent is the span an event's work belongs to: its agent's, else its
// stage's, else the run's.
func (rt *runTrace) parent(ev pipeline.Event) spanRef {
	if a, ok := rt.agents[ev.Agent]; ok && ev.Agent != "" {
		return a
	}
	if s, ok := rt.stages[ev.Stage]; ok {
		return s
	}
	return rt.root
}

func (rt *runTrace) start(parent spanRef, name string, at time.Time, kind trace.SpanKind, attrs ...attribute.KeyValue) spanRef {
	ctx, span := rt.t.tracer.Start(parent.ctx, name, trace.WithTimestamp(at), trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
	return spanRef{span: span, ctx: ctx}
}

func (rt *runTrace) observe(ev pipeline.Event) {
	content := rt.t.cfg.TraceContent
	rt.endWait(ev)
	switch ev.Type {
	case pipeline.StageStarted:
		rt.stages[ev.Stage] = rt.start(rt.root, "stage "+string(ev.Stage), ev.Time, trace.SpanKindInternal,
			attribute.String("researchtui.stage", string(ev.Stage)), attribute.String("researchtui.message", ev.Message),
			attribute.String("openinference.span.kind", "CHAIN"))
	case pipeline.StageFinished:
		if s, ok := rt.stages[ev.Stage]; ok {
			s.span.SetAttributes(attribute.String("researchtui.summary", ev.Message), attribute.Int("researchtui.count", ev.Count))
			s.span.End(trace.WithTimestamp(ev.Time))
			delete(rt.stages, ev.Stage)
		}
	case pipeline.AgentStarted:
		attrs := []attribute.KeyValue{attribute.String("gen_ai.agent.name", ev.Agent), attribute.String("researchtui.stage", string(ev.Stage)),
			attribute.String("openinference.span.kind", "AGENT")}
		if content && ev.Message != "" {
			attrs = append(attrs, attribute.String("input.value", ev.Message))
		}
		p := rt.root
		if s, ok := rt.stages[ev.Stage]; ok {
			p = s
		}
		rt.agents[ev.Agent] = rt.start(p, "agent "+ev.Agent, ev.Time, trace.SpanKindInternal, attrs...)
	case pipeline.AgentFinished:
		if a, ok := rt.agents[ev.Agent]; ok {
			a.span.SetAttributes(attribute.String("researchtui.summary", ev.Message))
			if u := ev.Usage; u != nil {
				a.span.SetAttributes(attribute.Int("researchtui.usage.prompt_tokens", u.PromptTokens), attribute.Int("researchtui.usage.completion_tokens", u.CompletionTokens),
					attribute.Int("researchtui.usage.embedding_tokens", u.EmbeddingTokens))
			}
			a.span.End(trace.WithTimestamp(ev.Time))
			delete(rt.agents, ev.Agent)
		}
	case pipeline.ModelCalled:
		rt.modelCall(ev)
	case pipeline.SourceSearched:
		if ev.Call == nil {
			return
		}
		s := rt.start(rt.parent(ev), "search "+ev.Call.Source, ev.Time.Add(-ev.Elapsed), trace.SpanKindClient,
			attribute.String("researchtui.source", ev.Call.Source), attribute.Int("researchtui.results", ev.Count),
			attribute.Int("researchtui.queries", ev.Call.Attempts), attribute.String("openinference.span.kind", "RETRIEVER"))
		if ev.Call.Error != "" {
			s.span.SetStatus(codes.Error, ev.Call.Error)
		}
		s.span.End(trace.WithTimestamp(ev.Time))
	case pipeline.SourceProgress:
		rt.document(ev)
	case pipeline.DocumentRead:
		if ev.Source == nil {
			return
		}
		if d, ok := rt.docs[ev.Source.Key]; ok {
			d.span.SetAttributes(attribute.Bool("researchtui.full_text", ev.Source.FullText), attribute.Int("researchtui.chunks", ev.Count),
				attribute.String("researchtui.summary", ev.Message))
			d.span.End(trace.WithTimestamp(ev.Time))
			delete(rt.docs, ev.Source.Key)
		}
	case pipeline.Warning:
		s := rt.parent(ev)
		s.span.AddEvent("warning", trace.WithTimestamp(ev.Time), trace.WithAttributes(attribute.String("message", ev.Message)))
		s.span.SetAttributes(attribute.String("langfuse.observation.level", "WARNING"), attribute.String("langfuse.observation.status_message", ev.Message))
	case pipeline.CandidatesRanked:
		rt.parent(ev).span.AddEvent("candidates ranked", trace.WithTimestamp(ev.Time),
			trace.WithAttributes(attribute.String("message", ev.Message), attribute.Int("researchtui.distinct_candidates", ev.Count)))
	case pipeline.RoundStarted:
		rt.root.span.AddEvent("research round", trace.WithTimestamp(ev.Time), trace.WithAttributes(attribute.Int("researchtui.round", ev.Count)))
	case pipeline.ReviewRequested:
		if rv := ev.Review; rv != nil {
			rt.parent(ev).span.AddEvent("review requested", trace.WithTimestamp(ev.Time), trace.WithAttributes(
				attribute.Int("researchtui.review.round", rv.Round), attribute.Bool("researchtui.review.approved", rv.Approved),
				attribute.Int("researchtui.review.requests", len(rv.Requests))))
			if !rv.Approved {
				// A person's time, not the machine's: a span of its own,
				// marked so a backend can leave it out of model idle time.
				w := rt.start(rt.root, history.WaitName, ev.Time, trace.SpanKindInternal,
					attribute.Bool("researchtui.human_wait", true), attribute.String("researchtui.wait_for", "review decision"),
					attribute.Int("researchtui.review.round", rv.Round))
				rt.wait = &w
			}
		}
	case pipeline.ReviewDecided:
		if d := ev.Decision; d != nil {
			rt.parent(ev).span.AddEvent("review decided", trace.WithTimestamp(ev.Time), trace.WithAttributes(
				attribute.Bool("researchtui.review.revise", d.Approve), attribute.Int("researchtui.review.accepted", len(d.Accepted))))
		}
	case pipeline.ReportReady:
		rt.root.span.AddEvent("report ready", trace.WithTimestamp(ev.Time), trace.WithAttributes(attribute.Int("researchtui.sources", ev.Count)))
		if content && ev.Text != "" {
			rt.root.span.SetAttributes(attribute.String("langfuse.trace.output", ev.Text), attribute.String("output.value", ev.Text))
		}
	}
}

// modelCall is one span per model call, after the GenAI semantic
// conventions (and OpenInference's names, which Phoenix reads).
func (rt *runTrace) modelCall(ev pipeline.Event) {
	c := ev.Call
	if c == nil {
		return
	}
	attrs := []attribute.KeyValue{
		attribute.String("gen_ai.operation.name", c.Operation),
		attribute.String("gen_ai.request.model", c.Model),
		attribute.String("llm.model_name", c.Model),
		attribute.String("researchtui.agent", ev.Agent),
		attribute.Int("researchtui.attempts", c.Attempts),
	}
	if p := rt.t.cfg.Provider; p != "" {
		attrs = append(attrs, attribute.String("gen_ai.provider.name", p), attribute.String("gen_ai.system", p))
	}
	if c.Temperature != nil {
		attrs = append(attrs, attribute.Float64("gen_ai.request.temperature", *c.Temperature))
	}
	kind := "LLM"
	if c.Operation == "embeddings" {
		kind = "EMBEDDING"
	}
	attrs = append(attrs, attribute.String("openinference.span.kind", kind))
	if c.Structured != "" {
		attrs = append(attrs, attribute.String("gen_ai.output.type", "json"), attribute.String("researchtui.structured_output", c.Structured))
	}
	if u := ev.Usage; u != nil {
		in, out := u.PromptTokens, u.CompletionTokens
		if c.Operation == "embeddings" {
			in = u.EmbeddingTokens
		}
		attrs = append(attrs,
			attribute.Int("gen_ai.usage.input_tokens", in), attribute.Int("gen_ai.usage.output_tokens", out),
			attribute.Int("llm.token_count.prompt", in), attribute.Int("llm.token_count.completion", out), attribute.Int("llm.token_count.total", in+out))
		if u.CostUSD > 0 {
			attrs = append(attrs, attribute.Float64("researchtui.cost_usd", u.CostUSD))
		}
	}
	if rt.t.cfg.TraceContent {
		if len(c.Prompt) > 0 {
			msgs := make([]genAIMessage, len(c.Prompt))
			for i, m := range c.Prompt {
				msgs[i] = genAIMessage{Role: m.Role, Parts: []genAIPart{{Type: "text", Content: m.Content}}}
			}
			in, _ := json.Marshal(msgs)
			plain, _ := json.Marshal(c.Prompt)
			attrs = append(attrs, attribute.String("gen_ai.input.messages", string(in)), attribute.String("input.value", string(plain)))
		}
		if c.Output != "" {
			out, _ := json.Marshal([]genAIMessage{{Role: "assistant", Parts: []genAIPart{{Type: "text", Content: c.Output}}}})
			attrs = append(attrs, attribute.String("gen_ai.output.messages", string(out)), attribute.String("output.value", c.Output))
		}
	}
	s := rt.start(rt.parent(ev), c.Operation+" "+c.Model, ev.Time.Add(-ev.Elapsed), trace.SpanKindClient, attrs...)
	if c.Error != "" {
		s.span.SetAttributes(attribute.String("error.type", "model_call_failed"))
		s.span.SetStatus(codes.Error, c.Error)
	}
	s.span.End(trace.WithTimestamp(ev.Time))
}

// genAIMessage is a message as the GenAI conventions' gen_ai.input.messages
// and gen_ai.output.messages hold them.
type genAIMessage struct {
	Role  string      `json:"role"`
	Parts []genAIPart `json:"parts"`
}

type genAIPart struct {
	Type    string `json:"type"`
	Content string `json:"content"`
}

// document follows a source's download: reading opens its span, a skip
// while reading ends it (DocumentRead ends it otherwise).
func (rt *runTrace) document(ev pipeline.Event) {
	src := ev.Source
	if src == nil {
		return
	}
	switch src.State {
	case pipeline.StateReading:
		p := rt.root
		if s, ok := rt.stages[pipeline.StageRead]; ok {
			p = s
		}
		attrs := []attribute.KeyValue{attribute.String("researchtui.source", src.Source), attribute.String("researchtui.source_key", src.Key)}
		if src.URL != "" {
			attrs = append(attrs, attribute.String("url.full", src.URL))
		}
		rt.docs[src.Key] = rt.start(p, "read document", ev.Time, trace.SpanKindClient, attrs...)
	case pipeline.StateSkipped:
		if d, ok := rt.docs[src.Key]; ok {
			d.span.SetAttributes(attribute.String("researchtui.skipped", ev.Message))
			d.span.End(trace.WithTimestamp(ev.Time))
			delete(rt.docs, src.Key)
		}
	}
}

// finish ends the run: its outcome, usage and scores on the root span.
func (rt *runTrace) finish(ev pipeline.Event) {
	root := rt.root.span
	root.SetAttributes(attribute.String("researchtui.status", ev.Status))
	if u := ev.Usage; u != nil {
		root.SetAttributes(attribute.Int("researchtui.usage.prompt_tokens", u.PromptTokens), attribute.Int("researchtui.usage.completion_tokens", u.CompletionTokens),
			attribute.Int("researchtui.usage.embedding_tokens", u.EmbeddingTokens), attribute.Float64("researchtui.cost_usd", u.CostUSD))
	}
	switch ev.Type {
	case pipeline.RunFinished:
		if rt.t.cfg.Scores != nil {
			if sc, err := rt.t.cfg.Scores(rt.id); err == nil {
				root.SetAttributes(scoreAttributes(sc)...)
			}
		}
		root.SetStatus(codes.Ok, "")
	case pipeline.RunFailed:
		root.SetStatus(codes.Error, ev.Message)
	}
	rt.endAll(ev.Time, ev.Message)
}

// scoreAttributes are a run's scores twice over: researchtui.score.* for
// any backend, and langfuse.trace.metadata.* (Langfuse shows them as the
// trace's metadata, which its filters and dashboards can use).
func scoreAttributes(sc history.RunScores) []attribute.KeyValue {
	var out []attribute.KeyValue
	add := func(name string, v attribute.Value) {
		out = append(out, attribute.KeyValue{Key: attribute.Key("researchtui.score." + name), Value: v},
			attribute.KeyValue{Key: attribute.Key("langfuse.trace.metadata." + name), Value: v})
	}
	add("reviewer_approved", attribute.BoolValue(sc.ReviewerApproved))
	add("person_approved", attribute.IntValue(sc.PersonApproved))
	add("person_rejected", attribute.IntValue(sc.PersonRejected))
	add("revision_rounds", attribute.IntValue(sc.RevisionRounds))
	add("steps_used", attribute.IntValue(sc.StepsUsed))
	add("steps_budget", attribute.IntValue(sc.StepsBudget))
	add("grounding_ratio", attribute.Float64Value(sc.GroundingRatio))
	add("citations", attribute.IntValue(sc.Citations))
	add("sources_cited", attribute.IntValue(sc.SourcesCited))
	add("model_utilisation", attribute.Float64Value(sc.ModelUtil))
	add("generated_tokens", attribute.IntValue(sc.GeneratedTokens))
	add("generated_per_source_read", attribute.Float64Value(sc.GeneratedPerSource))
	add("generated_per_cited_sentence", attribute.Float64Value(sc.GeneratedPerSentence))
	return out
}

// endAll ends every open span of the run, the root last; spans that never
// finished say so.
func (rt *runTrace) endAll(at time.Time, why string) {
	unfinished := []attribute.KeyValue{attribute.Bool("researchtui.unfinished", true), attribute.String("researchtui.ended_by", why)}
	if rt.wait != nil { // a run suspended waiting: the wait ends with it
		rt.wait.span.End(trace.WithTimestamp(at))
		rt.wait = nil
	}
	for k, d := range rt.docs {
		d.span.SetAttributes(unfinished...)
		d.span.End(trace.WithTimestamp(at))
		delete(rt.docs, k)
	}
	for k, a := range rt.agents {
		a.span.SetAttributes(unfinished...)
		a.span.End(trace.WithTimestamp(at))
		delete(rt.agents, k)
	}
	for k, s := range rt.stages {
		s.span.SetAttributes(unfinished...)
		s.span.End(trace.WithTimestamp(at))
		delete(rt.stages, k)
	}
	rt.root.span.End(trace.WithTimestamp(at))
}

// endWait ends the wait for a person when the run goes on (history.EndsWait).
func (rt *runTrace) endWait(ev pipeline.Event) {
	if rt.wait != nil && history.EndsWait(ev.Type) {
		rt.wait.span.End(trace.WithTimestamp(ev.Time))
		rt.wait = nil
	}
}
