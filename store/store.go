// Package store is researchtui's local database: sessions, their event logs
// and checkpoints, the shared source/document/chunk knowledge base, cached
// embeddings, and the vector indexes built from them. The index itself is
// package store/vector; the store keeps each one in step with bbolt and
// owns its file (indexstore.go).
//
// It is a thin layer over a single bbolt file. bbolt was chosen because it is
// pure Go, has one dependency and gives crash-safe commits without a WAL: a
// transaction that committed is on disk, one that did not never happened.
// Commits cost milliseconds (two fdatasyncs), so every write method here takes
// a batch and commits it once; callers must not write per token.
//
// The store deliberately imports no other researchtui package (but its own
// store/vector, which imports nothing of the project): the pipeline
// and UI own their record shapes (sources and events are opaque bytes here),
// and the store only owns durability, ordering and lookup.
package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// ErrLocked is wrapped by Open's error when another process holds the
// database. The UI maps it to a clear message and exit code 4 instead of
// hanging, which is what bbolt does with a zero timeout.
var ErrLocked = errors.New("store: database is locked")

// ErrNotFound is returned by lookups that must find a record (sessions).
// Lookups of shared, optional data (sources, checkpoints, embeddings) report
// absence with a bool instead, because absence is the normal case there.
var ErrNotFound = errors.New("store: not found")

// DefaultLockTimeout is how long Open waits for another process to release
// the file lock. bbolt polls every 50 ms, so the failure arrives after about
// this long; it is well under the 2 s a second instance may wait.
const DefaultLockTimeout = time.Second

// Options configure Open.
type Options struct {
	// LockTimeout bounds the wait for the file lock. Zero or negative means
	// DefaultLockTimeout: bbolt's own zero means "wait forever", which must
	// never happen to a user starting a second instance.
	LockTimeout time.Duration
	// ReadOnly opens the file with a shared lock and refuses writes. It cannot
	// run migrations, so an out-of-date file is rejected.
	ReadOnly bool
}

// Store is an open database. All methods are safe for concurrent use; bbolt
// serialises writers and gives readers consistent snapshots.
type Store struct {
	db       *bbolt.DB
	path     string
	readOnly bool

	idxMu     sync.Mutex // serialises opening indexes
	idxClosed bool
	statusMu  sync.Mutex
	indexes   map[string]*indexPersist // open vector indexes by embedding model
	opening   map[string]*indexPersist // being loaded or rebuilt, for IndexStatus
	// IndexOptions tune the vector indexes this store opens (tests and
	// benchmarks lower SwitchAt); set before the first Index call.
	IndexOptions IndexOptions

	shareMu sync.Mutex
	unshare func() // stops serving clients (share.go); nil when not shared

	feed feed // changes to watchers, and who runs which session (feed.go)
}

// Bucket names. Top-level buckets are created by migration 1.
var (
	bucketMeta           = []byte("meta")
	bucketSessions       = []byte("sessions")         // id -> Session JSON (without Report)
	bucketReports        = []byte("reports")          // id -> report text, kept off the list path
	bucketEvents         = []byte("events")           // id -> nested bucket: BE seq -> data
	bucketCheckpoints    = []byte("checkpoints")      // id -> nested bucket: name -> data
	bucketSources        = []byte("sources")          // key -> caller JSON
	bucketDocuments      = []byte("documents")        // key -> full text
	bucketChunks         = []byte("chunks")           // chunk id -> Chunk JSON
	bucketChunksBySource = []byte("chunks_by_source") // source key -> nested bucket: BE seq -> chunk id
	bucketEmbeddings     = []byte("embeddings")       // model -> nested bucket: hash -> LE float32 bytes
	bucketChunkHashes    = []byte("chunk_hashes")     // chunk id -> its content hash (migration 2)

	keySchemaVersion = []byte("schema_version")
	// keyIndexGen counts the writes that change what a vector index holds
	// (chunks and embeddings); an index file records the count it matches.
	keyIndexGen = []byte("index_gen")
)

// migrations run in order at Open, all in one transaction, so a crash half way
// leaves the file at its previous version. Entry i upgrades version i to i+1.
// Never edit or reorder a released migration; append a new one.
var migrations = []func(*bbolt.Tx) error{
	migrate1,
	migrate2,
}

// migrate1 creates the initial buckets.
func migrate1(tx *bbolt.Tx) error {
	for _, name := range [][]byte{
		bucketSessions, bucketReports, bucketEvents, bucketCheckpoints,
		bucketSources, bucketDocuments, bucketChunks, bucketChunksBySource,
		bucketEmbeddings,
	} {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
	}
	return nil
}

