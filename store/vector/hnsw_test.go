package vector

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"

	"github.com/researchtui/researchtui/store/vector/vectortest"
)

// graphIndex is an Index that walks its graph from the first vector.
func graphIndex(dim int) *Index {
	return New(dim, Options{SwitchAt: 1, Seed: 42})
}

// The recall an approximate index must reach against exact search, on
// data shaped like embeddings (clusters of various size and spread), and
// on uniform random vectors, where every distance is alike and any graph
// index does worst.
func TestHNSWRecallAgainstExact(t *testing.T) {
	t.Parallel()
	n := 20000
	if testing.Short() || raceOn {
		n = 3000
	}
	type gen interface {
		Data(int) vectortest.Dataset
		Queries(int) [][]float32
	}
	for _, tc := range []struct {
		name string
		gen  gen
		dim  int
		ef   int
		want float64
	}{
		{"topics", vectortest.NewTopics(3, 128, 60), 128, 0, 0.95},
		{"clusters", vectortest.NewClustered(1, 64, 80), 64, 0, 0.95},
		{"uniform", nil, 32, 200, 0.9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d vectortest.Dataset
			var qs [][]float32
			if tc.gen != nil {
				d, qs = tc.gen.Data(n), tc.gen.Queries(200)
			} else {
				d = vectortest.Gaussian(5, n, tc.dim)
				qs = vectortest.Gaussian(6, 200, tc.dim).Vecs
			}
			ix := graphIndex(tc.dim)
			defer ix.Close()
			ex := NewExact(tc.dim)
			fill(t, ix, d)
			fill(t, ex, d)
			vectortest.WaitIdle(t, ix)
			ix.opt.EfSearch = max(tc.ef, ix.opt.EfSearch)
			r := vectortest.Recall(t, ix, ex, qs, 10)
			t.Logf("recall@10 = %.4f over %d vectors (ef %d)", r, n, ix.opt.EfSearch)
			if r < tc.want {
				t.Fatalf("recall@10 = %.3f, want ≥ %.2f", r, tc.want)
			}
		})
	}
}

// On small collections the graph finds exactly what exact search finds, in
// the same order.
func TestHNSWSameTop10AsExactOnSmallSets(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ n, dim int }{{1, 4}, {11, 3}, {300, 16}, {1000, 64}} {
		t.Run(fmt.Sprintf("n%d_d%d", tc.n, tc.dim), func(t *testing.T) {
			g := vectortest.NewClustered(uint64(tc.n), tc.dim, 5)
			d := g.Data(tc.n)
			ix := graphIndex(tc.dim)
			defer ix.Close()
			ex := NewExact(tc.dim)
			fill(t, ix, d)
			fill(t, ex, d)
			for i, q := range g.Queries(100) {
				want, _ := ex.Search(q, 10)
				got, err := ix.Search(q, 10)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(want) {
					t.Fatalf("query %d: %d hits, want %d", i, len(got), len(want))
				}
				for j := range want {
					if got[j].ID != want[j].ID || math.Abs(float64(got[j].Score-want[j].Score)) > 1e-6 {
						t.Fatalf("query %d hit %d = %+v, want %+v", i, j, got[j], want[j])
					}
				}
			}
		})
	}
}

