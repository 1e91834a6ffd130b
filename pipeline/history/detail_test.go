package history

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/store"
)

// What the person did with the plan shows before the run has a report
// (cancelled, failed, or waiting for its review), not only after it: the
// report carries it once written, the checkpoint until then.
func TestDetailOfAnUnfinishedRunHasItsPlanReview(t *testing.T) {
	t.Parallel()
	st, sess := cancelledSession(t)
	raw, _ := json.Marshal(pipeline.PlanReview{Deleted: []string{"q2"}, Added: []string{"What else?"}, Sources: []string{"arxiv"}})
	if err := st.PutCheckpoint(sess.ID, pipeline.CheckpointPlanReview, raw); err != nil {
		t.Fatal(err)
	}
	d, err := LoadDetail(st, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.PlanReview == nil || !slices.Equal(d.PlanReview.Deleted, []string{"q2"}) || !slices.Equal(d.PlanReview.Added, []string{"What else?"}) {
		t.Errorf("plan review of an unfinished run: %+v", d.PlanReview)
	}
}

// The note a person typed with a review decision is kept with it and
// shown even before the run has a report: read from the decision
// checkpoints (a finished run's report carries its decisions) (issue 36
// #4).
func TestDetailKeepsTheReviewNote(t *testing.T) {
	t.Parallel()
	st, sess := cancelledSession(t)
	for i, d := range []pipeline.Decision{{Approve: true, Accepted: []string{"r1"}, Note: "shorten the background"}, {Approve: false}} {
		raw, _ := json.Marshal(d)
		if err := st.PutCheckpoint(sess.ID, fmt.Sprintf("decision/%d", i+1), raw); err != nil {
			t.Fatal(err)
		}
	}
	d, err := LoadDetail(st, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Decisions) != 2 || d.Decisions[0].Note != "shorten the background" || d.Decisions[1].Approve {
		t.Fatalf("decisions of an unfinished run: %+v", d.Decisions)
	}
	out, _ := json.Marshal(d)
	if !strings.Contains(string(out), `"note":"shorten the background"`) {
		t.Errorf("sessions show --json lacks the note: %s", out)
	}
}

// cancelledSession is a store holding one cancelled session, as a run
// stopped before its report leaves it.
func cancelledSession(t *testing.T) (*store.Store, *store.Session) {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "d.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	sess := &store.Session{Question: "Why?", Status: store.StatusCancelled}
	if err := st.CreateSession(sess); err != nil {
		t.Fatal(err)
	}
	return st, sess
}
