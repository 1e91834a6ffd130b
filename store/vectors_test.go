package store

import (
	"context"
	"testing"

	"github.com/researchtui/researchtui/store/vector"
)

// Helpers of the tests of the store's vector indexes (the vectors come
// from store/vector/vectortest; the index's own tests are in store/vector).

func waitIdle(t testing.TB, ix *Index) {
	t.Helper()
	if err := ix.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// recall is the share of the exact top-k that ix also returns.
func recall(tb testing.TB, ix, exact vector.Interface, qs [][]float32, k int) float64 {
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

func sameHits(t *testing.T, what string, got, want []Hit) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d hits, want %d\n got %v\nwant %v", what, len(got), len(want), got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s: hit %d = %+v, want %+v", what, i, got[i], want[i])
		}
	}
}

func flip(b []byte, at int) []byte {
	c := append([]byte(nil), b...)
	c[at] ^= 0x5a
	return c
}
