package store

import "errors"

// Knowledge is what a knowledge-base search reads: chunks and their
// sources by key, and the vector index of one embedding model. The owner's
// *Store and a *Client both implement it, so `researchtui search` and the
// MCP server's search_knowledge work beside another researchtui (README.md).
type Knowledge interface {
	Chunk(id string) (Chunk, bool, error)
	Source(key string) ([]byte, bool, error)
	// SearchVectors is the k nearest stored chunks to vec among those
	// embedded with model. ErrNothingEmbedded says the model has none.
	SearchVectors(model string, vec []float32, k int) ([]Hit, error)
}

// ErrNothingEmbedded is returned by SearchVectors when nothing is embedded
// with the model (a search then falls back to keywords, where it can).
var ErrNothingEmbedded = errors.New("store: nothing embedded with that model")

var (
	_ Knowledge = (*Store)(nil)
	_ Knowledge = (*Client)(nil)
)

// maxSearchK bounds one vector search, over the socket or not.
const maxSearchK = 1000

// SearchVectors searches the model's vector index (opened on first use and
// shared with the runs of this process).
func (s *Store) SearchVectors(model string, vec []float32, k int) ([]Hit, error) {
	if k <= 0 || k > maxSearchK {
		return nil, errors.New("store: k out of range")
	}
	ix, err := s.Index(model)
	if err != nil {
		return nil, err
	}
	if ix.Len() == 0 {
		return nil, ErrNothingEmbedded
	}
	return ix.Search(vec, k)
}
