package cli

import (
	"strings"
	"testing"

	"github.com/researchtui/researchtui/llm/ollamafake"
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

// A run asked to search sources this researchtui cannot search says what
// each needs (as doctor does), not that the build lacks them (issue 36 #6).
func TestRunSaysWhatOffSourcesNeed(t *testing.T) {
	_, c, _ := fakeWorld(t, ollamafake.Options{})
	_, stderr, code, _ := c.run("run", "--depth", "quick", "--sources", "arxiv,materials,web", "How is software testing studied?")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"not searched: materials (needs MP_API_KEY", "web (no engine: set RESEARCHTUI_SEARXNG_URL"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "this build") {
		t.Errorf("stderr blames the build:\n%s", stderr)
	}
}
