package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sort"
	"strings"
	"time"
)

// sampleUntil measures the server every `every` until ctx ends, printing
// each measurement with the runs ended so far.
func sampleUntil(ctx context.Context, w *world, every time.Duration, led *ledger) []measurement {
	start := time.Now()
	var out []measurement
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		m := w.measure()
		m.at = time.Since(start)
		out = append(out, m)
		led.mu.Lock()
		ended, errs := len(led.ended), len(led.errors)
		led.mu.Unlock()
		fmt.Printf("%s  runs ended %4d  errors %d\n", m, ended, errs)
		select {
		case <-ctx.Done():
			return out
		case <-tick.C:
		}
	}
}

// plateau compares the second quarter of the samples with the last: a
// leak grows from one to the other; a plateau does not. (The first
// quarter is the warm-up: caches, the store's first pages.)
func plateau(samples []measurement) string {
	if len(samples) < 8 {
		return "too few samples to judge a plateau (run longer or sample more often)"
	}
	q := len(samples) / 4
	second, last := samples[q:2*q], samples[len(samples)-q:]
	var b strings.Builder
	b.WriteString("second quarter → last quarter (medians):")
	row := func(name string, f func(measurement) float64, slack float64) {
		a, z := median(second, f), median(last, f)
		verdict := "plateau"
		if z > a*1.2 && z-a > slack {
			verdict = "GROWS"
		}
		fmt.Fprintf(&b, "\n  %-10s %8.1f → %8.1f  %s", name, a, z, verdict)
	}
	row("goroutines", func(m measurement) float64 { return float64(m.goroutines) }, 20)
	row("heap MB", func(m measurement) float64 { return m.heapMB }, 10)
	row("fds", func(m measurement) float64 { return float64(m.fds) }, 10)
	row("threads", func(m measurement) float64 { return float64(m.threads) }, 4)
	row("rss MB", func(m measurement) float64 { return m.rssMB }, 20)
	b.WriteString("\n  (rss counts the store's mapped file, which grows with the sessions kept)")
	return b.String()
}

func median(ms []measurement, f func(measurement) float64) float64 {
	v := make([]float64, len(ms))
	for i, m := range ms {
		v[i] = f(m)
	}
	sort.Float64s(v)
	return v[len(v)/2]
}

// verify reads every session a client saw end from the restarted server
// and counts those whose status or report differ from what was seen.
func verify(url string, led *ledger) int {
	ctx := context.Background()
	cs, err := connect(ctx, url, nil)
	if err != nil {
		fmt.Println("verify: connect:", err)
		return len(led.ended)
	}
	defer cs.Close()
	lost := 0
	for id, s := range led.ended {
		var v sessionView
		if err := call(ctx, cs, "get_session", map[string]any{"id": id}, &v); err != nil {
			fmt.Printf("  %s: %v\n", id, err)
			lost++
			continue
		}
		if v.Session.Status != s.status || sha256.Sum256([]byte(v.Report)) != s.report {
			fmt.Printf("  %s: seen %s, stored %s (report same: %v)\n", id, s.status, v.Session.Status, sha256.Sum256([]byte(v.Report)) == s.report)
			lost++
		}
	}
	fmt.Printf("verified %d sessions after a restart\n", len(led.ended))
	return lost
}