// The heaps are what broke github.com/coder/hnsw (its Max took the last
// array slot): the max-heap must pop in descending order and the min-heap's
// root must be the minimum, whatever the insertion order.
func TestHeapMaxIsTheMax(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 1))
	for round := 0; round < 200; round++ {
		n := 1 + r.IntN(300)
		var mx maxHeap
		var mn minHeap
		var all []float32
		for i := 0; i < n; i++ {
			s := float32(r.IntN(50)) / 7 // repeats on purpose
			mx.push(cand{s, uint32(i)})
			mn.push(cand{s, uint32(i)})
			all = append(all, s)
			lo, hi := all[0], all[0]
			for _, v := range all {
				lo, hi = min(lo, v), max(hi, v)
			}
			if mx.top().sim != hi || mn.top().sim != lo {
				t.Fatalf("after %d pushes: max-heap top %v (max %v), min-heap top %v (min %v)", i+1, mx.top().sim, hi, mn.top().sim, lo)
			}
		}
		sort.Slice(all, func(i, j int) bool { return all[i] > all[j] })
		for i, want := range all {
			if got := mx.pop().sim; got != want {
				t.Fatalf("max-heap pop %d = %v, want %v", i, got, want)
			}
		}
		for i := len(all) - 1; i >= 0; i-- {
			if got := mn.pop().sim; got != all[i] {
				t.Fatalf("min-heap pop = %v, want %v", got, all[i])
			}
		}
		// A bounded result set keeps exactly the k best.
		var best minHeap
		k := 1 + r.IntN(20)
		for i, v := range all {
			best.offer(cand{v, uint32(i)}, k)
		}
		var kept []float32
		for best.len() > 0 {
			kept = append(kept, best.pop().sim)
		}
		for i, v := range kept {
			if want := all[min(k, len(all))-1-i]; v != want {
				t.Fatalf("offer kept %v, want the %d best of %v", kept, k, all)
			}
		}
	}
}

// Re-adding a key replaces its vector (coder/hnsw panicked): the old vector
// is never returned again and the count does not grow.
func TestHNSWReAddReplaces(t *testing.T) {
	t.Parallel()
	const dim = 24
	g := vectortest.NewClustered(9, dim, 10)
	d := g.Data(1500)
	ix := graphIndex(dim)
	defer ix.Close()
	fill(t, ix, d)
	for round := 0; round < 3; round++ { // the same keys, again and again
		for i := 0; i < 500; i++ {
			nv := make([]float32, dim)
			for j := range nv {
				nv[j] = -d.Vecs[i][j]
			}
			if round%2 == 1 {
				copy(nv, d.Vecs[i])
			}
			if err := ix.Add(d.IDs[i], nv); err != nil {
				t.Fatal(err)
			}
		}
	}
	vectortest.WaitIdle(t, ix)
	if ix.Len() != 1500 {
		t.Fatalf("Len = %d after re-adding, want 1500", ix.Len())
	}
	// After three rounds the first 500 point away from where they were.
	for i := 0; i < 500; i += 7 {
		hits, err := ix.Search(d.Vecs[i], 5)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			if h.ID == d.IDs[i] {
				t.Fatalf("%s found by its old vector: %v", h.ID, hits)
			}
		}
		neg := make([]float32, dim)
		for j := range neg {
			neg[j] = -d.Vecs[i][j]
		}
		hits, _ = ix.Search(neg, 1)
		if len(hits) != 1 || hits[0].ID != d.IDs[i] || hits[0].Score < 0.9999 {
			t.Fatalf("new vector of %s not found: %v", d.IDs[i], hits)
		}
	}
	ex := NewExact(dim)
	fill(t, ex, d)
	for i := 0; i < 500; i++ {
		nv := make([]float32, dim)
		for j := range nv {
			nv[j] = -d.Vecs[i][j]
		}
		ex.Add(d.IDs[i], nv)
	}
	if r := vectortest.Recall(t, ix, ex, g.Queries(100), 10); r < 0.95 {
		t.Fatalf("recall after replacing a third = %.3f", r)
	}
}

