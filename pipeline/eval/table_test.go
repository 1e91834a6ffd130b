package eval_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/researchtui/researchtui/pipeline/eval"
)

// twoRuns is an eval of two questions, two runs each, one of which failed.
func twoRuns() eval.Summary {
	rs := []eval.Result{
		{Question: "turing-test", Run: 1, Recall: 0.5, Precision: 0.9, Facts: 5, FactsCovered: 3, SupportedShare: 0.8, GeneratedTokens: 2000, WallSeconds: 60, FailedCalls: 1, Session: "01tmp"},
		{Question: "turing-test", Run: 2, Recall: 0.6, Precision: 1, Facts: 5, FactsCovered: 4, SupportedShare: 0.9, GeneratedTokens: 2200, WallSeconds: 62},
		{Question: "turing-complete", Run: 1, Recall: 0.4, Precision: 1, Facts: 4, FactsCovered: 2, SupportedShare: 1, GeneratedTokens: 1500, WallSeconds: 40},
		{Question: "turing-complete", Run: 2, Error: "the model answered none of its 12 chat calls"},
	}
	sum := eval.Summary{Model: "qwen3:8b", Backend: "ollama", EmbedModel: "nomic-embed-text", World: eval.WorldName, Judge: eval.Judge, Threshold: eval.SupportThreshold, Results: rs}
	sum.Overall = eval.Total(rs)
	return sum
}

// TestTheTableFitsATerminal (issue 47 #2): the default table fits 80
// columns with a row per question, shows the spread between runs ("3/5
// in one eval, 4/5 in the next" was invisible), and names failed runs;
// --wide keeps every figure of every run.
func TestTheTableFitsATerminal(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	if err := eval.WriteTable(&b, twoRuns()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, l := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(l); n > 80 {
			t.Errorf("a line of %d columns: %q", n, l)
		}
	}
	for _, want := range []string{"turing-test", "0.55±.07", "0.70±.14", "turing-complete", "1 of 4 runs failed", "turing-complete run 2: the model answered none"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "turing-test ") != 1 {
		t.Errorf("not one row per question:\n%s", out)
	}
	var wide strings.Builder
	if err := eval.WriteWideTable(&wide, twoRuns()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(wide.String(), "unanswered") || strings.Count(wide.String(), "turing-test") != 2 {
		t.Errorf("the wide table:\n%s", wide.String())
	}
}

// TestJSONNamesAreTheTables: the JSON says "unanswered" as the table
// does, and no session ID of a temporary store that no command can open.
func TestJSONNamesAreTheTables(t *testing.T) {
	t.Parallel()
	raw, err := json.Marshal(twoRuns())
	if err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	if !strings.Contains(s, `"unanswered":1`) || strings.Contains(s, "failed_calls") || strings.Contains(s, "01tmp") {
		t.Errorf("the JSON: %s", s)
	}
}

// TestComparisonDiffersByTheFiguresShown: B − A is taken from the rounded
// figures the table shows ("0.55 0.45 -0.10", never "-0.09").
func TestComparisonDiffersByTheFiguresShown(t *testing.T) {
	t.Parallel()
	a, b := eval.Summary{Model: "a"}, eval.Summary{Model: "b"}
	a.Overall.Recall, b.Overall.Recall = 0.546, 0.454
	var out strings.Builder
	if err := eval.WriteComparison(&out, a, b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "0.55  0.45  -0.10") {
		t.Errorf("the comparison:\n%s", out.String())
	}
}
