//go:build pdfbench_new

package main

import (
	"time"

	"github.com/researchtui/researchtui/search"
)

// start starts the PDF reader before the first file, so its start-up
// (compiling pdfium, or loading it from the cache) is timed apart.
func start() (time.Duration, bool, error) {
	d, err := search.StartPDFReader()
	return d, true, err
}