// Adding the vector an ID already has changes nothing: a catch-up with the
// store and the writer that committed the vector may both add it, and the
// second add must leave neither a tombstone nor a second node to link.
func TestReAddingTheSameVectorChangesNothing(t *testing.T) {
	t.Parallel()
	const dim = 16
	d := vectortest.NewClustered(3, dim, 5).Data(300)
	ix := graphIndex(dim)
	defer ix.Close()
	if err := ix.AddBatch(d.IDs, d.Vecs); err != nil {
		t.Fatal(err)
	}
	vectortest.WaitIdle(t, ix)
	if err := ix.AddBatch(d.IDs, d.Vecs); err != nil {
		t.Fatal(err)
	}
	ix.Add(d.IDs[0], d.Vecs[0])
	vectortest.WaitIdle(t, ix)
	if st := ix.Status(); st.Vectors != 300 || st.Nodes != 300 || st.Tombstones != 0 {
		t.Fatalf("after adding the same vectors again: %+v", st)
	}
	// Another vector under an ID still replaces it.
	ix.Add(d.IDs[0], d.Vecs[1])
	if st := ix.Status(); st.Vectors != 300 || st.Nodes != 301 || st.Tombstones != 1 {
		t.Fatalf("after replacing one vector: %+v", st)
	}
}

// Removed vectors are never returned, the graph stays searchable after
// most of it is removed (tombstones and repair), and a graph emptied
// entirely takes new vectors (coder/hnsw crashed there).
func TestHNSWRemove(t *testing.T) {
	t.Parallel()
	const dim = 32
	g := vectortest.NewTopics(4, dim, 20)
	d := g.Data(4000)
	ix := graphIndex(dim)
	defer ix.Close()
	ex := NewExact(dim)
	fill(t, ix, d)
	fill(t, ex, d)
	r := rand.New(rand.NewPCG(2, 2))
	removed := map[string]bool{}
	for _, i := range r.Perm(len(d.IDs))[:3000] {
		if !ix.Remove(d.IDs[i]) || !ex.Remove(d.IDs[i]) {
			t.Fatalf("Remove(%s) = false", d.IDs[i])
		}
		removed[d.IDs[i]] = true
	}
	if ix.Remove(d.IDs[0]) && removed[d.IDs[0]] {
		t.Fatal("a second Remove reported true")
	}
	vectortest.WaitIdle(t, ix)
	if ix.Len() != 1000 {
		t.Fatalf("Len = %d, want 1000", ix.Len())
	}
	for _, q := range g.Queries(100) {
		hits, _ := ix.Search(q, 10)
		for _, h := range hits {
			if removed[h.ID] {
				t.Fatalf("removed %s returned", h.ID)
			}
		}
	}
	if got := vectortest.Recall(t, ix, ex, g.Queries(200), 10); got < 0.95 {
		t.Fatalf("recall after removing 75%% = %.3f", got)
	}
	st := ix.Status()
	t.Logf("after removing 3000 of 4000: %+v", st)

	for _, id := range d.IDs {
		ix.Remove(id)
	}
	if ix.Len() != 0 {
		t.Fatalf("Len = %d after removing everything", ix.Len())
	}
	if hits, err := ix.Search(d.Vecs[0], 3); err != nil || len(hits) != 0 {
		t.Fatalf("empty graph search = %v %v", hits, err)
	}
	fresh := g.Data(50)
	for i := range fresh.IDs {
		if err := ix.Add("new-"+fresh.IDs[i], fresh.Vecs[i]); err != nil {
			t.Fatal(err)
		}
	}
	for i := range fresh.IDs {
		hits, err := ix.Search(fresh.Vecs[i], 1)
		if err != nil || len(hits) != 1 || hits[0].ID != "new-"+fresh.IDs[i] {
			t.Fatalf("after emptying, %s not found: %v %v", fresh.IDs[i], hits, err)
		}
	}
}

