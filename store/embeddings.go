package store

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"

	"go.etcd.io/bbolt"
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
		return nil
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

// BuildIndex loads an Index with every chunk whose Hash has an embedding for
// model, keyed by chunk ID. The dimension is taken from the first vector
// found; vectors of any other dimension are skipped, never mixed. Chunks
// without an embedding are skipped too (they are not embedded yet).
func (s *Store) BuildIndex(model string) (*Index, error) {
	idx := NewIndex(0)
	err := s.db.View(func(tx *bbolt.Tx) error {
		emb := tx.Bucket(bucketEmbeddings).Bucket([]byte(model))
		if emb == nil {
			return nil
		}
		var buf []float32
		// Only these fields are needed; the chunk text is skipped by json.
		var ref struct {
			ID   string `json:"id"`
			Hash string `json:"hash"`
		}
		return tx.Bucket(bucketChunks).ForEach(func(k, v []byte) error {
			ref.ID, ref.Hash = "", ""
			if err := json.Unmarshal(v, &ref); err != nil {
				return fmt.Errorf("store: chunk %s: %w", k, err)
			}
			raw := emb.Get([]byte(ref.Hash))
			if raw == nil {
				return nil
			}
			var err error
			if buf, err = decodeVector(buf, raw); err != nil {
				return fmt.Errorf("store: embedding %s/%s: %w", model, ref.Hash, err)
			}
			if d := idx.Dim(); d != 0 && len(buf) != d {
				return nil
			}
			if err := idx.Add(ref.ID, buf); err != nil {
				// A zero or non-finite stored vector cannot be ranked; leave
				// that chunk out rather than failing the whole index.
				return nil
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return idx, nil
}
