package llm

import (
	"math"
	"testing"
)

func TestCost(t *testing.T) {
	t.Parallel()
	u := Usage{PromptTokens: 1_000_000, CompletionTokens: 500_000}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	for model, want := range map[string]float64{
		"gpt-4o":                   2.50 + 5.00,
		"gpt-4o-mini":              0.15 + 0.30,
		"gpt-4o-2024-08-06":        7.50,
		"openai/gpt-4.1":           2.00 + 4.00,
		"claude-sonnet-4-20250514": 3.00 + 7.50,
		"qwen3:8b":                 0,
		"llama3.2":                 0,
		"gpt-4omni":                0,
		"":                         0,
	} {
		if got := Cost(model, u); !near(got, want) {
			t.Errorf("Cost(%q) = %v, want %v", model, got, want)
		}
	}
	if got := Cost("text-embedding-3-small", Usage{EmbeddingTokens: 2_000_000}); !near(got, 0.04) {
		t.Errorf("embedding cost %v", got)
	}
	if got := CloudEquivalent(Usage{PromptTokens: 1_000_000, CompletionTokens: 1_000_000, EmbeddingTokens: 1_000_000}); !near(got, 0.15+0.60+0.02) {
		t.Errorf("CloudEquivalent %v", got)
	}
}
