package ui

import (
	"testing"

	"github.com/researchtui/researchtui/pipeline"
)

// TestUsageOfNoAgentDrawsNoAgent: usage reported for work no agent row
// stands for (the ranker's query embeddings) adds to the totals but draws
// no agent, which would stay "○ pending" under a finished stage.
func TestUsageOfNoAgentDrawsNoAgent(t *testing.T) {
	rs := newRunView("s1", "q", "qwen3:8b", nil, testNow)
	rs.apply(pipeline.Event{Type: pipeline.StageStarted, Stage: pipeline.StageResearch, Time: testNow})
	rs.apply(pipeline.Event{Type: pipeline.UsageUpdated, Stage: pipeline.StageResearch, Agent: "ranker", Time: testNow,
		Usage: &pipeline.UsageTotals{EmbeddingTokens: 40}})
	if _, ok := rs.agents["ranker"]; ok {
		t.Error("usage of the ranker's embeddings drew a ranker agent")
	}
	if rs.usage.EmbeddingTokens != 40 {
		t.Errorf("the totals lost the usage: %+v", rs.usage)
	}
}
