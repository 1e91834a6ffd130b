package eval_test

import (
	"context"
	"testing"

	"github.com/researchtui/researchtui/pipeline/eval"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
)

// TestUnfoundedClaimsAreAbsent: no recorded work of its world states any
// question's unfounded claim, and every question has some.
func TestUnfoundedClaimsAreAbsent(t *testing.T) {
	t.Parallel()
	qs, _ := eval.Select("all")
	for _, q := range qs {
		w, err := eval.Open(context.Background(), q.World)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range q.UnfoundedClaims() {
			for _, p := range w.Papers {
				if eval.States(p.Title+". "+p.Abstract, eval.Fact{Words: u.Words}) {
					t.Errorf("%s/%s: %q states %q", q.ID, u.ID, p.Title, u.Words)
				}
			}
		}
		w.Close()
		if len(q.UnfoundedClaims()) < 3 {
			t.Errorf("%s: %d unfounded claims, want 3 or more", q.ID, len(q.UnfoundedClaims()))
		}
	}
}

// A report that states what no source says is counted, cited or not; the
// same report without it is not; the careful scripted model states none.
func TestScoreCountsUnfoundedClaims(t *testing.T) {
	t.Parallel()
	w := openWorld(t)
	q := eval.TuringTest
	clean := eval.Score(q, w, handReport("GPT-4.5 was judged to be the human 73% of the time [1]."), nil)
	if clean.Unfounded != 0 {
		t.Errorf("a sourced report: %+v", clean)
	}
	r := eval.Score(q, w, handReport("GPT-4.5 was judged to be the human 73% of the time [1]. "+
		"Chatbots have competed for the Loebner Prize since 1991.\n\nIn later tests GPT-4 convinced 90% of judges [1]."), nil)
	if r.Unfounded != 2 || len(r.UnfoundedStated) != 2 || r.UnfoundedStated[0] != "loebner" || r.UnfoundedStated[1] != "gpt4-90" {
		t.Errorf("two unfounded claims: %d %v", r.Unfounded, r.UnfoundedStated)
	}
	careful := runScripted(t, func(eval.Question) *pipelinetest.Script {
		return &pipelinetest.Script{RevisionRounds: 1}
	}).Overall
	if careful.Unfounded != 0 {
		t.Errorf("the careful scripted model states %.1f unfounded claims per run", careful.Unfounded)
	}
}
