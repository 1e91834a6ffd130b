package vector

import (
	"testing"

	"github.com/researchtui/researchtui/store/vector/vectortest"
)

// Helpers of the tests: filling an index from a data set, and the recall
// of an approximate search against an exact one.

func fill(tb testing.TB, ix Interface, d vectortest.Dataset) {
	tb.Helper()
	for i := range d.IDs {
		if err := ix.Add(d.IDs[i], d.Vecs[i]); err != nil {
			tb.Fatal(err)
		}
	}
}

// recall is the share of the exact top-k that ix also returns.
func recall(tb testing.TB, ix, exact Interface, qs [][]float32, k int) float64 {
	tb.Helper()
	found, total := 0, 0
	for _, q := range qs {
		want, err := exact.Search(q, k)
		if err != nil {
			tb.Fatal(err)
		}
		got, err := ix.Search(q, k)
		if err != nil {
			tb.Fatal(err)
		}
		in := map[string]bool{}
		for _, h := range got {
			in[h.ID] = true
		}
		for _, h := range want {
			if in[h.ID] {
				found++
			}
		}
		total += len(want)
	}
	return float64(found) / float64(total)
}
