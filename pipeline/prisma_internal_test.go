package pipeline

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/researchtui/researchtui/pipeline/report"
)

// Whatever a run stored, however partial (runs from before the flow was
// recorded, works a reviewer's request found, analyses dropped), the
// flow's boxes add up and each work is counted once per stage.
func TestFlowAddsUpWhateverWasStored(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	reasons := []string{reasonQuota, reasonFarBelow, reasonRunCap, reasonNoText, reasonBelowFloor + " (0.21 < 0.30)"}
	for trial := range 500 {
		in := flowInput{read: map[string]bool{}, fullText: map[string]bool{}, analysed: map[string]bool{}, kept: map[string]bool{}, cited: map[string]bool{}}
		works := 1 + rng.IntN(40)
		for w := range works {
			key := fmt.Sprint("w", w)
			for range 1 + rng.IntN(3) { // a work may be a candidate of several sub-questions
				c := Candidate{Key: key, Score: rng.Float64(), Read: rng.IntN(3) == 0}
				if !c.Read {
					c.Reason = reasons[rng.IntN(len(reasons))]
					if rng.IntN(5) == 0 {
						c.Screen = "off topic: gpu hardware"
					}
				}
				in.candidates = append(in.candidates, c)
				if c.Read && rng.IntN(6) > 0 {
					in.read[key], in.fullText[key] = true, rng.IntN(2) == 0
					if rng.IntN(4) > 0 {
						in.analysed[key] = true
						if rng.IntN(4) > 0 {
							in.kept[key] = true
							in.cited[key] = rng.IntN(2) == 0
						}
					}
				}
			}
		}
		for range rng.IntN(3) { // a reviewer's request read a work no search ranked
			key := fmt.Sprint("extra", rng.IntN(5))
			in.read[key], in.analysed[key], in.kept[key], in.cited[key] = true, true, true, true
		}
		if rng.IntN(4) > 0 { // older runs recorded no identification counts
			for range 1 + rng.IntN(6) {
				in.identified = append(in.identified, report.RouteCount{Route: []string{"arxiv", "openalex", report.RouteChasing, originKnowledge}[rng.IntN(4)], Round: 1 + rng.IntN(2), Records: rng.IntN(30)})
			}
		}
		f := buildFlow(in)
		if err := f.Check(); err != nil {
			t.Fatalf("trial %d: %v\n%+v", trial, err, f)
		}
		cited := 0
		for _, v := range in.cited {
			if v {
				cited++
			}
		}
		if f.Included != cited {
			t.Fatalf("trial %d: %d included, %d cited", trial, f.Included, cited)
		}
	}
}

// Not-read reasons are counted without their figures, and the screen's
// off-topic verdicts are a reason of their own.
func TestFlowExclusionReasons(t *testing.T) {
	in := flowInput{read: map[string]bool{}, fullText: map[string]bool{}, analysed: map[string]bool{}, kept: map[string]bool{}, cited: map[string]bool{}}
	in.candidates = []Candidate{
		{Key: "a", Reason: reasonBelowFloor + " (0.21 < 0.30)"},
		{Key: "b", Reason: reasonBelowFloor + " (0.11 < 0.30)"},
		{Key: "c", Reason: reasonQuota, Screen: "off topic: gpu hardware"},
		{Key: "d", Read: true},
	}
	in.read["d"], in.analysed["d"] = true, true
	f := buildFlow(in)
	want := []report.FlowReason{{Reason: "below the relevance floor", Count: 2}, {Reason: "off topic (relevance screen)", Count: 1}}
	if fmt.Sprint(f.ExcludedWhy) != fmt.Sprint(want) {
		t.Errorf("excluded %v, want %v", f.ExcludedWhy, want)
	}
	if fmt.Sprint(f.ReportsWhy) != fmt.Sprint([]report.FlowReason{{Reason: report.WhyLowConfidence, Count: 1}}) || f.Included != 0 {
		t.Errorf("reports excluded %v, included %d", f.ReportsWhy, f.Included)
	}
}
