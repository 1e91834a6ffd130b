package llm

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzRepairJSON: a model's answer is outside bytes. Repair never panics,
// leaves valid JSON as it is, and when it claims a result, that result is
// what a parser will then read.
//
//	go test -run '^$' -fuzz FuzzRepairJSON -fuzztime 30s ./llm/
func FuzzRepairJSON(f *testing.F) {
	for _, s := range []string{
		`{"a": 1}`,
		"```json\n{\"title\": \"x\", \"sub_questions\": [{\"question\": \"q\"},]}\n```",
		`<think>plan it</think>{"approved": true, "requests": [`,
		`Sure! Here is the JSON: {"confidence": 1e3599, "key_findings": ["a", "b"]} Hope this helps.`,
		`{"quotes": [{"chunk_id": "arxiv:1#0", "text": "unterminated`,
		`]]]}}}{{{[[[`,
		strings.Repeat("{", 200),
		`{"nested": {"deep": [1, 2, {"x": "y"}]}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := RepairJSON(s)
		if trimmed := strings.TrimSpace(s); json.Valid([]byte(trimmed)) && out != trimmed {
			t.Errorf("valid JSON %q came back changed: %q", trimmed, out)
		}
	})
}
