package cli

import (
	"context"

	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/search/corpus"
	"github.com/researchtui/researchtui/store"
)

// corpusDocs is the local source's view of the corpus, read through st
// (owned here or reached through its owner).
func corpusDocs(cfg *Config, st store.DB) search.LocalDocsFunc {
	return corpus.Docs(cfg.corpusPath(), corpusReader{st})
}

// corpusReader and corpusStore are the store as the corpus package sees it
// (corpus.Reader, corpus.Store).
type corpusReader struct{ db store.DB }

func (r corpusReader) Source(key string) ([]byte, bool, error) { return r.db.Source(key) }

func (r corpusReader) Chunks(key string) ([]corpus.Chunk, error) {
	cs, err := r.db.Chunks(key)
	return fromStoreChunks(cs), err
}

type corpusStore struct{ st *store.Store }

var _ corpus.Store = corpusStore{}

func (s corpusStore) Source(key string) ([]byte, bool, error) { return s.st.Source(key) }

func (s corpusStore) Chunks(key string) ([]corpus.Chunk, error) {
	cs, err := s.st.Chunks(key)
	return fromStoreChunks(cs), err
}

func (s corpusStore) PutSourceBatch(items []corpus.Batch) error {
	batch := make([]store.SourceBatch, len(items))
	for i, it := range items {
		batch[i] = store.SourceBatch{Key: it.Key, Record: it.Record, Document: it.Document, Chunks: toStoreChunks(it.Chunks)}
	}
	return s.st.PutSourceBatch(batch)
}

func (s corpusStore) PutChunks(key string, chunks []corpus.Chunk) error {
	return s.st.PutChunks(key, toStoreChunks(chunks))
}

func (s corpusStore) MissingEmbeddings(model string, hashes []string) ([]string, error) {
	return s.st.MissingEmbeddings(model, hashes)
}

func (s corpusStore) PutEmbeddings(model string, items map[string][]float32) error {
	return s.st.PutEmbeddings(model, items)
}

func (s corpusStore) Index(model string) (corpus.Index, error) {
	ix, err := s.st.Index(model)
	if ix == nil {
		return nil, err
	}
	return corpusIndex{ix}, err
}

func (corpusStore) ChunkID(key string, seq int) string { return store.ChunkID(key, seq) }
func (corpusStore) HashText(text string) string        { return store.HashText(text) }

type corpusIndex struct{ ix *store.Index }

func (x corpusIndex) AddBatch(ids []string, vecs [][]float32) error { return x.ix.AddBatch(ids, vecs) }
func (x corpusIndex) Wait(ctx context.Context) error                { return x.ix.Wait(ctx) }

func (x corpusIndex) Status() corpus.IndexStatus {
	s := x.ix.Status()
	return corpus.IndexStatus{Vectors: s.Vectors, Nodes: s.Nodes, Linked: s.Linked, Graph: s.Graph, Phase: s.Phase, Done: s.Done, Total: s.Total}
}

// A corpus.Chunk is a store.Chunk field for field (a field added to one
// and not the other stops these conversions compiling).
func toStoreChunks(cs []corpus.Chunk) []store.Chunk {
	return convert(cs, func(c corpus.Chunk) store.Chunk { return store.Chunk(c) })
}

func fromStoreChunks(cs []store.Chunk) []corpus.Chunk {
	return convert(cs, func(c store.Chunk) corpus.Chunk { return corpus.Chunk(c) })
}

func convert[A, B any](in []A, f func(A) B) []B {
	if in == nil {
		return nil
	}
	out := make([]B, len(in))
	for i, a := range in {
		out[i] = f(a)
	}
	return out
}
