package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/researchtui/researchtui/llm"
)

// errBudget marks work skipped because the run's token or step budget ran out.
var errBudget = errors.New("budget exhausted")

// meter accumulates a run's usage and enforces its budgets. Every model call
// goes through it, so the totals equal what the backend reported.
type meter struct {
	mu       sync.Mutex
	model    string
	usage    UsageTotals
	steps    int
	maxSteps int
	budget   int
	warned   bool
}

func (m *meter) add(u llm.Usage) UsageTotals {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.usage.PromptTokens += u.PromptTokens
	m.usage.CompletionTokens += u.CompletionTokens
	m.usage.EmbeddingTokens += u.EmbeddingTokens
	m.usage.CostUSD += llm.Cost(m.model, u)
	return m.usage
}

func (m *meter) totals() UsageTotals {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.usage
}

// stepsTaken is the number of model calls reserved so far.
func (m *meter) stepsTaken() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.steps
}

// step reserves one model call; it fails once the step or token budget is
// spent, so optional work stops and the run goes on to its report.
func (m *meter) step() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.maxSteps > 0 && m.steps >= m.maxSteps {
		return fmt.Errorf("%w: %d model calls", errBudget, m.maxSteps)
	}
	if m.budget > 0 && m.usage.PromptTokens+m.usage.CompletionTokens >= m.budget {
		return fmt.Errorf("%w: %d tokens", errBudget, m.budget)
	}
	m.steps++
	return nil
}

// exhausted reports whether the budget is spent, without reserving a step.
func (m *meter) exhausted() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return (m.maxSteps > 0 && m.steps >= m.maxSteps) ||
		(m.budget > 0 && m.usage.PromptTokens+m.usage.CompletionTokens >= m.budget)
}

// firstBudgetWarning is true once, for the first budget hit.
func (m *meter) firstBudgetWarning() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.warned {
		return false
	}
	m.warned = true
	return true
}

// fatal reports errors that no agent can work around: the backend is gone,
// the model is missing, or the run was cancelled.
func fatal(ctx context.Context, err error) bool {
	if err == nil {
		return false
	}
	return ctx.Err() != nil || llm.IsUnreachable(err) || llm.IsModelMissing(err)
}

// agentCall wraps one agent's model call with its events: AgentStarted,
// streamed deltas, AgentFinished with the call's usage and speed, and the
// run's updated totals.
type agentCall struct {
	o     *orchestrator
	stage Stage
	name  string
	start time.Time
	usage llm.Usage
	// slotHeld: the agent already holds a model slot (engine.go) for all of
	// its calls, so they don't queue again.
	slotHeld bool
}

// slot takes a model slot for one call unless the agent holds one.
func (a *agentCall) slot(ctx context.Context) (func(), error) {
	if a.slotHeld {
		return func() {}, nil
	}
	return a.o.engine.acquireModel(ctx)
}

func (o *orchestrator) startAgent(stage Stage, name, what string) *agentCall {
	o.emit(Event{Type: AgentStarted, Stage: stage, Agent: name, Message: what})
	return &agentCall{o: o, stage: stage, name: name, start: time.Now()}
}

func (a *agentCall) onDelta(d llm.Delta) {
	a.o.run.em.delta(a.stage, a.name, d.Content, d.Thinking)
}

// record adds usage from one model call to the agent and to the run.
func (a *agentCall) record(u llm.Usage) {
	a.usage = a.usage.Add(u)
	tot := a.o.meter.add(u)
	a.o.emit(Event{Type: UsageUpdated, Stage: a.stage, Agent: a.name, Usage: &tot})
}

func (a *agentCall) warn(format string, args ...any) {
	a.o.warn(a.stage, a.name, format, args...)
}

// warnUnusable warns that the agent's answer could not be used and what
// the run does instead (Outcome OutcomeUnusable, which eval counts).
func (a *agentCall) warnUnusable(format string, args ...any) {
	a.o.warnOutcome(a.stage, a.name, OutcomeUnusable, format, args...)
}

// finish closes the agent with a one-line summary.
func (a *agentCall) finish(summary string) { a.end(summary, "") }

// finishShowing is finish with what the agent found, in words, for the
// output pane: an analyst streams references ("E1.3"), which only the
// pipeline can turn back into the sentences they name.
func (a *agentCall) finishShowing(summary, text string) { a.endWith(summary, "", text) }