// Searches run while vectors are added, replaced and removed (run with
// -race): every hit is a vector that was added, in order, and the index is
// whole afterwards.
func TestHNSWConcurrentUse(t *testing.T) {
	t.Parallel()
	const dim = 16
	g := vectortest.NewClustered(11, dim, 12)
	n := 3000
	if raceOn {
		n = 1200
	}
	d := g.Data(n)
	qs := g.Queries(50)
	for _, opt := range []Options{{SwitchAt: 1, Seed: 3}, {SwitchAt: n / 4, Seed: 3, Workers: 2}} {
		t.Run(fmt.Sprintf("switch_at_%d", opt.SwitchAt), func(t *testing.T) {
			ix := New(dim, opt)
			defer ix.Close()
			known := map[string]bool{}
			for _, id := range d.IDs {
				known[id] = true
			}
			var wg sync.WaitGroup
			for w := 0; w < 3; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					for i := w; i < len(d.IDs); i += 3 {
						if err := ix.Add(d.IDs[i], d.Vecs[i]); err != nil {
							t.Error(err)
							return
						}
						if i%10 == 0 { // replace one, remove another
							ix.Add(d.IDs[i/2], d.Vecs[i])
							ix.Remove(d.IDs[i/3])
						}
					}
				}(w)
			}
			stop := make(chan struct{})
			var readers sync.WaitGroup
			for w := 0; w < 3; w++ {
				readers.Add(1)
				go func(w int) {
					defer readers.Done()
					for i := 0; ; i++ {
						select {
						case <-stop:
							return
						default:
						}
						hits, err := ix.Search(qs[(i+w)%len(qs)], 8)
						if err != nil {
							t.Error(err)
							return
						}
						for j, h := range hits {
							if !known[h.ID] || j > 0 && h.Score > hits[j-1].Score {
								t.Errorf("bad hits %v", hits)
								return
							}
						}
						ix.Status()
					}
				}(w)
			}
			wg.Wait()
			close(stop)
			readers.Wait()
			vectortest.WaitIdle(t, ix)
			if st := ix.Status(); st.Graph && st.Linked != st.Nodes {
				t.Fatalf("graph incomplete after Wait: %+v", st)
			}
			// Which of a replaced and a removed key survived depends on the
			// interleaving; compare with exact search over what the index
			// holds now, and check every held vector finds itself.
			ref := NewExact(dim)
			ix.mu.RLock()
			for id, node := range ix.pos {
				ref.Add(id, ix.vec(node))
			}
			ix.mu.RUnlock()
			if ref.Len() != ix.Len() {
				t.Fatalf("Len %d, but %d IDs are held", ix.Len(), ref.Len())
			}
			if r := vectortest.Recall(t, ix, ref, qs, 8); r < 0.95 {
				t.Fatalf("recall after concurrent use = %.3f", r)
			}
		})
	}
}

// A collection that grows past the switch point builds its graph in the
// background; searches meanwhile are answered (the unlinked tail exactly)
// and afterwards walk the graph.
func TestIndexSwitchesToGraphInBackground(t *testing.T) {
	t.Parallel()
	const dim = 48
	g := vectortest.NewTopics(8, dim, 30)
	n, switchAt := 5000, 2000
	if raceOn {
		n, switchAt = 2000, 800
	}
	d := g.Data(n)
	ix := New(dim, Options{SwitchAt: switchAt, Seed: 1})
	defer ix.Close()
	ex := NewExact(dim)
	fill(t, ex, d)
	for i := range d.IDs {
		if err := ix.Add(d.IDs[i], d.Vecs[i]); err != nil {
			t.Fatal(err)
		}
		if i == switchAt-2 && ix.Status().Graph {
			t.Fatal("graph built below the switch point")
		}
		if i%500 == 0 {
			// Whatever the build has linked so far, the vector just
			// added is found.
			hits, err := ix.Search(d.Vecs[i], 1)
			if err != nil || len(hits) == 0 || hits[0].ID != d.IDs[i] {
				t.Fatalf("vector %d not found during the build: %v %v", i, hits, err)
			}
		}
	}
	vectortest.WaitIdle(t, ix)
	st := ix.Status()
	if !st.Graph || st.Linked != st.Nodes || st.Phase != "" {
		t.Fatalf("status after the build = %+v", st)
	}
	if r := vectortest.Recall(t, ix, ex, g.Queries(200), 10); r < 0.95 {
		t.Fatalf("recall = %.3f", r)
	}
}
