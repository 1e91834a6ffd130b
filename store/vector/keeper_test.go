package vector

import (
	"slices"
	"testing"

	"github.com/researchtui/researchtui/store/vector/vectortest"
)

// A catch-up makes the index hold exactly what its keeper holds, reads a
// vector only where the content changed, and keeps a node added by Add in
// place when it holds the keeper's vector (the store's catch-up depends on
// all three: store/indexstore.go).
func TestCatchupFollowsTheKeeper(t *testing.T) {
	t.Parallel()
	g := vectortest.NewTopics(1, 16, 4)
	d := g.Data(300)
	type chunk struct {
		fp  uint64
		vec []float32
	}
	kept := map[string]chunk{}
	for i, id := range d.IDs {
		kept[id] = chunk{uint64(i + 1), d.Vecs[i]}
	}
	ix := New(0, Options{SwitchAt: -1})
	defer ix.Close()
	reads := 0
	catchUp := func() {
		t.Helper()
		reads = 0
		cu := ix.Catchup()
		var ids []string
		for id := range kept {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for n, id := range ids {
			c := kept[id]
			cu.Chunk([]byte(id), c.fp, func() []float32 { reads++; return c.vec })
			if n%64 == 63 {
				if err := cu.Flush(); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := cu.Flush(); err != nil {
			t.Fatal(err)
		}
		cu.Finish()
	}
	catchUp()
	if ix.Len() != 300 || reads != 300 {
		t.Fatalf("from empty: %d vectors, %d read; want 300 and 300", ix.Len(), reads)
	}
	catchUp()
	if st := ix.Status(); reads != 0 || st.Nodes != 300 {
		t.Fatalf("nothing changed, yet %d read and %+v", reads, st)
	}

	changed := g.Next()
	kept[d.IDs[0]] = chunk{1000, changed} // new content
	delete(kept, d.IDs[1])                // gone
	kept[d.IDs[2]] = chunk{1002, nil}     // new content, not embedded yet
	kept["new"] = chunk{1003, g.Next()}
	v := g.Next()
	if err := ix.Add("added", v); err != nil { // as a writer adds what it just committed
		t.Fatal(err)
	}
	kept["added"] = chunk{1004, v}
	catchUp()
	if reads != 4 {
		t.Fatalf("%d vectors read, want the 4 whose content the index lacked", reads)
	}
	if st := ix.Status(); st.Vectors != 300 || st.Nodes != 303 {
		t.Fatalf("after the catch-up: %+v; want 300 vectors in 303 nodes (one changed, one added, one new)", st)
	}
	for id, want := range map[string]bool{d.IDs[0]: true, d.IDs[1]: false, d.IDs[2]: false, "new": true, "added": true, d.IDs[3]: true} {
		if ix.Has(id) != want {
			t.Errorf("Has(%s) = %v, want %v", id, !want, want)
		}
	}
	if hits, err := ix.Search(changed, 1); err != nil || len(hits) != 1 || hits[0].ID != d.IDs[0] || hits[0].Score < 0.9999 {
		t.Fatalf("the changed vector is not found: %v %v", hits, err)
	}
	catchUp()
	if reads != 1 {
		t.Fatalf("%d vectors read once in step; want only the one not embedded yet", reads)
	}
}
