package ui

import (
	"math/rand/v2"
	"testing"

	"github.com/researchtui/researchtui/pipeline"
)

// The status bar's meter shows the run's totals at every moment, whatever
// order the events of agents working side by side arrive in: it never goes
// down (a model_call carries one call's usage and once set the meter to
// it), never shows less than the finished agents' sum, and ends at the
// totals the run stored. Checked over many random interleavings.
func TestMeterShowsRunTotalsOverAnyInterleaving(t *testing.T) {
	for seed := uint64(0); seed < 300; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		events, final := interleavedRun(rng)
		rs := newRunView("s", "q", "m", nil, testNow)
		var last pipeline.UsageTotals
		var finished pipeline.UsageTotals
		for i, ev := range events {
			rs.apply(ev)
			u := rs.usage
			if u.PromptTokens < last.PromptTokens || u.CompletionTokens < last.CompletionTokens || u.EmbeddingTokens < last.EmbeddingTokens {
				t.Fatalf("seed %d, event %d (%s): the meter went down from %+v to %+v", seed, i, ev.Type, last, u)
			}
			if ev.Type == pipeline.AgentFinished {
				finished = addUsage(finished, *ev.Usage)
			}
			if u.PromptTokens < finished.PromptTokens || u.CompletionTokens < finished.CompletionTokens {
				t.Fatalf("seed %d, event %d: the meter %+v shows less than the finished agents' %+v", seed, i, u, finished)
			}
			last = u
		}
		if rs.usage.PromptTokens != final.PromptTokens || rs.usage.CompletionTokens != final.CompletionTokens || rs.usage.EmbeddingTokens != final.EmbeddingTokens {
			t.Fatalf("seed %d: the meter ends at %+v, the run stored %+v", seed, rs.usage, final)
		}
	}
}

// interleavedRun is the event stream of a run whose agents (1 to 6, up to 4
// calls each) work side by side: for each call the pipeline emits its
// usage_updated (the run's running totals, in the order the calls end) and
// its model_call (that call's usage) — in either order, as goroutines
// race — and each agent ends with agent_finished (its own sum). The run
// ends with run_finished carrying the totals, which it returns.
func interleavedRun(rng *rand.Rand) ([]pipeline.Event, pipeline.UsageTotals) {
	type agent struct {
		name  string
		calls int
		sum   pipeline.UsageTotals
	}
	agents := make([]*agent, 1+rng.IntN(6))
	for i := range agents {
		agents[i] = &agent{name: string(rune('a' + i)), calls: 1 + rng.IntN(4)}
	}
	var total pipeline.UsageTotals
	var events []pipeline.Event
	live := len(agents)
	for live > 0 {
		a := agents[rng.IntN(len(agents))]
		if a.calls < 0 {
			continue
		}
		if a.calls == 0 {
			sum := a.sum
			events = append(events, pipeline.Event{Type: pipeline.AgentFinished, Agent: a.name, Usage: &sum})
			a.calls, live = -1, live-1
			continue
		}
		call := pipeline.UsageTotals{PromptTokens: 50 + rng.IntN(3000), CompletionTokens: 1 + rng.IntN(400), EmbeddingTokens: rng.IntN(2) * rng.IntN(500)}
		a.sum, total = addUsage(a.sum, call), addUsage(total, call)
		tot := total
		updated := pipeline.Event{Type: pipeline.UsageUpdated, Agent: a.name, Usage: &tot}
		called := pipeline.Event{Type: pipeline.ModelCalled, Agent: a.name, Usage: &call}
		if rng.IntN(2) == 0 {
			events = append(events, updated, called)
		} else {
			events = append(events, called, updated)
		}
		a.calls--
	}
	end := total
	return append(events, pipeline.Event{Type: pipeline.RunFinished, Usage: &end}), total
}
