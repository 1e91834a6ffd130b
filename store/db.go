package store

import (
	"context"

	"github.com/researchtui/researchtui/store/vector"
)

// DB is the whole store as a run, the TUI and the MCP server use it: the
// reads, the writes, the vector indexes, the change feed and the claims.
// The owner's *Store and a *Client of the owner both implement it
// (README.md), so the pipeline and the front-ends never know which side of
// the socket they are on.
type DB interface {
	Reader
	Chunk(id string) (Chunk, bool, error)
	Source(key string) ([]byte, bool, error)

	CreateSession(sess *Session) error
	UpdateSession(id string, fn func(*Session) error) (Session, error)
	CheckpointAndUpdate(id, name string, data []byte, fn func(*Session) error) (Session, error)
	PutCheckpoint(sessionID, name string, data []byte) error
	DeleteSession(id string) error
	AppendEvents(sessionID string, evs []EventRecord) error

	PutSource(key string, data []byte) error
	PutDocument(key string, text []byte) error
	Document(key string) ([]byte, bool, error)
	PutChunks(sourceKey string, chunks []Chunk) error
	Chunks(sourceKey string) ([]Chunk, error)
	AllChunks(fn func(Chunk) error) error
	PutEmbeddings(model string, items map[string][]float32) error
	Embedding(model, hash string) ([]float32, bool, error)
	MissingEmbeddings(model string, hashes []string) ([]string, error)

	// Vectors is the vector index of one embedding model, opened on first
	// use; IndexStatus says how far its loading has got (false: not open).
	Vectors(model string) (RunIndex, error)
	IndexStatus(model string) (IndexStatus, bool)

	Watch(ctx context.Context) (<-chan Change, error)
	Claim(id string) (release func(), err error)
	SendControl(id string, c Control) error

	// Owner is the pid of the process that holds the data.
	Owner() int
	Close() error
}

// The vector index is package store/vector; these are its types as the
// store's API has always named them, so that callers of Store.Index and of
// DB need not import it.
type (
	// Index is the vector index of one embedding model (Store.Index).
	Index = vector.Index
	// IndexOptions tune the indexes a Store opens (Store.IndexOptions).
	IndexOptions = vector.Options
	// IndexStatus describes an index for stats and progress bars.
	IndexStatus = vector.Status
	// Hit is one search result: a chunk ID and its cosine similarity.
	Hit = vector.Hit
)

// RunIndex is what a run asks of a vector index: the owner's *Index,
// or that index reached through the owner's socket.
type RunIndex interface {
	Add(id string, vec []float32) error
	Search(q []float32, k int) ([]Hit, error)
	Len() int
	Status() IndexStatus
	Reloading() bool
	WaitLoaded(ctx context.Context) error
}

var (
	_ DB       = (*Store)(nil)
	_ DB       = (*Client)(nil)
	_ RunIndex = (*Index)(nil)
)

// Vectors is Index behind the RunIndex interface.
func (s *Store) Vectors(model string) (RunIndex, error) {
	ix, err := s.Index(model)
	if err != nil {
		return nil, err
	}
	return ix, nil
}

// Owner is this process: the one that holds the data.
func (s *Store) Owner() int { return ownPID }
