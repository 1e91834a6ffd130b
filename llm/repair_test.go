package llm

import (
	"encoding/json"
	"math"
	"testing"
)

func TestRepairJSON(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, in, want string }{
		{"valid unchanged", ` {"a":1} `, `{"a":1}`},
		{"fence", "```json\n{\"a\": 1}\n```", `{"a": 1}`},
		{"bare fence", "```\n[1, 2]\n```", `[1, 2]`},
		{"prose around", "Here you go: {\"a\": [1, 2]} Let me know!", `{"a": [1, 2]}`},
		{"trailing commas", `{"a": [1, 2, ], "b": {"c": 3,},}`, `{"a": [1, 2 ], "b": {"c": 3}}`},
		{"comma in string kept", `{"a": "x,}", }`, `{"a": "x,}" }`},
		{"think block", "<think>I think {\"no\": 1}</think>\n{\"yes\": 2}", `{"yes": 2}`},
		{"stray close think", "reasoning here {x}</think>{\"ok\": true}", `{"ok": true}`},
		{"citation bracket before object", "See [1] and [2]: {\"a\": {\"b\": [3]}}", `{"a": {"b": [3]}}`},
		{"cut off", `{"queries": ["a", "b`, `{"queries": ["a", "b"]}`},
		{"cut off after comma", `{"a": [1, 2,`, `{"a": [1, 2]}`},
		{"braces in strings", `text {"a": "}{", "b": "[\"]"} tail`, `{"a": "}{", "b": "[\"]"}`},
		{"no json", "no json here", "no json here"},
		{"array top level", "Results:\n[{\"t\": 1}, {\"t\": 2},]\n", `[{"t": 1}, {"t": 2}]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := RepairJSON(c.in)
			if got != c.want {
				t.Fatalf("RepairJSON(%q)\n got %q\nwant %q", c.in, got, c.want)
			}
			if c.name != "no json" && !json.Valid([]byte(got)) {
				t.Fatalf("not valid: %q", got)
			}
		})
	}
}

func TestStructuredDecodesOutOfRangeNumbers(t *testing.T) {
	t.Parallel()
	type answer struct {
		Score float64 `json:"score"`
		Tiny  float64 `json:"tiny"`
	}
	v, repaired, err := decodeStructured[answer](`{"score": 1e3599, "tiny": -2.5e-999}`, nil)
	if err != nil || !repaired {
		t.Fatalf("err %v repaired %v", err, repaired)
	}
	if v.Score != math.MaxFloat64 || v.Tiny != 0 {
		t.Errorf("got %+v", v)
	}
}
