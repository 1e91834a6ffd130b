// Command mcpsoak holds `researchtui mcp --http` under an hour of steady use
// on loopback (issue 29's soak): researchers start runs in a fast fake world
// and follow them to their end, watchers list, read and subscribe, and
// abandoners open sessions and walk away. Every -sample it prints the
// server's goroutines, Go heap, resident memory, file descriptors and
// threads; at the end it restarts the server on the same data dir and checks
// that every session a client saw finish is stored as it saw it.
//
//	go build -o /tmp/rt . && go build -o /tmp/fakeserve ./tools/fakeserve
//	go run ./tools/mcpsoak -researchtui /tmp/rt -fakeserve /tmp/fakeserve -duration 1h
//
// It is not a test: it runs for as long as it is told, and its figures are
// judged by a person (a plateau, not a bound). scripts/mcp-soak.sh builds
// and runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync"
	"time"
)

func main() {
	bin := flag.String("researchtui", "", "the researchtui binary to serve MCP")
	fake := flag.String("fakeserve", "", "the tools/fakeserve binary (the fake model and sources)")
	duration := flag.Duration("duration", time.Hour, "how long the clients work")
	researchers := flag.Int("researchers", 4, "clients that start runs and follow them to their end")
	watchers := flag.Int("watchers", 4, "clients that list sessions, read them and subscribe to reports")
	abandoners := flag.Int("abandoners", 2, "clients that open HTTP sessions and never close them")
	abandonEvery := flag.Duration("abandon-every", time.Second, "how often each abandoner opens a session")
	pause := flag.Duration("pause", 2*time.Second, "a researcher's pause between runs")
	sample := flag.Duration("sample", 30*time.Second, "how often the server is measured")
	flag.Parse()
	if *bin == "" || *fake == "" {
		fmt.Fprintln(os.Stderr, "mcpsoak: -researchtui and -fakeserve are required (scripts/mcp-soak.sh builds both)")
		os.Exit(2)
	}
	w, err := startWorld(*bin, *fake)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpsoak:", err)
		os.Exit(1)
	}
	defer w.close()

	ctx, stop := context.WithTimeout(context.Background(), *duration)
	defer stop()
	led := &ledger{}
	var wg sync.WaitGroup
	for i := 0; i < *researchers; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); research(ctx, w.url(), i, *pause, led) }()
	}
	for i := 0; i < *watchers; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); watch(ctx, w.url(), led) }()
	}
	for i := 0; i < *abandoners; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); abandon(ctx, w.url(), *abandonEvery, led) }()
	}
	samples := sampleUntil(ctx, w, *sample, led)
	wg.Wait()
	final := w.measure()
	fmt.Printf("clients stopped: %s\n", final)

	fmt.Println(led.summary())
	fmt.Println(plateau(samples))
	if err := w.restart(); err != nil {
		fmt.Fprintln(os.Stderr, "mcpsoak: restarting the server:", err)
		os.Exit(1)
	}
	lost := verify(w.url(), led)
	if lost > 0 {
		fmt.Printf("FAIL: %d session(s) not stored as their client saw them\n", lost)
		os.Exit(1)
	}
	fmt.Println("every session a client saw end is stored as it saw it")
}
