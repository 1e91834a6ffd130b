package corpus

import "context"

// Chunk is a passage of a document as the store keeps it (store.Chunk).
type Chunk struct {
	ID         string
	SourceKey  string
	Seq        int
	Text       string
	Page       int
	Start, End int
	Hash       string // of Text, as Store.HashText makes it
	References bool   // a chunk of a reference list
}

// Batch is one document to commit: its key, its record and pages (JSON)
// and its chunks (store.SourceBatch).
type Batch struct {
	Key      string
	Record   []byte
	Document []byte
	Chunks   []Chunk
}

// IndexStatus is what corpus add shows of a vector index (the fields of
// store.IndexStatus it uses).
type IndexStatus struct {
	Vectors, Nodes, Linked int
	Graph                  bool
	Phase                  string // background work under way ("" when idle)
	Done, Total            int    // of Phase
}

// Index is a vector index of one embedding model (store.Index).
type Index interface {
	// AddBatch adds vectors by chunk ID; a vector the index refuses is
	// still cached and searched by keyword.
	AddBatch(ids []string, vecs [][]float32) error
	Status() IndexStatus
	// Wait waits for the index's background work (its graph) or ctx.
	Wait(ctx context.Context) error
}

// Reader is what the local source needs of the store (store.DB): a
// document's record and its chunks.
type Reader interface {
	Source(key string) ([]byte, bool, error)
	Chunks(sourceKey string) ([]Chunk, error)
}

// Store is what Add needs of the store, which this process must own
// (store.Store).
type Store interface {
	Reader
	PutSourceBatch(items []Batch) error
	PutChunks(sourceKey string, chunks []Chunk) error
	MissingEmbeddings(model string, hashes []string) ([]string, error)
	PutEmbeddings(model string, items map[string][]float32) error
	// Index opens the vector index of model; nil when it cannot.
	Index(model string) (Index, error)
	// ChunkID and HashText name a chunk and its text as the store does.
	ChunkID(sourceKey string, seq int) string
	HashText(text string) string
}

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
