// Command helper is the extractor side of scripts/pdfbench. It reads PDF
// paths from stdin, one a line, extracts each with search.PDFPagesWithin of
// the revision it is built in, and writes one JSON line per file. pdfbench
// builds it from the working tree (tag pdfbench_new, which also times the
// start of the PDF reader) and copies it into a git worktree of an older
// revision to build the old extractor. It uses nothing but PDFPagesWithin,
// which both revisions have.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/researchtui/researchtui/search"
)

type result struct {
	Path   string  `json:"path,omitempty"`
	Pages  int     `json:"pages"`
	Text   string  `json:"text,omitempty"` // pages joined by \f
	Millis float64 `json:"ms"`
	CPU    float64 `json:"cpu_ms"` // the process's CPU time for this file: unlike wall time, not inflated by a busy machine
	Err    string  `json:"err,omitempty"`
	Start  bool    `json:"start,omitempty"` // the reader's start-up, not a file
}

func main() {
	timeout := flag.Duration("timeout", 60*time.Second, "deadline per document")
	flag.Parse()
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	if d, ok, err := start(); ok {
		r := result{Start: true, Millis: ms(d)}
		if err != nil {
			r.Err = err.Error()
		}
		enc.Encode(r)
		out.Flush()
	}
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		path := strings.TrimSpace(sc.Text())
		if path == "" {
			continue
		}
		r := result{Path: path}
		data, err := os.ReadFile(path)
		if err != nil {
			r.Err = err.Error()
			enc.Encode(r)
			continue
		}
		t0, c0 := time.Now(), cpuTime()
		pages, err := search.PDFPagesWithin(data, *timeout)
		r.Millis, r.CPU = ms(time.Since(t0)), ms(cpuTime()-c0)
		r.Pages = len(pages)
		r.Text = strings.Join(pages, "\f")
		if err != nil {
			r.Err = err.Error()
		}
		if err := enc.Encode(r); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		out.Flush()
	}
}

// cpuTime is the CPU time (user + system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
