package pipeline_test

import (
	"os"
	"testing"

	"github.com/researchtui/researchtui/testkit"
)

// TestMain runs 4 of the package's parallel tests at once: each drives a
// run through fake servers with real delays, so much of its time is
// waiting.
func TestMain(m *testing.M) {
	testkit.WaitingTestsInParallel(8)
	os.Exit(m.Run())
}
