package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/researchtui/researchtui/pipeline"
)

// An agent's rate is shown only when it was measured over enough tokens
// and time: an answer that arrived in one piece once read 983051/s.
func TestAgentRateOnlyWhenMeasured(t *testing.T) {
	m, _, _, r := scriptedRun(t, 120, 40)
	finished := func(agent string, tok int, rate float64) pipeline.Event {
		return pipeline.Event{Type: pipeline.AgentFinished, Stage: pipeline.StageAnalyse, Agent: agent, Elapsed: 2 * time.Second, Time: testNow,
			Usage: &pipeline.UsageTotals{CompletionTokens: tok, TokensPerSecond: rate}}
	}
	started := func(agent string) pipeline.Event {
		return pipeline.Event{Type: pipeline.AgentStarted, Stage: pipeline.StageAnalyse, Agent: agent, Time: testNow}
	}
	feedRun(t, m, r,
		started("one-piece"), finished("one-piece", 300, 983051), // 300 tokens in 0.3 ms
		started("short"), finished("short", 6, 40), // 6 tokens: too few
		started("steady"), finished("steady", 300, 61), // 300 tokens over 4.9 s
	)
	out := ansi.Strip(m.render())
	row := func(name string) string {
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, name) {
				return l
			}
		}
		t.Fatalf("no row for %s in\n%s", name, out)
		return ""
	}
	for _, name := range []string{"one-piece", "short"} {
		if strings.Contains(row(name), "/s") {
			t.Errorf("%s shows a rate it did not measure: %q", name, row(name))
		}
	}
	if !strings.Contains(row("steady"), "61/s") {
		t.Errorf("a measured rate is shown: %q", row("steady"))
	}
}