// migrate2 adds chunk_hashes, chunk id -> content hash, filled from the
// chunks: a vector index catches up with the store by reading it, without
// decoding every chunk's JSON.
func migrate2(tx *bbolt.Tx) error {
	hashes, err := tx.CreateBucketIfNotExists(bucketChunkHashes)
	if err != nil {
		return err
	}
	var ref struct {
		Hash string `json:"hash"`
	}
	return tx.Bucket(bucketChunks).ForEach(func(k, v []byte) error {
		ref.Hash = ""
		if err := json.Unmarshal(v, &ref); err != nil {
			return fmt.Errorf("chunk %s: %w", k, err)
		}
		return hashes.Put(bytes.Clone(k), []byte(ref.Hash))
	})
}

// SchemaVersion is the version this code writes; Open upgrades older files to
// it and refuses newer ones (a newer researchtui wrote them).
func SchemaVersion() int { return len(migrations) }

// Open opens (creating if needed) the database at path and brings its schema
// up to date. If another process holds the file, it fails after
// opt.LockTimeout with an error wrapping ErrLocked.
func Open(path string, opt Options) (*Store, error) {
	if opt.LockTimeout <= 0 {
		opt.LockTimeout = DefaultLockTimeout
	}
	if !opt.ReadOnly {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("store: create directory: %w", err)
		}
	}
	db, err := openLocked(path, opt)
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, path: path, readOnly: opt.ReadOnly}
	if err := s.checkSchema(opt.ReadOnly); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// openLocked opens the bbolt file. If the file at path was replaced while
// this process waited for its lock (a compaction renames a new file over
// it), the lock it got is on the old, unlinked file: it opens again.
func openLocked(path string, opt Options) (*bbolt.DB, error) {
	for attempt := 0; ; attempt++ {
		before, _ := os.Stat(path)
		db, err := bbolt.Open(path, 0o600, &bbolt.Options{
			Timeout:  opt.LockTimeout,
			ReadOnly: opt.ReadOnly,
		})
		if err != nil {
			if errors.Is(err, bolterrors.ErrTimeout) {
				return nil, fmt.Errorf("another researchtui is using %s (%w)", path, ErrLocked)
			}
			return nil, fmt.Errorf("store: open %s: %w", path, err)
		}
		after, _ := os.Stat(path)
		if before == nil || after == nil || os.SameFile(before, after) {
			return db, nil
		}
		db.Close()
		if attempt == 2 {
			return nil, fmt.Errorf("store: %s keeps being replaced while it is opened; try again", path)
		}
	}
}

// checkSchema runs pending migrations (read-write) or verifies that none are
// pending (read-only).
func (s *Store) checkSchema(readOnly bool) error {
	if readOnly {
		return s.db.View(func(tx *bbolt.Tx) error {
			v, err := schemaVersion(tx)
			if err != nil {
				return err
			}
			if v != len(migrations) {
				return fmt.Errorf("store: %s has schema version %d, this build needs %d; open it read-write once", s.path, v, len(migrations))
			}
			return nil
		})
	}
	return s.db.Update(func(tx *bbolt.Tx) error {
		if _, err := tx.CreateBucketIfNotExists(bucketMeta); err != nil {
			return err
		}
		v, err := schemaVersion(tx)
		if err != nil {
			return err
		}
		if v > len(migrations) {
			return fmt.Errorf("store: %s has schema version %d, newer than this build (%d); upgrade researchtui", s.path, v, len(migrations))
		}
		if v == len(migrations) {
			return nil
		}
		for i := v; i < len(migrations); i++ {
			if err := migrations[i](tx); err != nil {
				return fmt.Errorf("store: migration %d: %w", i+1, err)
			}
		}
		return tx.Bucket(bucketMeta).Put(keySchemaVersion, []byte(strconv.Itoa(len(migrations))))
	})
}

// schemaVersion reads meta/schema_version; a missing bucket or key is 0 (a
// fresh file). It is stored as decimal text so the bbolt CLI shows it plainly.
func schemaVersion(tx *bbolt.Tx) (int, error) {
	b := tx.Bucket(bucketMeta)
	if b == nil {
		return 0, nil
	}
	raw := b.Get(keySchemaVersion)
	if raw == nil {
		return 0, nil
	}
	v, err := strconv.Atoi(string(raw))
	if err != nil || v < 0 {
		return 0, fmt.Errorf("store: bad schema_version %q", raw)
	}
	return v, nil
}

// Close saves the vector indexes that changed enough (indexstore.go), then
// releases the file and its lock. Committed data is already on disk.
func (s *Store) Close() error {
	s.stopSharing() // clients first: nobody may be mid-request on a closed file
	s.closeIndexes()
	return s.db.Close()
}

// Path is the database file's path, for messages and the data directory.
func (s *Store) Path() string { return s.path }
