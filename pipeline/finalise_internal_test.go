package pipeline

import (
	"testing"

	"github.com/researchtui/researchtui/search"
)

// One citation taken out is one, in the warning (issue 47: "1 citations").
func TestRemovedCitationsWording(t *testing.T) {
	if got := removedCitations(1); got != "1 citation pointed to a source that was not retrieved and was removed" {
		t.Errorf("one: %q", got)
	}
	if got := removedCitations(3); got != "3 citations pointed to sources that were not retrieved and were removed" {
		t.Errorf("three: %q", got)
	}
}

// A plan waiting for the person is not called the reviewer's (trial: the
// headless line said "reviewer: 0 revision requests (round 0)").
func TestPlanReviewLine(t *testing.T) {
	plan := Event{Type: ReviewRequested, Review: &ReviewRequest{Plan: &Plan{}, Summary: "3 sub-questions, searching arxiv"}}
	if got := plan.Summary(); got != "  planner: the plan waits for you (3 sub-questions, searching arxiv)" {
		t.Errorf("plan review: %q", got)
	}
	one := Event{Type: ReviewRequested, Review: &ReviewRequest{Round: 1, Requests: []RevisionRequest{{ID: "r1"}}}}
	if got := one.Summary(); got != "  reviewer: 1 revision request (round 1)" {
		t.Errorf("review: %q", got)
	}
}

// A title that ends a sentence itself is not given a second stop (issue
// 46: "Does GPT-4 pass the Turing test?. We evaluated…").
func TestAbstractTextEndsTheTitleOnce(t *testing.T) {
	for title, want := range map[string]string{
		"Does GPT-4 pass the Turing test?": "Does GPT-4 pass the Turing test? We evaluated GPT-4.",
		"Neural Turing Machines":           "Neural Turing Machines. We evaluated GPT-4.",
		"A survey.":                        "A survey. We evaluated GPT-4.",
	} {
		if got := abstractText(search.Record{Title: title, Abstract: "We evaluated GPT-4."}); got != want {
			t.Errorf("%q: %q", title, got)
		}
	}
}
