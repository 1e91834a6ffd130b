package cli

import (
	"testing"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/history"
)

// sessions show says what was decided on each review round and the note
// typed with it (issue 36 #4).
func TestDecisionLineShowsTheNote(t *testing.T) {
	d := history.SessionDetail{Reviews: []pipeline.ReviewRequest{{Requests: make([]pipeline.RevisionRequest, 3)}}}
	got := decisionLine(d, 0, pipeline.Decision{Approve: true, Accepted: []string{"a", "b"}, Note: "cut the\nbackground"})
	if got != `2 of 3 requests accepted; note: "cut the background"` {
		t.Errorf("decision line %q", got)
	}
	if got := decisionLine(d, 1, pipeline.Decision{}); got != "revisions rejected" {
		t.Errorf("rejected: %q", got)
	}
}
