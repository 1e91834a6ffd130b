package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"go.etcd.io/bbolt"

	"github.com/researchtui/researchtui/store/vector"
)

// CompactResult is what a compaction did.
type CompactResult struct {
	BytesBefore, BytesAfter int64
	Pruned                  int      // embeddings no chunk used
	Indexes                 []string // models whose index file was rewritten
	RemovedIndexes          []string // index files of models with no embeddings left
}

// Compact shrinks the store: embeddings no chunk uses are deleted, the
// database is copied into a new, dense file that then atomically replaces
// the old one (bbolt files never shrink by themselves), and every vector
// index is brought up to date and rewritten without its tombstones. The
// store stays open and usable. progress, if set, is told each step.
//
// Only the process holding the store compacts it; another researchtui
// opening the data dir meanwhile is refused (ErrLocked) as usual, and one
// that was already waiting for the lock notices the swap (Open) and opens
// the new file.
func (s *Store) Compact(ctx context.Context, progress func(step string, done, total int)) (CompactResult, error) {
	var res CompactResult
	if s.readOnly {
		return res, errors.New("store: a read-only store cannot be compacted")
	}
	say := func(step string, done, total int) {
		if progress != nil {
			progress(step, done, total)
		}
	}
	if fi, err := os.Stat(s.path); err == nil {
		res.BytesBefore = fi.Size()
	}
	// Indexes are reopened on the new file: close them first (saving).
	s.closeIndexes()
	defer func() {
		s.idxMu.Lock()
		s.idxClosed = false
		s.idxMu.Unlock()
	}()

	say("pruning unused embeddings", 0, 0)
	n, err := s.pruneEmbeddings(ctx)
	res.Pruned = n
	if err != nil {
		return res, err
	}

	say("copying the database", 0, 0)
	if err := s.rewriteFile(); err != nil {
		return res, err
	}
	if fi, err := os.Stat(s.path); err == nil {
		res.BytesAfter = fi.Size()
	}

	// Every model with embeddings gets a fresh, dense index file; files of
	// models without any are removed.
	var models []string
	err = s.db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketEmbeddings).ForEachBucket(func(m []byte) error {
			models = append(models, string(m))
			return nil
		})
	})
	if err != nil {
		return res, err
	}
	want := map[string]bool{}
	for _, m := range models {
		want[s.IndexPath(m)] = true
	}
	for _, f := range s.indexFiles() {
		if !want[f] {
			h, _, _ := vector.ReadHeader(f)
			if err := os.Remove(f); err == nil {
				res.RemovedIndexes = append(res.RemovedIndexes, h.Model)
			}
		}
	}
	for _, m := range models {
		if err := s.compactIndex(ctx, m, say); err != nil {
			return res, err
		}
		res.Indexes = append(res.Indexes, m)
	}
	return res, nil
}

// pruneEmbeddings deletes embeddings whose hash no chunk has, in batches.
func (s *Store) pruneEmbeddings(ctx context.Context) (int, error) {
	type victim struct{ model, hash string }
	var victims []victim
	err := s.db.View(func(tx *bbolt.Tx) error {
		used := usedHashes(tx)
		emb := tx.Bucket(bucketEmbeddings)
		return emb.ForEachBucket(func(model []byte) error {
			return emb.Bucket(model).ForEach(func(k, _ []byte) error {
				if !used[string(k)] {
					victims = append(victims, victim{string(model), string(k)})
				}
				return nil
			})
		})
	})
	if err != nil {
		return 0, err
	}
	const batch = 5000
	for from := 0; from < len(victims); from += batch {
		if err := ctx.Err(); err != nil {
			return from, err
		}
		err := s.db.Update(func(tx *bbolt.Tx) error {
			emb := tx.Bucket(bucketEmbeddings)
			for _, v := range victims[from:min(from+batch, len(victims))] {
				if b := emb.Bucket([]byte(v.model)); b != nil {
					if err := b.Delete([]byte(v.hash)); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return from, err
		}
	}
	// Models left without any embedding lose their bucket.
	err = s.db.Update(func(tx *bbolt.Tx) error {
		emb := tx.Bucket(bucketEmbeddings)
		var empty [][]byte
		_ = emb.ForEachBucket(func(m []byte) error { // the callback never fails
			if k, _ := emb.Bucket(m).Cursor().First(); k == nil {
				empty = append(empty, append([]byte(nil), m...))
			}
			return nil
		})
		for _, m := range empty {
			if err := emb.DeleteBucket(m); err != nil {
				return err
			}
		}
		return nil
	})
	return len(victims), err
}

// rewriteFile copies the database into a dense new file beside it, then
// renames it over the old one while the old one is still open and locked,
// and reopens.
func (s *Store) rewriteFile() error {
	tmp := s.path + ".compact"
	os.Remove(tmp)
	dst, err := bbolt.Open(tmp, 0o600, &bbolt.Options{Timeout: DefaultLockTimeout, NoSync: true})
	if err != nil {
		return fmt.Errorf("store: compact: %w", err)
	}
	if err := bbolt.Compact(dst, s.db, 64<<20); err != nil {
		dst.Close()
		os.Remove(tmp)
		return fmt.Errorf("store: compact: %w", err)
	}
	dst.NoSync = false
	if err := dst.Sync(); err != nil {
		dst.Close()
		os.Remove(tmp)
		return fmt.Errorf("store: compact: %w", err)
	}
	if err := dst.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, s.path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("store: compact: %w", err)
	}
	syncDir(s.dir())
	s.db.Close()
	db, err := bbolt.Open(s.path, 0o600, &bbolt.Options{Timeout: DefaultLockTimeout})
	if err != nil {
		return fmt.Errorf("store: reopening after compaction: %w", err)
	}
	s.db = db
	return nil
}

// compactIndex brings model's index up to date, finishes its graph and
// writes it without tombstones.
func (s *Store) compactIndex(ctx context.Context, model string, say func(string, int, int)) error {
	s.idxMu.Lock()
	s.idxClosed = false
	s.idxMu.Unlock()
	p, err := s.index(model)
	if err != nil {
		return err
	}
	ix := p.ix
	done := make(chan error, 1)
	go func() { done <- ix.Wait(ctx) }()
	for waiting := true; waiting; {
		select {
		case err := <-done:
			if err != nil {
				return err
			}
			waiting = false
		case <-tick():
			st := ix.Status()
			say(fmt.Sprintf("vector index of %s: %s", model, orDefault(st.Phase, "finishing")), st.Done, st.Total)
		}
	}
	if changed, _ := ix.Unsaved(); changed > 0 {
		say("writing the vector index of "+model, 0, 0)
		if err := s.saveIndex(p); err != nil {
			return err
		}
	}
	// Close it so the next user maps the file just written.
	s.statusMu.Lock()
	delete(s.indexes, model)
	s.statusMu.Unlock()
	return ix.Close()
}

// syncDir makes a rename in dir durable (vector/file_write.go has the same
// for the index files).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // not supported everywhere; the rename is what matters
		d.Close()
	}
}

func tick() <-chan time.Time { return time.After(200 * time.Millisecond) }

func (s *Store) dir() string { return filepath.Dir(s.path) }

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
