package vectortest

import (
	"context"
	"testing"
)

// The checks the tests of store/vector and of store share, kept here once
// so the two packages' tests cannot drift apart. They take interfaces and
// type parameters instead of store/vector's types: store/vector's own
// (internal) tests import this package, so it cannot import store/vector.

// Waiter is an index whose background work (graph builds, file loads) can
// be waited for: vector.Index, and store.Index, which is the same type.
type Waiter interface {
	Wait(ctx context.Context) error
}

// WaitIdle waits until ix has no background work, so that a test asserts
// on a settled index rather than on one a build is still changing.
func WaitIdle(tb testing.TB, ix Waiter) {
	tb.Helper()
	if err := ix.Wait(context.Background()); err != nil {
		tb.Fatal(err)
	}
}

// Hit is the shape of vector.Hit (a chunk ID and its score), which this
// package cannot name: a type parameter constrained to it lets Recall read
// a hit's ID.
type Hit interface {
	~struct {
		ID    string
		Score float32
	}
}

// Searcher is an index's top-k search, as vector.Interface offers it.
type Searcher[H Hit] interface {
	Search(q []float32, k int) ([]H, error)
}

// Recall is the share of the exact top-k that ix also returns, over the
// queries qs: how the tests judge an approximate search against exact.
// Hits count by ID only, as scores may differ in the last bits.
func Recall[H Hit](tb testing.TB, ix, exact Searcher[H], qs [][]float32, k int) float64 {
	tb.Helper()
	id := func(h H) string {
		return struct {
			ID    string
			Score float32
		}(h).ID
	}
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
			in[id(h)] = true
		}
		for _, h := range want {
			if in[id(h)] {
				found++
			}
		}
		total += len(want)
	}
	return float64(found) / float64(total)
}

// SameHits fails the test unless got is want, hit for hit and in order
// (IDs and scores alike): for an index that must answer exactly as it did
// before, such as one saved and opened again.
func SameHits[H comparable](tb testing.TB, what string, got, want []H) {
	tb.Helper()
	if len(got) != len(want) {
		tb.Fatalf("%s: %d hits, want %d\n got %v\nwant %v", what, len(got), len(want), got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			tb.Fatalf("%s: hit %d = %+v, want %+v", what, i, got[i], want[i])
		}
	}
}

// Flip is a copy of b with the byte at at changed (b itself is left
// alone): the damage the tests of index files make, to see that a file's
// checksums catch it.
func Flip(b []byte, at int) []byte {
	c := append([]byte(nil), b...)
	c[at] ^= 0x5a
	return c
}
