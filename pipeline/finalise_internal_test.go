package pipeline

import "testing"

// One citation taken out is one, in the warning (issue 47: "1 citations").
func TestRemovedCitationsWording(t *testing.T) {
	if got := removedCitations(1); got != "1 citation pointed to a source that was not retrieved and was removed" {
		t.Errorf("one: %q", got)
	}
	if got := removedCitations(3); got != "3 citations pointed to sources that were not retrieved and were removed" {
		t.Errorf("three: %q", got)
	}
}
