package history

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/store"
)

// readByStore holds n finished sessions; session i read "k<i%7>" and
// "common", and ranked "k<i%7+1>" without reading it.
func readByStore(t testing.TB, n int) (*store.Store, []string) {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "r.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var ids []string
	for i := range n {
		sess := &store.Session{Question: "q", Status: store.StatusCompleted, CreatedAt: base.Add(time.Duration(i) * time.Minute)}
		if err := st.CreateSession(sess); err != nil {
			t.Fatal(err)
		}
		cands := []pipeline.Candidate{{Key: fmt.Sprint("k", i%7), Read: true}, {Key: "common", Read: true}, {Key: fmt.Sprint("k", i%7+1)}}
		raw, _ := json.Marshal(cands)
		if err := st.PutCheckpoint(sess.ID, pipeline.CheckpointCandidates, raw); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, sess.ID)
	}
	return st, ids
}

// ReadBy names the sessions that read a key, newest first, the same on a
// second call (from its cache), and sees a session's candidates change
// when the session is updated (a follow-up).
func TestReadByFollowsUpdates(t *testing.T) {
	t.Parallel()
	st, ids := readByStore(t, 20)
	want := func() map[string][]string {
		return map[string][]string{"k3": {ids[17], ids[10], ids[3]}, "k8": nil}
	}
	for range 2 {
		got, err := ReadBy(st, []string{"k3", "k8"})
		if err != nil || !reflect.DeepEqual(got["k3"], want()["k3"]) || len(got["k8"]) != 0 {
			t.Fatalf("read by %v %v", got, err)
		}
	}
	raw, _ := json.Marshal([]pipeline.Candidate{{Key: "k8", Read: true}})
	if err := st.PutCheckpoint(ids[3], pipeline.CheckpointCandidates, raw); err != nil {
		t.Fatal(err)
	}
	if _, err := st.UpdateSession(ids[3], func(s *store.Session) error { s.UpdatedAt = time.Now(); return nil }); err != nil {
		t.Fatal(err)
	}
	got, _ := ReadBy(st, []string{"k3", "k8"})
	if !reflect.DeepEqual(got["k3"], []string{ids[17], ids[10]}) || !reflect.DeepEqual(got["k8"], []string{ids[3]}) {
		t.Errorf("after a follow-up: %v", got)
	}
}

// BenchmarkReadBy: one knowledge search's "read by" over 2,000 sessions,
// once the sessions' read sets are known (every call after the first).
func BenchmarkReadBy(b *testing.B) {
	st, _ := readByStore(b, 2000)
	if _, err := ReadBy(st, []string{"common"}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if got, _ := ReadBy(st, []string{"common", "k1"}); len(got["common"]) != 2000 {
			b.Fatal(len(got["common"]))
		}
	}
}
