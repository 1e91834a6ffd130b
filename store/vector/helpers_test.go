package vector

import (
	"testing"

	"github.com/researchtui/researchtui/store/vector/vectortest"
)

// Helpers of the tests: filling an index from a data set. The checks the
// store's tests share (WaitIdle, Recall, SameHits, Flip) are in vectortest.

func fill(tb testing.TB, ix Interface, d vectortest.Dataset) {
	tb.Helper()
	for i := range d.IDs {
		if err := ix.Add(d.IDs[i], d.Vecs[i]); err != nil {
			tb.Fatal(err)
		}
	}
}
