//go:build unix

package pipeline_test

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user + system) this process has used: the
// benchmarks report it so that work done between model calls (reading
// PDFs above all) shows up even when it hides behind the model's time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
