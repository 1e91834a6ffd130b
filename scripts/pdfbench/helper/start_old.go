//go:build !pdfbench_new

package main

import "time"

// start: the old extractor has nothing to start.
func start() (time.Duration, bool, error) { return 0, false, nil }
