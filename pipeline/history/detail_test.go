package history

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/store"
)

// What the person did with the plan shows before the run has a report
// (cancelled, failed, or waiting for its review), not only after it: the
// report carries it once written, the checkpoint until then.
func TestDetailOfAnUnfinishedRunHasItsPlanReview(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "d.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sess := &store.Session{Question: "Why?", Status: store.StatusCancelled}
	if err := st.CreateSession(sess); err != nil {
		t.Fatal(err)
	}
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
