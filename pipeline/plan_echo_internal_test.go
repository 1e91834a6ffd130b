package pipeline

import (
	"fmt"
	"testing"
)

// A planner that answers with its own instructions, or with sub-questions
// about something else, gives no plan (issue 47 #14); a plan about the
// question, in other words or another language's spelling, is one.
func TestPlanEcho(t *testing.T) {
	system := fmt.Sprintf(plannerSystem, 2, 4)
	q := "How do large language models perform in Turing tests against humans?"
	plan := func(subs ...string) *Plan {
		p := &Plan{CanonicalTerm: "turing test"}
		for _, s := range subs {
			p.SubQuestions = append(p.SubQuestions, SubQuestion{Question: s, Queries: Queries{Moderate: keywords(s, 3)}})
		}
		return p
	}
	for _, bad := range []*Plan{
		plan("You are the planning agent of a research assistant that searches scholarly databases?", "How do chatbots fool judges?"),
		plan("Which queries use no boolean operators, no quotes and key terms?"),
		func() *Plan { p := plan("What grows in alpine meadows?"); p.CanonicalTerm = "botany"; return p }(),
	} {
		if planEcho(bad, q, system) == nil {
			t.Errorf("taken as a plan: %+v", bad.SubQuestions)
		}
	}
	german := plan("How does humidity affect perovskite solar cell stability?")
	german.CanonicalTerm = "perovskite solar cells"
	if err := planEcho(german, "Wie beeinflusst Feuchtigkeit die Stabilität von Perowskit-Solarzellen?", system); err != nil {
		t.Errorf("an English plan for a German question: %v", err)
	}
	for _, good := range []*Plan{
		plan("How often do judges mistake GPT-4 for a person?", "What makes a conversation seem human?"),
		func() *Plan { p := plan("Wie bestehen Sprachmodelle den Turing-Test?"); p.CanonicalTerm = ""; return p }(),
	} {
		if err := planEcho(good, q, system); err != nil {
			t.Errorf("%+v: %v", good.SubQuestions, err)
		}
	}
}
