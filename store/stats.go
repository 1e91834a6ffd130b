package store

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"go.etcd.io/bbolt"

	"github.com/researchtui/researchtui/store/vector"
)

// Stats is what `researchtui store stats` shows: what the store holds and
// what it costs on disk.
type Stats struct {
	Path      string `json:"path"`
	FileBytes int64  `json:"file_bytes"`
	// FreeBytes are pages bbolt keeps for reuse; compaction returns them.
	FreeBytes  int64            `json:"free_bytes"`
	Schema     int              `json:"schema_version"`
	Sessions   int              `json:"sessions"`
	Sources    int              `json:"sources"`
	Documents  int              `json:"documents"`
	Chunks     int              `json:"chunks"`
	Embeddings []EmbeddingStats `json:"embeddings"`
	Indexes    []IndexFileStats `json:"indexes"`
}

// EmbeddingStats describes one model's cached embeddings.
type EmbeddingStats struct {
	Model string `json:"model"`
	Count int    `json:"count"`
	Dim   int    `json:"dim"`
	Bytes int64  `json:"bytes"` // the vectors' own size
	// Unused are embeddings no chunk has (queries, abstracts of sources
	// never read, old text): what compaction prunes.
	Unused int `json:"unused"`
}

// IndexFileStats describes a vector index file beside the database.
type IndexFileStats struct {
	Model   string    `json:"model"`
	File    string    `json:"file"`
	Bytes   int64     `json:"bytes"`
	Vectors int       `json:"vectors"`
	Dim     int       `json:"dim"`
	Graph   bool      `json:"graph"`
	Linked  int       `json:"linked"`
	Saved   time.Time `json:"saved"`
	// Fresh is true when nothing changed in the store since the file was
	// saved; a stale file is caught up when it is next opened.
	Fresh   bool   `json:"fresh"`
	Problem string `json:"problem,omitempty"` // the file cannot be used and will be rebuilt
}

// Stats counts what the store holds. It reads every chunk's hash once (to
// count unused embeddings) and only the headers of the index files.
func (s *Store) Stats() (Stats, error) {
	st := Stats{Path: s.path, Schema: SchemaVersion()}
	if fi, err := os.Stat(s.path); err == nil {
		st.FileBytes = fi.Size()
	}
	var gen uint64
	err := s.db.View(func(tx *bbolt.Tx) error {
		gen = indexGenTx(tx)
		st.Sessions = tx.Bucket(bucketSessions).Stats().KeyN
		st.Sources = tx.Bucket(bucketSources).Stats().KeyN
		st.Documents = tx.Bucket(bucketDocuments).Stats().KeyN
		st.Chunks = tx.Bucket(bucketChunkHashes).Stats().KeyN
		used := usedHashes(tx)
		return tx.Bucket(bucketEmbeddings).ForEachBucket(func(model []byte) error {
			es := EmbeddingStats{Model: string(model)}
			err := tx.Bucket(bucketEmbeddings).Bucket(model).ForEach(func(k, v []byte) error {
				es.Count++
				es.Bytes += int64(len(v))
				if es.Dim == 0 {
					es.Dim = len(v) / 4
				}
				if !used[string(k)] {
					es.Unused++
				}
				return nil
			})
			st.Embeddings = append(st.Embeddings, es)
			return err
		})
	})
	if err != nil {
		return st, err
	}
	if fi, err := os.Stat(s.path); err == nil && fi.Size() > 0 {
		info := s.db.Info()
		st.FreeBytes = int64(s.db.Stats().FreePageN) * int64(info.PageSize)
	}
	st.Indexes = s.indexFileStats(gen)
	return st, nil
}

// usedHashes is the set of content hashes some chunk has.
func usedHashes(tx *bbolt.Tx) map[string]bool {
	used := map[string]bool{}
	_ = tx.Bucket(bucketChunkHashes).ForEach(func(_, h []byte) error { // the callback never fails
		used[string(h)] = true
		return nil
	})
	return used
}

func (s *Store) indexFiles() []string {
	files, _ := filepath.Glob(s.indexFilePrefix() + "*.idx")
	sort.Strings(files)
	return files
}

func (s *Store) indexFileStats(gen uint64) []IndexFileStats {
	var out []IndexFileStats
	for _, f := range s.indexFiles() {
		h, size, err := vector.ReadHeader(f)
		is := IndexFileStats{File: f, Bytes: size, Model: h.Model}
		if err != nil {
			is.Problem = strings.TrimPrefix(err.Error(), vector.ErrCorrupt.Error()+": ")
			if is.Model == "" {
				is.Model = "?"
			}
		} else {
			is.Vectors, is.Dim, is.Graph = h.Vectors, h.Dim, h.Graph
			is.Linked, is.Saved, is.Fresh = h.Linked, h.Saved, h.Gen == gen
			if s.IndexPath(h.Model) != f {
				is.Problem = "named for another model"
			}
		}
		out = append(out, is)
	}
	return out
}