// fail closes the agent that could not do its work: shown as failed (✗),
// not as done beside the stage it failed.
func (a *agentCall) fail() { a.end("failed", "failed") }

func (a *agentCall) end(summary, status string) { a.endWith(summary, status, "") }

func (a *agentCall) endWith(summary, status, text string) {
	u := UsageTotals{
		PromptTokens:     a.usage.PromptTokens,
		CompletionTokens: a.usage.CompletionTokens,
		EmbeddingTokens:  a.usage.EmbeddingTokens,
		CostUSD:          llm.Cost(a.o.opt.Model, a.usage),
		TokensPerSecond:  a.usage.TokensPerSecond(),
	}
	a.o.emit(Event{Type: AgentFinished, Stage: a.stage, Agent: a.name, Status: status, Message: summary, Text: text, Usage: &u, Elapsed: time.Since(a.start)})
}

// chat runs a free-text call (writer). Errors other than fatal ones are
// returned for the caller to degrade.
func (a *agentCall) chat(ctx context.Context, req llm.ChatRequest) (llm.ChatResponse, error) {
	if err := a.o.meter.step(); err != nil {
		return llm.ChatResponse{}, err
	}
	release, err := a.slot(ctx)
	if err != nil {
		return llm.ChatResponse{}, err
	}
	defer release()
	req.Model = a.o.opt.Model
	req.Think = a.o.opt.Think // the backend asks only models that can
	start := time.Now()
	resp, err := a.o.engine.LLM.Chat(ctx, req, a.onDelta)
	a.record(resp.Usage)
	a.called(start, req, &Call{Operation: "chat", Attempts: 1, Output: resp.Content}, resp.Usage, err)
	if resp.Truncated && resp.Warning != "" {
		a.warn("%s", resp.Warning)
	}
	return resp, err
}

// structured runs a JSON-schema call through llm.Structured: repaired,
// retried, or replaced by the fallback, never failing on bad JSON. It returns
// an error only when the run cannot go on (or the budget is spent, in which
// case the fallback value is returned too).
func structured[T any](ctx context.Context, a *agentCall, req llm.ChatRequest, validate func(*T) error, fallback func() T) (T, llm.StructuredInfo, error) {
	if err := a.o.meter.step(); err != nil {
		return fallback(), llm.StructuredInfo{Fallback: true}, err
	}
	release, err := a.slot(ctx)
	if err != nil {
		return fallback(), llm.StructuredInfo{Fallback: true}, err
	}
	defer release()
	req.Model = a.o.opt.Model
	req.Think = a.o.opt.Think // the backend asks only models that can
	start := time.Now()
	v, info, err := llm.Structured(ctx, a.o.engine.LLM, req, validate, fallback, a.onDelta)
	a.record(info.Usage)
	out, _ := json.Marshal(v) // a snapshot: the agent may change v
	a.called(start, req, &Call{Operation: "chat", Structured: structuredOutcome(info), Attempts: info.Attempts, Output: string(out)}, info.Usage, err)
	for _, w := range info.Warnings {
		a.warn("%s", w)
	}
	return v, info, err
}

// called reports one finished model call (ModelCalled) with its own usage.
func (a *agentCall) called(start time.Time, req llm.ChatRequest, c *Call, u llm.Usage, err error) {
	if c.Model == "" {
		c.Model = req.Model
	}
	c.Temperature, c.Prompt = req.Temperature, slices.Clone(req.Messages)
	if err != nil {
		c.Error = shortErr(err)
	}
	a.o.emit(Event{Type: ModelCalled, Stage: a.stage, Agent: a.name, Call: c, Elapsed: time.Since(start),
		Usage: &UsageTotals{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, EmbeddingTokens: u.EmbeddingTokens,
			CostUSD: llm.Cost(c.Model, u), TokensPerSecond: u.TokensPerSecond()}})
}

// structuredOutcome names how a structured call's answer was got.
func structuredOutcome(info llm.StructuredInfo) string {
	switch {
	case info.Fallback:
		return StructuredFallback
	case info.Attempts > 1:
		return StructuredRetried
	case info.Repaired:
		return StructuredRepaired
	}
	return StructuredOK
}
