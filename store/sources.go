package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"go.etcd.io/bbolt"
)

// PutSource stores a source record (opaque JSON owned by the caller) under
// its key, replacing any previous one. Sources are shared by all sessions: a
// paper found twice is read and embedded once.
func (s *Store) PutSource(key string, data []byte) error {
	return s.putBytes(bucketSources, key, data)
}

// Source returns a copy of a source record and whether it exists.
func (s *Store) Source(key string) ([]byte, bool, error) {
	return s.getBytes(bucketSources, key)
}

// SourceKeys lists every source key in byte order.
func (s *Store) SourceKeys() ([]string, error) {
	var out []string
	err := s.db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketSources).ForEach(func(k, _ []byte) error {
			out = append(out, string(k))
			return nil
		})
	})
	return out, err
}

// PutDocument stores the full extracted text of a source. It is kept apart
// from the source record so listing sources never reads whole papers.
func (s *Store) PutDocument(key string, text []byte) error {
	return s.putBytes(bucketDocuments, key, text)
}

// Document returns a copy of a source's full text and whether it exists.
func (s *Store) Document(key string) ([]byte, bool, error) {
	return s.getBytes(bucketDocuments, key)
}

func (s *Store) putBytes(bucket []byte, key string, data []byte) error {
	if key == "" {
		return fmt.Errorf("store: empty key")
	}
	if data == nil {
		data = []byte{}
	}
	return s.db.Update(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucket).Put([]byte(key), data)
	})
}

func (s *Store) getBytes(bucket []byte, key string) ([]byte, bool, error) {
	var out []byte
	found := false
	err := s.db.View(func(tx *bbolt.Tx) error {
		if v := tx.Bucket(bucket).Get([]byte(key)); v != nil {
			out, found = bytes.Clone(v), true
		}
		return nil
	})
	return out, found, err
}

// Chunk is one retrievable passage of a source's text. Hash identifies its
// content, so an embedding computed once is reused wherever the same text
// appears, and re-chunking unchanged text costs no embedding calls.
type Chunk struct {
	ID        string `json:"id"` // SourceKey + "#" + zero-padded Seq; set by PutChunks if empty
	SourceKey string `json:"source_key"`
	Seq       int    `json:"seq"`
	Text      string `json:"text"`
	Page      int    `json:"page"`
	Start     int    `json:"start"`
	End       int    `json:"end"`
	Hash      string `json:"hash"` // hex sha256 of Text; set by PutChunks if empty
	// References marks a chunk of a paper's reference list: retrieval
	// down-weights it (its titles match queries without saying anything).
	References bool `json:"refs,omitempty"`
}

// ChunkID is the canonical chunk ID: the padding keeps a source's chunks in
// Seq order when IDs are sorted as strings (up to a million chunks).
func ChunkID(sourceKey string, seq int) string {
	return fmt.Sprintf("%s#%06d", sourceKey, seq)
}

