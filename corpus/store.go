package corpus

import (
	"context"

	"github.com/researchtui/researchtui/store"
)

// Reader is what Docs needs of the store: a document's record and its
// chunks. A store.DB is one, owned here or reached through its owner.
type Reader interface {
	Source(key string) ([]byte, bool, error)
	Chunks(sourceKey string) ([]store.Chunk, error)
}

// Store is what Add and ImportLibrary need of the store, which this
// process must own: the methods of *store.Store they call (tests give a
// store in memory).
type Store interface {
	Reader
	PutSourceBatch(items []store.SourceBatch) error
	PutChunks(sourceKey string, chunks []store.Chunk) error
	MissingEmbeddings(model string, hashes []string) ([]string, error)
	PutEmbeddings(model string, items map[string][]float32) error
	// Index opens the vector index of model; nil when it cannot.
	Index(model string) (*store.Index, error)
}

var _ Store = (*store.Store)(nil)

// Embedder embeds chunks as documents with one model.
type Embedder struct {
	Model string
	// Embed returns one vector per text.
	Embed func(ctx context.Context, texts []string) ([][]float32, error)
	// Fatal tells an error after which no request can succeed (the backend
	// is unreachable or lacks the model): embedding stops at the first.
	Fatal func(error) bool
	// Parallel is how many requests may be in flight.
	Parallel int
}
