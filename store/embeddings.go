package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"

	"go.etcd.io/bbolt"

	"github.com/researchtui/researchtui/store/vector"
)

// Embeddings are cached per model (a nested bucket named after it) and keyed
// by content hash, so identical text is embedded once per model whichever
// source or session it came from. Values are raw little-endian float32 bytes:
// a third of JSON's size and decoded with no parsing.

func encodeVector(v []float32) []byte {
	out := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(f))
	}
	return out
}

// decodeVector appends the vector in raw to dst[:0]. The result never aliases
// raw, which may point into bbolt's mmap.
func decodeVector(dst []float32, raw []byte) ([]float32, error) {
	if len(raw)%4 != 0 {
		return nil, fmt.Errorf("store: embedding of %d bytes is not float32s", len(raw))
	}
	dst = dst[:0]
	for i := 0; i < len(raw); i += 4 {
		dst = append(dst, math.Float32frombits(binary.LittleEndian.Uint32(raw[i:])))
	}
	return dst, nil
}

// PutEmbeddings stores hash → vector for model in one transaction,
// replacing existing entries.
func (s *Store) PutEmbeddings(model string, items map[string][]float32) error {
	if model == "" {
		return errors.New("store: empty embedding model")
	}
	if len(items) == 0 {
		return nil
	}
	// Sorted keys fill pages in order and make the write deterministic.
	hashes := make([]string, 0, len(items))
	for h, v := range items {
		if h == "" {
			return errors.New("store: empty embedding hash")
		}
		if len(v) == 0 {
			return fmt.Errorf("store: empty embedding for %s", h)
		}
		hashes = append(hashes, h)
	}
	sort.Strings(hashes)
	vals := make([][]byte, len(hashes))
	for i, h := range hashes {
		vals[i] = encodeVector(items[h])
	}
	return s.db.Update(func(tx *bbolt.Tx) error {
		b, err := tx.Bucket(bucketEmbeddings).CreateBucketIfNotExists([]byte(model))
		if err != nil {
			return err
		}
		for i, h := range hashes {
			if err := b.Put([]byte(h), vals[i]); err != nil {
				return err
			}
		}
		return bumpIndexGen(tx)
	})
}

// Embedding returns the cached vector for (model, hash) and whether it exists.
func (s *Store) Embedding(model, hash string) ([]float32, bool, error) {
	var out []float32
	found := false
	err := s.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketEmbeddings).Bucket([]byte(model))
		if b == nil {
			return nil
		}
		raw := b.Get([]byte(hash))
		if raw == nil {
			return nil
		}
		v, err := decodeVector(nil, raw)
		if err != nil {
			return err
		}
		out, found = v, true
		return nil
	})
	return out, found, err
}

// MissingEmbeddings returns the hashes that have no cached vector for model,
// in input order without duplicates: exactly the texts still to embed.
func (s *Store) MissingEmbeddings(model string, hashes []string) ([]string, error) {
	var out []string
	err := s.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketEmbeddings).Bucket([]byte(model))
		seen := make(map[string]bool, len(hashes))
		for _, h := range hashes {
			if seen[h] {
				continue
			}
			seen[h] = true
			if b == nil || h == "" || b.Get([]byte(h)) == nil {
				out = append(out, h)
			}
		}
		return nil
	})
	return out, err
}

// BuildIndex returns a new in-memory exact index of every chunk whose hash
// has an embedding for model, keyed by chunk ID, read from the store (not
// from an index file, and not kept: Index is the shared, persisted one).
// The dimension is the first vector's; vectors of any other dimension are
// skipped, never mixed, and so are chunks not embedded yet.
func (s *Store) BuildIndex(model string) (*Index, error) {
	ix := vector.New(0, vector.Options{SwitchAt: -1})
	if _, err := s.syncIndex(ix, model, nil); err != nil {
		return nil, err
	}
	return ix, nil
}