// HashText is the content hash used for Chunk.Hash and the embedding cache.
func HashText(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// PutChunks replaces all chunks of a source in one transaction. It sets
// SourceKey, and ID and Hash when empty, in the stored copies (the caller's
// slice is not modified). Seqs must be unique within the batch. Embeddings are
// not touched: they are keyed by content hash and remain valid.
func (s *Store) PutChunks(sourceKey string, chunks []Chunk) error {
	encoded, err := encodeChunks(sourceKey, chunks)
	if err != nil {
		return err
	}
	return s.db.Update(func(tx *bbolt.Tx) error {
		if err := putChunksTx(tx, sourceKey, encoded); err != nil {
			return err
		}
		return bumpIndexGen(tx)
	})
}

// encChunk is a chunk encoded for storage. Each has its own buffers: bbolt
// keeps references to what is Put until the commit.
type encChunk struct {
	seq, id, hash, data []byte
}

func encodeChunks(sourceKey string, chunks []Chunk) ([]encChunk, error) {
	if sourceKey == "" {
		return nil, fmt.Errorf("store: empty source key")
	}
	encoded := make([]encChunk, 0, len(chunks))
	seen := make(map[int]bool, len(chunks))
	for _, c := range chunks {
		if c.Seq < 0 {
			return nil, fmt.Errorf("store: chunk seq %d is negative", c.Seq)
		}
		if seen[c.Seq] {
			return nil, fmt.Errorf("store: duplicate chunk seq %d for %s", c.Seq, sourceKey)
		}
		seen[c.Seq] = true
		c.SourceKey = sourceKey
		if c.ID == "" {
			c.ID = ChunkID(sourceKey, c.Seq)
		}
		if c.Hash == "" {
			c.Hash = HashText(c.Text)
		}
		data, err := json.Marshal(&c)
		if err != nil {
			return nil, fmt.Errorf("store: encode chunk: %w", err)
		}
		encoded = append(encoded, encChunk{seq: seqKey(int64(c.Seq)), id: []byte(c.ID), hash: []byte(c.Hash), data: data})
	}
	return encoded, nil
}

// putChunksTx replaces a source's chunks inside tx, keeping the chunk → hash
// table that the vector index syncs from in step.
func putChunksTx(tx *bbolt.Tx, sourceKey string, encoded []encChunk) error {
	all := tx.Bucket(bucketChunks)
	hashes := tx.Bucket(bucketChunkHashes)
	bySource := tx.Bucket(bucketChunksBySource)
	key := []byte(sourceKey)
	if old := bySource.Bucket(key); old != nil {
		// Collect first: deleting while iterating can skip keys.
		var ids [][]byte
		if err := old.ForEach(func(_, v []byte) error {
			ids = append(ids, bytes.Clone(v))
			return nil
		}); err != nil {
			return err
		}
		for _, id := range ids {
			if err := all.Delete(id); err != nil {
				return err
			}
			if err := hashes.Delete(id); err != nil {
				return err
			}
		}
		if err := bySource.DeleteBucket(key); err != nil {
			return err
		}
	}
	if len(encoded) == 0 {
		return nil
	}
	idx, err := bySource.CreateBucket(key)
	if err != nil {
		return err
	}
	for _, e := range encoded {
		if err := all.Put(e.id, e.data); err != nil {
			return err
		}
		if err := hashes.Put(e.id, e.hash); err != nil {
			return err
		}
		if err := idx.Put(e.seq, e.id); err != nil {
			return err
		}
	}
	return nil
}

// SourceBatch is one source written by PutSourceBatch: its record, its full
// text (nil: left as it is) and all its chunks.
type SourceBatch struct {
	Key      string
	Record   []byte
	Document []byte
	Chunks   []Chunk
}

// PutSourceBatch writes several sources with their documents and chunks in
// one transaction: one commit (two fsyncs) for a whole batch of files.
func (s *Store) PutSourceBatch(items []SourceBatch) error {
	encoded := make([][]encChunk, len(items))
	for i, it := range items {
		var err error
		if encoded[i], err = encodeChunks(it.Key, it.Chunks); err != nil {
			return err
		}
	}
	if len(items) == 0 {
		return nil
	}
	return s.db.Update(func(tx *bbolt.Tx) error {
		for i, it := range items {
			rec := it.Record
			if rec == nil {
				rec = []byte{}
			}
			if err := tx.Bucket(bucketSources).Put([]byte(it.Key), rec); err != nil {
				return err
			}
			if it.Document != nil {
				if err := tx.Bucket(bucketDocuments).Put([]byte(it.Key), it.Document); err != nil {
					return err
				}
			}
			if err := putChunksTx(tx, it.Key, encoded[i]); err != nil {
				return err
			}
		}
		return bumpIndexGen(tx)
	})
}

// Chunks returns a source's chunks in Seq order (empty if none).
func (s *Store) Chunks(sourceKey string) ([]Chunk, error) {
	var out []Chunk
	err := s.db.View(func(tx *bbolt.Tx) error {
		idx := tx.Bucket(bucketChunksBySource).Bucket([]byte(sourceKey))
		if idx == nil {
			return nil
		}
		all := tx.Bucket(bucketChunks)
		return idx.ForEach(func(_, id []byte) error {
			v := all.Get(id)
			if v == nil {
				return fmt.Errorf("store: chunk index of %s names missing chunk %s", sourceKey, id)
			}
			var c Chunk
			if err := json.Unmarshal(v, &c); err != nil {
				return fmt.Errorf("store: chunk %s: %w", id, err)
			}
			out = append(out, c)
			return nil
		})
	})
	return out, err
}

// Chunk returns one chunk by ID and whether it exists.
func (s *Store) Chunk(id string) (Chunk, bool, error) {
	var c Chunk
	found := false
	err := s.db.View(func(tx *bbolt.Tx) error {
		v := tx.Bucket(bucketChunks).Get([]byte(id))
		if v == nil {
			return nil
		}
		found = true
		if err := json.Unmarshal(v, &c); err != nil {
			return fmt.Errorf("store: chunk %s: %w", id, err)
		}
		return nil
	})
	return c, found, err
}

// allChunksPage bounds how many chunks AllChunks decodes per read
// transaction. fn runs outside any transaction, so it may call other Store
// methods (including writes) without deadlocking, and a slow fn does not hold
// a read transaction that would stall writers when the file grows.
const allChunksPage = 512

// AllChunks calls fn for every chunk in ID order, stopping at fn's first
// error, which it returns. Chunks written concurrently may or may not be seen.
func (s *Store) AllChunks(fn func(Chunk) error) error {
	var after []byte
	for {
		page, next, err := s.chunkPage(after)
		if err != nil {
			return err
		}
		for _, ch := range page {
			if err := fn(ch); err != nil {
				return err
			}
		}
		if next == nil {
			return nil
		}
		after = next
	}
}

// chunkPage reads up to allChunksPage chunks after the key after (from the
// first when empty) in one read transaction; next is the key to continue
// from, nil at the end.
func (s *Store) chunkPage(after []byte) (page []Chunk, next []byte, err error) {
	page = make([]Chunk, 0, allChunksPage)
	err = s.db.View(func(tx *bbolt.Tx) error {
		c := tx.Bucket(bucketChunks).Cursor()
		var k, v []byte
		if len(after) == 0 {
			k, v = c.First()
		} else {
			k, v = c.Seek(after)
			if k != nil && bytes.Equal(k, after) {
				k, v = c.Next()
			}
		}
		for ; k != nil && len(page) < allChunksPage; k, v = c.Next() {
			var ch Chunk
			if err := json.Unmarshal(v, &ch); err != nil {
				return fmt.Errorf("store: chunk %s: %w", k, err)
			}
			page = append(page, ch)
			next = bytes.Clone(k)
		}
		if k == nil {
			next = nil // nothing after this page
		}
		return nil
	})
	return page, next, err
}
