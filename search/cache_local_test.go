package search

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestDiskCache(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		if r.URL.Query().Get("q") == "bad" {
			w.WriteHeader(500)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"q":"` + r.URL.Query().Get("q") + `","key":"` + r.Header.Get("X-Api-Key") + `"}`))
	}))
	dir := t.TempDir()
	c := NewClient(ClientOptions{CacheDir: dir, CacheMaxAge: time.Hour, Retries: -1})
	ctx := context.Background()
	get := func(q, key string) (*Response, error) {
		return c.Get(ctx, srv.URL+"/x?q="+q, http.Header{"X-Api-Key": {key}})
	}
	r1, err := get("a", "k1")
	if err != nil {
		t.Fatal(err)
	}
	r2, err := get("a", "k1")
	if err != nil || string(r2.Body) != string(r1.Body) || r2.Header.Get("X-Researchtui-Cache") != "hit" || r2.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("second answer: %v %q %v", err, r2.Body, r2.Header)
	}
	if n.Load() != 1 {
		t.Errorf("%d requests for the same URL", n.Load())
	}
	// another header value is another entry; keys never appear in the files
	if r, _ := get("a", "k2"); !strings.Contains(string(r.Body), "k2") || n.Load() != 2 {
		t.Errorf("header not in the cache key: %q", r.Body)
	}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, _ error) error {
		if !d.IsDir() && strings.Contains(d.Name(), "k1") {
			t.Errorf("key in a file name: %s", p)
		}
		return nil
	})
	// errors are not cached
	get("bad", "")
	get("bad", "")
	if n.Load() != 4 {
		t.Errorf("errors cached: %d requests", n.Load())
	}
	// a new client on the same dir (a re-run) needs no network...
	srv.Close()
	c2 := NewClient(ClientOptions{CacheDir: dir, CacheMaxAge: time.Hour, Retries: -1})
	if r, err := c2.Get(ctx, srv.URL+"/x?q=a", http.Header{"X-Api-Key": {"k1"}}); err != nil || !strings.Contains(string(r.Body), `"q":"a"`) {
		t.Fatalf("offline re-run: %v", err)
	}
	// ...and an expired entry is still used when the network is down
	c3 := NewClient(ClientOptions{CacheDir: dir, CacheMaxAge: time.Nanosecond, Retries: -1})
	time.Sleep(2 * time.Millisecond)
	if r, err := c3.Get(ctx, srv.URL+"/x?q=a", http.Header{"X-Api-Key": {"k1"}}); err != nil || !strings.Contains(string(r.Body), `"q":"a"`) {
		t.Fatalf("stale fallback: %v", err)
	}
	// an expired entry is refreshed when the network answers
	var m atomic.Int32
	srv2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { m.Add(1); w.Write([]byte("v")) }))
	defer srv2.Close()
	c4 := NewClient(ClientOptions{CacheDir: dir, CacheMaxAge: 10 * time.Millisecond})
	c4.Get(ctx, srv2.URL, nil)
	c4.Get(ctx, srv2.URL, nil)
	time.Sleep(20 * time.Millisecond)
	c4.Get(ctx, srv2.URL, nil)
	if m.Load() != 2 {
		t.Errorf("expiry: %d requests, want 2", m.Load())
	}
}

func TestFetchDocumentsAreCached(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Write([]byte("A plain text document about lattices."))
	}))
	dir := t.TempDir()
	f := NewFetcher(NewClient(ClientOptions{CacheDir: dir}), FetchOptions{AllowPrivate: true})
	for range 2 {
		if doc, err := f.Fetch(context.Background(), srv.URL+"/doc.txt"); err != nil || doc.Text != "A plain text document about lattices." {
			t.Fatal(doc, err)
		}
	}
	srv.Close()
	f2 := NewFetcher(NewClient(ClientOptions{CacheDir: dir}), FetchOptions{AllowPrivate: true})
	if _, err := f2.Fetch(context.Background(), srv.URL+"/doc.txt"); err != nil || n.Load() != 1 {
		t.Errorf("offline browse: %v, %d requests", err, n.Load())
	}
	// the guard still refuses loopback by default, cache or not
	f3 := NewFetcher(NewClient(ClientOptions{CacheDir: dir}), FetchOptions{})
	if _, err := f3.Fetch(context.Background(), srv.URL+"/doc.txt"); !errors.Is(err, ErrBlockedAddress) {
		t.Errorf("cached loopback document served without permission: %v", err)
	}
}

func TestFetchRedirectTo127RefusedByDefault(t *testing.T) {
	t.Parallel()
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("internal secret")) }))
	defer target.Close()
	f := NewFetcher(testClient(), FetchOptions{})
	// the first hop itself is loopback: refused before any connection
	if _, err := f.Fetch(context.Background(), target.URL); !errors.Is(err, ErrBlockedAddress) {
		t.Fatalf("loopback fetched: %v", err)
	}
	if _, err := f.Fetch(context.Background(), "http://localhost:1/x"); !errors.Is(err, ErrBlockedAddress) {
		t.Fatalf("localhost fetched: %v", err)
	}
}

func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadLocalFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	md := writeFile(t, dir, "notes.md", []byte("# Bethe lattice notes\n\nQuantum criticality on a Bethe lattice. Large connectivity.\n"))
	doc, rec, err := ReadLocalFile(md)
	if err != nil || rec.Title != "Bethe lattice notes" || rec.Source != "local" || rec.Key != LocalKey(md) || len(doc.Pages) != 1 || !strings.Contains(rec.Abstract, "Quantum criticality") {
		t.Fatalf("md: %+v %v", rec, err)
	}
	html := writeFile(t, dir, "page.html", []byte(`<html><head><title>Lattice page</title></head><body><nav>Home About Login</nav><article>`+
		strings.Repeat("<p>Readable text about lattices and criticality, long enough to be the main content of the page.</p>", 5)+`</article></body></html>`))
	if _, rec, err := ReadLocalFile(html); err != nil || rec.Title != "Lattice page" {
		t.Errorf("html: %+v %v", rec, err)
	}
	txt := writeFile(t, dir, "a.txt", []byte("plain words"))
	if _, rec, err := ReadLocalFile(txt); err != nil || rec.Title != "a" {
		t.Errorf("txt: %+v %v", rec, err)
	}
	for name, data := range map[string][]byte{
		"empty.md":   {},
		"blank.txt":  []byte(" \n\t\n"),
		"binary.txt": {0x7f, 'E', 'L', 'F', 0, 0, 1, 2},
		"fake.pdf":   []byte("not a pdf at all"),
		"broken.pdf": []byte("%PDF-1.4 garbage"),
		"image.png":  {0x89, 'P', 'N', 'G'},
	} {
		p := writeFile(t, dir, name, data)
		_, _, err := ReadLocalFile(p)
		if err == nil {
			t.Errorf("%s accepted", name)
			continue
		}
		t.Logf("%-11s skipped: %v", name, err)
	}
	latin := writeFile(t, dir, "latin1.txt", []byte("caf\xe9 \xe0 la cr\xe8me"))
	if doc, _, err := ReadLocalFile(latin); err != nil || doc.Text != "café à la crème" {
		t.Errorf("latin-1 text: %q %v", doc.Text, err)
	}
	if _, _, err := ReadLocalFile(filepath.Join(dir, "empty.md")); !errors.Is(err, ErrEmptyFile) {
		t.Errorf("empty: %v", err)
	}
	if _, _, err := ReadLocalFile(filepath.Join(dir, "image.png")); !errors.Is(err, ErrUnsupportedType) {
		t.Errorf("png: %v", err)
	}
	pdf, err := os.ReadFile("../../shared/fixtures/pdf/arxiv-1111.2011v2.pdf")
	if err != nil {
		t.Skip("PDF fixture absent")
	}
	p := writeFile(t, dir, "paper.pdf", pdf)
	doc, rec, err = ReadLocalFile(p)
	if err != nil || len(doc.Pages) != 8 || !strings.Contains(rec.Title, "Quantum Criticality") {
		t.Fatalf("pdf: %q pages %d %v", rec.Title, len(doc.Pages), err)
	}
}

func TestLocalSourceKeywordSearch(t *testing.T) {
	t.Parallel()
	docs := []LocalDoc{
		{Record: Record{Key: "local:1", Source: "local", Title: "Bethe lattice notes", Path: "/a/notes.md"}, Text: "Quantum criticality on Bethe lattices with large connectivity."},
		{Record: Record{Key: "local:2", Source: "local", Title: "Cooking", Path: "/a/food.txt"}, Text: "Recipes for bread and soup. A lattice pie crust."},
		{Record: Record{Key: "local:3", Source: "local", Title: "Graph theory", Path: "/a/graphs.md"}, Text: "Trees, Bethe lattice as an infinite tree, connectivity of graphs."},
	}
	calls := 0
	src := NewLocal(func() ([]LocalDoc, error) { calls++; return docs, nil })
	recs, err := src.Search(context.Background(), "quantum criticality Bethe lattice", 5)
	if err != nil || len(recs) == 0 || recs[0].Key != "local:1" {
		t.Fatalf("search: %+v %v", recs, err)
	}
	for _, r := range recs {
		if r.Key == "local:2" {
			t.Error("a document matching one word of four was returned")
		}
	}
	if recs, _ := src.Search(context.Background(), "sourdough fermentation", 5); len(recs) != 0 {
		t.Errorf("unrelated: %v", recs)
	}
	if calls != 1 {
		t.Errorf("corpus read %d times", calls)
	}
	failing := NewLocal(func() ([]LocalDoc, error) { return nil, errors.New("store closed") })
	if _, err := failing.Search(context.Background(), "lattice criticality", 5); err == nil {
		t.Error("error hidden")
	}
}

// TestFreshAnswersAskTheNetwork: a living review's update asks the API
// again though its answer is cached and young, and the new answer
// replaces the cached one; when the API then fails, the update's request
// fails (an old answer would pass for "nothing new") while others are
// still served from the cache.
func TestFreshAnswersAskTheNetwork(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	var down atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			w.WriteHeader(503)
			return
		}
		fmt.Fprintf(w, "answer %d", n.Add(1))
	}))
	defer srv.Close()
	c := NewClient(ClientOptions{CacheDir: t.TempDir(), CacheMaxAge: time.Hour, Retries: -1})
	get := func(ctx context.Context) string {
		r, err := c.Get(ctx, srv.URL+"/works?search=x", nil)
		if err != nil {
			t.Fatal(err)
		}
		return string(r.Body)
	}
	ctx := context.Background()
	if a, b := get(ctx), get(ctx); a != "answer 1" || b != "answer 1" {
		t.Fatalf("cached answers %q %q", a, b)
	}
	if got := get(WithFreshAnswers(ctx)); got != "answer 2" {
		t.Errorf("a fresh request got %q from the cache", got)
	}
	if got := get(ctx); got != "answer 2" {
		t.Errorf("the fresh answer did not replace the cached one: %q", got)
	}
	down.Store(true)
	if r, err := c.Get(WithFreshAnswers(ctx), srv.URL+"/works?search=x", nil); err == nil {
		t.Errorf("with the API down, a fresh request got %q", r.Body)
	}
	if got := get(ctx); got != "answer 2" {
		t.Errorf("with the API down, a plain request got %q, not the cached answer", got)
	}
}
