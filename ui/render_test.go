package ui

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/researchtui/researchtui/themes"
)

// TestRenderDoesNotBlockLookups: while a renderer is busy (its lock held,
// as during a long glamour render), cache lookups and renders at other
// widths go on; renders of the same width wait their turn.
func TestRenderDoesNotBlockLookups(t *testing.T) {
	st := themes.Build(themes.Resolve("dark", true), false)
	r := newMDRenderer()
	md := fixtureReport().Markdown
	done := renderKey{id: "s4", width: 60, theme: "dark"}
	if _, err := r.render(done, md, st.Markdown); err != nil {
		t.Fatal(err)
	}

	busy := renderKey{id: "s4", width: 70, theme: "dark"}
	tr, _ := r.renderer(busy)
	tr.mu.Lock() // a render in progress at width 70

	within := func(what string, f func()) {
		t.Helper()
		ch := make(chan struct{})
		go func() { f(); close(ch) }()
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s waited on a render in progress", what)
		}
	}
	within("a cache lookup", func() {
		if _, ok := r.cached(done); !ok {
			t.Error("cached rendering missing")
		}
		if _, ok := r.cached(busy); ok {
			t.Error("nothing rendered at width 70 yet")
		}
	})
	within("a render at another width", func() {
		if _, err := r.render(renderKey{id: "s4", width: 80, theme: "dark"}, md, st.Markdown); err != nil {
			t.Error(err)
		}
	})

	same := make(chan string, 1)
	go func() {
		out, _ := r.render(busy, md, st.Markdown)
		same <- out
	}()
	select {
	case <-same:
		t.Fatal("a render of the busy renderer must wait its turn")
	case <-time.After(50 * time.Millisecond):
	}
	tr.mu.Unlock()
	if out := <-same; !strings.Contains(out, "Perovskite") {
		t.Errorf("render after waiting: %q", out)
	}
}

// TestRenderConcurrent hammers the cache from many goroutines (run with
// -race): overlapping renders of the same and different keys, lookups and
// invalidations.
func TestRenderConcurrent(t *testing.T) {
	st := themes.Build(themes.Resolve("dark", true), false)
	r := newMDRenderer()
	md := fixtureReport().Markdown
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			k := renderKey{id: "s4", width: 40 + i%4*10, theme: "dark"}
			out, err := r.render(k, md, st.Markdown)
			if err != nil || out == "" {
				t.Errorf("render %v: %v", k, err)
			}
			r.cached(k)
			if i%5 == 0 {
				r.invalidate()
			}
		})
	}
	wg.Wait()
	if len(r.results) > maxRendered || len(r.order) != len(r.results) {
		t.Errorf("cache bookkeeping: %d results, %d ordered", len(r.results), len(r.order))
	}
}
