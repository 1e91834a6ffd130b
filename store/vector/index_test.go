package vector

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"

	"github.com/researchtui/researchtui/store/vector/vectortest"
)

// bruteForce is the reference: full cosine per pair in float64, no
// pre-normalisation, no heap.
func bruteForce(ids []string, vecs [][]float32, q []float32, k int) []Hit {
	cos := func(a, b []float32) float64 {
		var dot, na, nb float64
		for i := range a {
			dot += float64(a[i]) * float64(b[i])
			na += float64(a[i]) * float64(a[i])
			nb += float64(b[i]) * float64(b[i])
		}
		return dot / math.Sqrt(na*nb)
	}
	hits := make([]Hit, len(ids))
	for i := range ids {
		hits[i] = Hit{ID: ids[i], Score: float32(cos(vecs[i], q))}
	}
	sort.Slice(hits, func(i, j int) bool { return better(hits[i], hits[j]) })
	if k < len(hits) {
		hits = hits[:k]
	}
	return hits
}

func TestIndexMatchesBruteForce(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct{ n, dim, k int }{{1, 4, 5}, {50, 3, 10}, {1000, 64, 10}, {2000, 768, 25}} {
		t.Run(fmt.Sprintf("n%d_d%d_k%d", tc.n, tc.dim, tc.k), func(t *testing.T) {
			idx := New(tc.dim, Options{})
			ids := make([]string, tc.n)
			vecs := make([][]float32, tc.n)
			for i := range ids {
				ids[i] = fmt.Sprintf("c%05d", i)
				vecs[i] = vectortest.RandVec(r, tc.dim)
				if err := idx.Add(ids[i], vecs[i]); err != nil {
					t.Fatal(err)
				}
			}
			for qi := 0; qi < 20; qi++ {
				q := vectortest.RandVec(r, tc.dim)
				got, err := idx.Search(q, tc.k)
				if err != nil {
					t.Fatal(err)
				}
				want := bruteForce(ids, vecs, q, tc.k)
				if len(got) != len(want) {
					t.Fatalf("len %d, want %d", len(got), len(want))
				}
				for i := range want {
					// Float32 SIMD and float64 reference can differ in the
					// last bits; IDs must still match unless scores tie.
					if got[i].ID != want[i].ID && math.Abs(float64(got[i].Score-want[i].Score)) > 1e-5 {
						t.Fatalf("hit %d = %+v, want %+v", i, got[i], want[i])
					}
					if math.Abs(float64(got[i].Score-want[i].Score)) > 1e-4 {
						t.Fatalf("hit %d score %v, want %v", i, got[i].Score, want[i].Score)
					}
				}
			}
		})
	}
}

func TestIndexDimensionMismatch(t *testing.T) {
	t.Parallel()
	idx := New(3, Options{})
	if err := idx.Add("a", []float32{1, 2}); !errors.Is(err, ErrDimension) {
		t.Fatalf("Add wrong dim err = %v", err)
	}
	if err := idx.Add("a", []float32{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := idx.Search([]float32{1, 2, 3, 4}, 1); !errors.Is(err, ErrDimension) {
		t.Fatalf("Search wrong dim err = %v", err)
	}
	// Dimension learned from the first vector.
	lazy := New(0, Options{})
	if err := lazy.Add("x", []float32{1, 0}); err != nil || lazy.Dim() != 2 {
		t.Fatalf("lazy dim = %d %v", lazy.Dim(), err)
	}
	if err := lazy.Add("y", []float32{1, 0, 0}); !errors.Is(err, ErrDimension) {
		t.Fatalf("lazy mismatch err = %v", err)
	}
	if err := idx.Add("z", []float32{0, 0, 0}); err == nil {
		t.Fatal("zero vector accepted")
	}
	if err := idx.Add("n", []float32{float32(math.NaN()), 0, 0}); err == nil {
		t.Fatal("NaN vector accepted")
	}
	if hits, err := New(3, Options{}).Search([]float32{1, 0, 0}, 5); err != nil || len(hits) != 0 {
		t.Fatalf("empty index search = %v %v", hits, err)
	}
}

func TestIndexReplaceAndRemove(t *testing.T) {
	t.Parallel()
	idx := New(2, Options{})
	idx.Add("a", []float32{1, 0})
	idx.Add("b", []float32{0, 1})
	idx.Add("c", []float32{-1, 0})
	if err := idx.Add("a", []float32{0, -5}); err != nil {
		t.Fatal(err)
	}
	if idx.Len() != 3 {
		t.Fatalf("Len after re-add = %d", idx.Len())
	}
	hits, _ := idx.Search([]float32{0, -1}, 1)
	if hits[0].ID != "a" || math.Abs(float64(hits[0].Score-1)) > 1e-6 {
		t.Fatalf("replaced vector not used: %v", hits)
	}
	hits, _ = idx.Search([]float32{1, 0}, 3)
	for _, h := range hits {
		if h.ID == "a" && h.Score > 0.1 {
			t.Fatalf("old vector of a still present: %v", hits)
		}
	}
	if !idx.Remove("a") || idx.Remove("a") || idx.Len() != 2 {
		t.Fatal("Remove")
	}
	hits, _ = idx.Search([]float32{-1, 0}, 5)
	if len(hits) != 2 || hits[0].ID != "c" || hits[1].ID != "b" {
		t.Fatalf("after remove: %v", hits)
	}
}

func TestIndexConcurrentAddSearch(t *testing.T) {
	t.Parallel()
	const dim = 32
	idx := New(dim, Options{})
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 9))
			for i := 0; i < 300; i++ {
				// Overlapping IDs exercise replace under contention.
				if err := idx.Add(fmt.Sprintf("id%d", (w*300+i)%700), vectortest.RandVec(r, dim)); err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for i := 0; i < 300; i++ {
				hits, err := idx.Search(vectortest.RandVec(r, dim), 5)
				if err != nil {
					t.Error(err)
					return
				}
				for j := 1; j < len(hits); j++ {
					if hits[j].Score > hits[j-1].Score {
						t.Errorf("hits not sorted: %v", hits)
						return
					}
				}
			}
		}(w)
	}
	wg.Wait()
	if idx.Len() != 700 {
		t.Fatalf("Len = %d, want 700", idx.Len())
	}
}

func BenchmarkIndexSearch10k768(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	idx := New(768, Options{})
	for i := 0; i < 10000; i++ {
		if err := idx.Add(fmt.Sprintf("src#%06d", i), vectortest.RandVec(r, 768)); err != nil {
			b.Fatal(err)
		}
	}
	qs := make([][]float32, 64)
	for i := range qs {
		qs[i] = vectortest.RandVec(r, 768)
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := idx.Search(qs[i%len(qs)], 10); err != nil {
			b.Fatal(err)
		}
	}
}
