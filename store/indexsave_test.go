package store

import (
	"fmt"
	"testing"

	"github.com/researchtui/researchtui/store/vector/vectortest"
)

// When a store-owned index saves its file: caught up with the store, and
// only when a rewrite pays.

// Vectors added while the store changes (the way corpus add and a run's
// indexer add them: commit chunks and embeddings, then Add) and linked by
// a background build are saved caught up: the file the build writes
// records the store as it now is, so stats call it fresh, and the next
// open maps it with nothing to check (a stale file would have every
// vector read back from bbolt, at every open, until a process lived long
// enough to save it again).
func TestBuildSavesAFreshFile(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
	s.IndexOptions = IndexOptions{SwitchAt: 1, Seed: 3}
	g := vectortest.NewTopics(8, 32, 6)
	qs := g.Queries(30)
	ix, err := s.Index("m")
	if err != nil {
		t.Fatal(err)
	}
	for b := 0; b < 4; b++ {
		addLikeCorpusAdd(t, s, ix, g, fmt.Sprintf("b%d", b), 200)
	}
	vectortest.WaitIdle(t, ix)
	f := indexFile(t, s)
	if !f.Fresh || !f.Graph || f.Vectors != 800 || f.Linked != 800 {
		t.Fatalf("the file a build saved: %+v; want 800 vectors, all linked, fresh", f)
	}
	s.Close()

	s2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	gen, _ := s2.indexGen()
	p2, err := s2.index("m")
	if err != nil {
		t.Fatal(err)
	}
	ix2 := p2.ix
	if st := ix2.Status(); st.Note != "" || p2.gen() != gen {
		t.Fatalf("reopened: note %q, index at generation %d, store at %d", st.Note, p2.gen(), gen)
	}
	sameAsStore(t, s2, ix2, qs, 0.95)
}

// addLikeCorpusAdd commits n chunks (8 per source) and their embeddings,
// then adds the vectors to ix in one batch, as corpus add does.
func addLikeCorpusAdd(t *testing.T, s *Store, ix *Index, g *vectortest.Topics, prefix string, n int) {
	t.Helper()
	var batch []SourceBatch
	emb := map[string][]float32{}
	var ids []string
	var vecs [][]float32
	for src := 0; src*8 < n; src++ {
		key := fmt.Sprintf("%s:%04d", prefix, src)
		var chunks []Chunk
		for j := 0; j < 8 && src*8+j < n; j++ {
			text := fmt.Sprintf("%s chunk %d of %d", prefix, j, src)
			v := g.Next()
			chunks = append(chunks, Chunk{Seq: j, Text: text})
			emb[HashText(text)] = v
			ids, vecs = append(ids, ChunkID(key, j)), append(vecs, v)
		}
		batch = append(batch, SourceBatch{Key: key, Record: []byte(`{}`), Chunks: chunks})
	}
	if err := s.PutSourceBatch(batch); err != nil {
		t.Fatal(err)
	}
	if err := s.PutEmbeddings("m", emb); err != nil {
		t.Fatal(err)
	}
	if err := ix.AddBatch(ids, vecs); err != nil {
		t.Fatal(err)
	}
}

// indexFile is what store stats says about the one index file.
func indexFile(t *testing.T, s *Store) IndexFileStats {
	t.Helper()
	st, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Indexes) != 1 {
		t.Fatalf("index files: %+v", st.Indexes)
	}
	return st.Indexes[0]
}

// A build that links a batch saves the file only when that is worth
// rewriting it whole: with no file yet, or once what changed since the
// last save comes to half the index. (With a real model every batch is
// linked before the next arrives; a save after each rewrote the file
// after every batch.) Close saves the rest.
func TestBuildSavesOnlyWhenItPays(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
	s.IndexOptions = IndexOptions{SwitchAt: 1, Seed: 4}
	g := vectortest.NewTopics(8, 32, 6)
	ix, err := s.Index("m")
	if err != nil {
		t.Fatal(err)
	}
	for i, step := range []struct {
		add, inFile int
		saved       bool
	}{
		{400, 400, true},  // no file yet
		{100, 400, false}, // a fifth more: not worth a rewrite
		{400, 900, true},  // together over half
	} {
		addLikeCorpusAdd(t, s, ix, g, fmt.Sprint("step", i), step.add)
		vectortest.WaitIdle(t, ix)
		if f := indexFile(t, s); f.Vectors != step.inFile || f.Linked != step.inFile || f.Fresh != step.saved {
			t.Fatalf("after adding %d: file %+v, want %d vectors, fresh %v", step.add, f, step.inFile, step.saved)
		}
	}
	addLikeCorpusAdd(t, s, ix, g, "last", 100)
	vectortest.WaitIdle(t, ix)
	s.Close()
	s2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if f := indexFile(t, s2); f.Vectors != 1000 || f.Linked != 1000 || !f.Fresh {
		t.Fatalf("after Close: %+v", f)
	}
}
