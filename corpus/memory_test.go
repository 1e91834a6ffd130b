package corpus_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/researchtui/researchtui/corpus"
	"github.com/researchtui/researchtui/search/bib"
	"github.com/researchtui/researchtui/store"
)

// countingStore keeps nothing: what an import itself holds is what is
// measured, not a store in memory.
type countingStore struct {
	memStore
	batches, chunks atomic.Int64
}

func (c *countingStore) PutSourceBatch(items []store.SourceBatch) error {
	c.batches.Add(int64(len(items)))
	for _, it := range items {
		c.chunks.Add(int64(len(it.Chunks)))
	}
	return nil
}
func (c *countingStore) PutChunks(string, []store.Chunk) error                    { return nil }
func (c *countingStore) Chunks(string) ([]store.Chunk, error)                     { return nil, nil }
func (c *countingStore) Source(string) ([]byte, bool, error)                      { return nil, false, nil }
func (c *countingStore) MissingEmbeddings(_ string, h []string) ([]string, error) { return h, nil }
func (c *countingStore) PutEmbeddings(string, map[string][]float32) error         { return nil }
func (c *countingStore) Index(string) (*store.Index, error)                       { return nil, nil }

// generatedLibrary is n items as a Zotero export has them: title, three
// authors, an abstract of some 1,200 bytes, tags and collections; one in
// ten lists a PDF that is not on this disk.
func generatedLibrary(n int, dir string) []bib.Item {
	words := strings.Fields("lattice phonon spin liquid superconductor entropy graph transformer attention protein " +
		"folding catalyst climate ocean sediment galaxy neutrino quantum criticality scattering")
	items := make([]bib.Item, n)
	for i := range items {
		var abs strings.Builder
		for j := 0; abs.Len() < 1200; j++ {
			abs.WriteString(words[(i*7+j*13)%len(words)])
			abs.WriteString(" ")
			if j%11 == 10 {
				fmt.Fprintf(&abs, "(%d.%d). ", i, j)
			}
		}
		it := bib.Item{ID: fmt.Sprintf("K%07d", i), Type: "article-journal", Title: fmt.Sprintf("On %s and %s, part %d", words[i%len(words)], words[(i/3)%len(words)], i),
			Authors: []bib.Name{{Family: "Lee", Given: "Bo"}, {Family: "Müller", Given: "Anna"}, {Family: fmt.Sprintf("Author%d", i)}},
			Year:    1990 + i%35, Venue: "Journal of " + words[i%len(words)], Abstract: abs.String(),
			Tags: []string{"to read", words[i%len(words)]}, Collections: []string{"Thesis", "Thesis/Chapter " + fmt.Sprint(i%9)}}
		if i%10 == 0 {
			it.Files = []string{filepath.Join(dir, "storage", it.ID, "paper.pdf")}
		}
		items[i] = it
	}
	return items
}

// BenchmarkImportLibrary100k imports a generated library of 100,000 items
// (abstracts, one in ten with a missing PDF) into a store that keeps
// nothing, embedding every chunk with a fake, and reports the peak of the
// live heap (sampled every 20 ms) and the wall time. The items themselves
// (what the library reader hands over) are in the heap before it starts.
//
//	go test -run '^$' -bench ImportLibrary100k -benchtime 1x ./corpus/
func BenchmarkImportLibrary100k(b *testing.B) {
	for range b.N {
		dir := b.TempDir()
		items := generatedLibrary(100_000, dir)
		st := &countingStore{memStore: *newMemStore()}
		opt := corpus.Options{Manifest: filepath.Join(dir, "corpus.json"), Store: st,
			Embedder: &corpus.Embedder{Model: "m", Parallel: 2, Embed: func(_ context.Context, texts []string) ([][]float32, error) {
				out := make([][]float32, len(texts))
				for i := range out {
					out[i] = []float32{1, 0}
				}
				return out, nil
			}}}
		runtime.GC()
		base := liveHeap()
		peak := atomic.Uint64{}
		stop := make(chan struct{})
		sampled := make(chan struct{})
		go func() {
			defer close(sampled)
			t := time.NewTicker(20 * time.Millisecond)
			defer t.Stop()
			for {
				if h := liveHeap(); h > peak.Load() {
					peak.Store(h)
				}
				select {
				case <-stop:
					return
				case <-t.C:
				}
			}
		}()
		t0 := time.Now()
		res, err := corpus.ImportLibrary(context.Background(), opt, corpus.Library{Name: "zotero", Kind: "zotero", Origin: dir, Items: items})
		wall := time.Since(t0)
		close(stop)
		<-sampled
		if err != nil || res.Added != len(items) {
			b.Fatalf("%+v %v", res, err)
		}
		b.ReportMetric(float64(peak.Load())/(1<<20), "MB-peak-heap")
		b.ReportMetric(float64(base)/(1<<20), "MB-heap-before")
		b.ReportMetric(wall.Seconds(), "s-wall")
		runtime.KeepAlive(items)
	}
}

// liveHeap is the heap's live objects in bytes (as of the last GC cycle's
// marking, plus what was allocated since).
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// The manifest written entry by entry is byte for byte what
// json.MarshalIndent wrote whole: files, libraries and items, keys that
// JSON escapes (a NUL between library and ID, <, &, quotes, non-ASCII),
// empty and missing maps.
func TestManifestSaveIsMarshalIndent(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	full := &corpus.Manifest{Version: 1,
		Files: map[string]*corpus.Entry{
			"/b/<x&y>.pdf": {Path: "/b/<x&y>.pdf", Key: "local:1", Size: 3, ModTime: now, Title: "A \"quoted\" title", Pages: 2, Chunks: 4, Indexed: now},
			"/a/é.md":      {Path: "/a/é.md", Key: "local:2", Chunks: 1, EmbeddedWith: "m"},
		},
		Libraries: map[string]*corpus.LibraryEntry{"zotero": {Name: "zotero", Kind: "zotero", Origin: "/z", Version: 7, Collections: []string{"A", "A/B"}, Imported: now}},
		Items: map[string]*corpus.ItemEntry{
			"zotero\x00K2": {Library: "zotero", ID: "K2", Key: "lib:2", Title: "Two", Collections: []string{"zotero", "#tag"}},
			"zotero\x00K1": {Library: "zotero", ID: "K1", Key: "lib:1", Title: "One\u2028line", File: "/z/storage/K1/x.pdf", Size: 9, ModTime: now},
		},
	}
	for name, m := range map[string]*corpus.Manifest{
		"full":    full,
		"empty":   {Version: 1, Files: map[string]*corpus.Entry{}},
		"nil":     {},
		"no libs": {Version: 1, Files: full.Files, Items: map[string]*corpus.ItemEntry{}},
	} {
		p := filepath.Join(t.TempDir(), "corpus.json")
		if err := m.Save(p); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(p)
		want, _ := json.MarshalIndent(m, "", "  ")
		if string(got) != string(want) {
			t.Errorf("%s:\n%s\nwant\n%s", name, got, want)
		}
	}
}
