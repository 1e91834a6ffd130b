package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/researchtui/researchtui/pipeline/runopts"
)

// A run option added to runopts.RunOptions (here by the test) is an
// argument of research and start_research, described in their input
// schema, and reaches the run's options, without a change to this
// package's code (issue 37, point 1).
func TestTableAddedOptionIsAToolArgument(t *testing.T) {
	var tone string
	old := runopts.RunOptions
	t.Cleanup(func() { runopts.RunOptions = old })
	runopts.RunOptions = append(old[:len(old):len(old)], runopts.OptionSpec{
		Name: "tone", Key: "tone", Type: runopts.OptionString,
		Default: "plain", Choices: []string{"plain", "formal"},
		Help: "the report's tone", MCP: "the report's tone: plain (the default) or formal",
		Access: runopts.Access{
			Get: func(*runopts.Options) any { return tone },
			Set: func(_ *runopts.Options, v any) { tone = v.(string) },
		},
	})
	h := newHarness(t, nil)
	ctx := context.Background()
	seen := map[string]bool{}
	for tool, err := range h.cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if tool.Name != "research" && tool.Name != "start_research" {
			continue
		}
		var schema struct {
			Properties map[string]struct {
				Type        any    `json:"type"`
				Description string `json:"description"`
			} `json:"properties"`
		}
		raw, _ := json.Marshal(tool.InputSchema)
		if err := json.Unmarshal(raw, &schema); err != nil {
			t.Fatal(err)
		}
		p, ok := schema.Properties["tone"]
		if !ok || p.Type != "string" || p.Description != "the report's tone: plain (the default) or formal" {
			t.Errorf("%s's schema does not offer tone: %s", tool.Name, raw)
		}
		for _, name := range []string{"question", "depth", "sources", "verify", "kind", "language", "collections", "review_plan", "review"} {
			if _, ok := schema.Properties[name]; !ok {
				t.Errorf("%s's schema lost %s: %s", tool.Name, name, raw)
			}
		}
		seen[tool.Name] = true
	}
	if !seen["research"] || !seen["start_research"] {
		t.Fatalf("tools seen: %v", seen)
	}

	// A value off its choices is bad input, answered before anything starts.
	res := h.call(ctx, "research", map[string]any{"question": question, "tone": "shouty"})
	if !res.IsError || !strings.Contains(text(res), `unknown --tone "shouty" (use plain or formal)`) {
		t.Errorf("tone shouty: isError %v, %q", res.IsError, text(res))
	}
	// A good one reaches the options (the depth refused after it is read).
	res = h.call(ctx, "start_research", map[string]any{"question": question, "tone": "formal", "depth": "bottomless"})
	if !res.IsError || tone != "formal" {
		t.Errorf("tone formal: isError %v, %q; the option holds %q", res.IsError, text(res), tone)
	}
}
