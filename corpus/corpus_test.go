package corpus_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/researchtui/researchtui/corpus"
	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/store/vector"
)

// memStore is the store as the corpus package sees it, in memory.
type memStore struct {
	mu      sync.Mutex
	sources map[string][]byte
	chunks  map[string][]store.Chunk
	vecs    map[string][]float32
	ix      *store.Index
}

func newMemStore() *memStore {
	return &memStore{sources: map[string][]byte{}, chunks: map[string][]store.Chunk{}, vecs: map[string][]float32{}, ix: vector.New(0, vector.Options{})}
}

func (m *memStore) Source(key string) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	raw, ok := m.sources[key]
	return raw, ok, nil
}

func (m *memStore) Chunks(key string) ([]store.Chunk, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.chunks[key], nil
}

func (m *memStore) PutSourceBatch(items []store.SourceBatch) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, it := range items {
		m.sources[it.Key], m.chunks[it.Key] = it.Record, it.Chunks
	}
	return nil
}

func (m *memStore) PutChunks(key string, chunks []store.Chunk) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.chunks[key] = chunks
	return nil
}

func (m *memStore) MissingEmbeddings(model string, hashes []string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, h := range hashes {
		if _, ok := m.vecs[h]; !ok {
			out = append(out, h)
		}
	}
	return out, nil
}

func (m *memStore) PutEmbeddings(model string, items map[string][]float32) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for h, v := range items {
		m.vecs[h] = v
	}
	return nil
}

func (m *memStore) Index(string) (*store.Index, error) { return m.ix, nil }

// Add over the corpus's own interfaces: files are reported, stored,
// embedded and indexed; a re-add finds them unchanged; a missing path is a
// NotFoundError after the rest is added; a deleted file is dropped; Docs
// lists what is indexed.
func TestAddReAddAndDocs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	docs := filepath.Join(dir, "docs")
	os.MkdirAll(docs, 0o755)
	os.WriteFile(filepath.Join(docs, "a.md"), []byte("# Lattices\n\nCritical behaviour on a Bethe lattice.\n"), 0o644)
	os.WriteFile(filepath.Join(docs, "b.txt"), []byte("Phonon scattering in d-wave superconductors.\n"), 0o644)
	st := newMemStore()
	var reports []string
	var embedded atomic.Int64 // requests run in parallel
	opt := corpus.Options{
		Manifest: filepath.Join(dir, "data", "corpus.json"),
		Store:    st,
		File:     func(verb, path, detail string) { reports = append(reports, verb+" "+filepath.Base(path)) },
		Embedder: &corpus.Embedder{Model: "m", Parallel: 2, Embed: func(_ context.Context, texts []string) ([][]float32, error) {
			embedded.Add(int64(len(texts)))
			out := make([][]float32, len(texts))
			for i := range out {
				out[i] = []float32{1, 0}
			}
			return out, nil
		}},
	}
	missing := filepath.Join(dir, "missing")
	res, err := corpus.Add(context.Background(), opt, []string{docs, missing})
	var nf *corpus.NotFoundError
	if !errors.As(err, &nf) || !slices.Equal(nf.Paths, []string{missing}) {
		t.Fatalf("err = %v", err)
	}
	if res.Added != 2 || res.Documents != 2 || res.Embedded == nil || res.Embedded.Index == nil || int64(res.Embedded.Index.Vectors) != embedded.Load() || embedded.Load() == 0 {
		t.Fatalf("result %+v, embedded %d", res, embedded.Load())
	}
	slices.Sort(reports)
	if want := []string{"added a.md", "added b.txt", "skipped missing"}; !slices.Equal(reports, want) {
		t.Fatalf("reports %q, want %q", reports, want)
	}
	got, err := corpus.Docs(opt.Manifest, st)()
	if err != nil || len(got) != 2 || got[0].Record.Title == "" {
		t.Fatalf("docs %+v, %v", got, err)
	}

	reports = nil
	os.Remove(filepath.Join(docs, "b.txt"))
	res, err = corpus.Add(context.Background(), opt, []string{docs})
	if err != nil || res.Unchanged != 1 || res.Removed != 1 || res.Documents != 1 {
		t.Fatalf("re-add: %+v, %v", res, err)
	}
	if want := []string{"unchanged a.md", "removed b.txt"}; !slices.Equal(reports, want) {
		t.Fatalf("reports %q, want %q", reports, want)
	}
	m, err := corpus.LoadManifest(opt.Manifest)
	if err != nil || len(m.Entries()) != 1 || m.Entries()[0].EmbeddedWith != "m" {
		t.Fatalf("manifest %+v, %v", m, err)
	}
}
