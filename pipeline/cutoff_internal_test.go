package pipeline

import "testing"

// TestWhenAStragglerHoldsTheRun: a download holds its sub-question when the
// sub-question's other sources are analysed, and the whole run when it is
// the only source of its sub-question and everything else is done.
func TestWhenAStragglerHoldsTheRun(t *testing.T) {
	f := &gather{
		bySubQ:   map[string][]string{"q1": {"a"}, "q2": {"b", "c"}},
		claimed:  map[string]bool{"a": true, "b": true, "c": true},
		analyses: map[string]Analysis{"b": {}},
		skipped:  map[string]bool{},
	}
	if f.othersAnalysedLocked("c") != true {
		t.Error("c is all q2 waits for: it holds the sub-question")
	}
	if f.othersAnalysedLocked("a") {
		t.Error("a, alone in q1, held the run while c was still to analyse and research went on")
	}
	f.analyses["c"] = Analysis{}
	if f.othersAnalysedLocked("a") {
		t.Error("a held the run before research was over")
	}
	f.researchDone = true
	if !f.othersAnalysedLocked("a") {
		t.Error("a is the last thing the run waits for, yet gets no grace")
	}
}
