package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"go.etcd.io/bbolt"

	"github.com/researchtui/researchtui/store/vector"
)

// The store owns one vector Index per embedding model, persisted in a file
// beside the database (vector/file.go) and kept in step with the chunks and
// embeddings in bbolt; the store is each index's vector.Keeper:
//
//   - The file records the store's index generation (a counter bumped by
//     every PutChunks, PutSourceBatch and PutEmbeddings) it was synced at.
//     Equal: the file is fresh and opening is a map and a checksum pass
//     over its small sections; the vectors are verified in the background
//     (vector/file_check.go), and a mismatch there is handled like a
//     corrupt file (indexcheck.go).
//   - Stale (the store changed since): the file's index serves at once and
//     a background catch-up compares every chunk's content hash with the
//     fingerprint the file holds for that ID (chunk_hashes, no JSON) and
//     adds, replaces or removes what differs.
//   - Missing or corrupt: the vectors are read from bbolt (the same
//     catch-up from an empty index), exact search serves at once and the
//     graph, if the collection is large enough to want one, is built in the
//     background, then saved.
//
// Saving rewrites the whole file, so it happens when it pays: after a
// background build, and at Close when enough changed (indexSaveWorth).
// What a crash loses is only work, never data: the next open catches up.

// indexPersist is a store-owned index and its file's bookkeeping: the
// index's vector.Keeper.
type indexPersist struct {
	s           *Store
	ix          *Index
	path, model string

	mu        sync.Mutex
	syncedGen uint64 // the store generation the index is known to match
	haveFile  bool
	fileSize  int64
	note      string // why the file was not used as it was, for stats

	saveMu sync.Mutex
	syncMu sync.Mutex // one catch-up at a time
}

func (p *indexPersist) gen() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.syncedGen
}

// Built saves the index after a background build (saveAfterBuild).
func (p *indexPersist) Built(stop <-chan struct{}) { p.s.saveAfterBuild(p, stop) }

// Reload refills the index from bbolt after its file failed the check
// (indexcheck.go).
func (p *indexPersist) Reload(cause error, stop <-chan struct{}) { p.s.reloadIndex(p, cause, stop) }

// Describe adds the file's path, size and note to the index's status.
func (p *indexPersist) Describe(st *IndexStatus) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st.File, st.Note = p.path, p.note
	if p.haveFile {
		st.FileSize = p.fileSize
	}
}

func bumpIndexGen(tx *bbolt.Tx) error {
	b := tx.Bucket(bucketMeta)
	var g uint64
	if v := b.Get(keyIndexGen); len(v) == 8 {
		g = binary.BigEndian.Uint64(v)
	}
	buf := make([]byte, 8)
	binary.BigEndian.PutUint64(buf, g+1)
	return b.Put(keyIndexGen, buf)
}

func indexGenTx(tx *bbolt.Tx) uint64 {
	if v := tx.Bucket(bucketMeta).Get(keyIndexGen); len(v) == 8 {
		return binary.BigEndian.Uint64(v)
	}
	return 0
}

func (s *Store) indexGen() (uint64, error) {
	var g uint64
	err := s.db.View(func(tx *bbolt.Tx) error {
		g = indexGenTx(tx)
		return nil
	})
	return g, err
}

// fingerprint condenses a chunk's content hash for the index file.
func fingerprint(hash []byte) uint64 {
	h := fnv.New64a()
	h.Write(hash)
	if v := h.Sum64(); v != 0 {
		return v
	}
	return 1 // 0 means "unverified"
}

// IndexPath is the file the vector index of model is kept in: beside the
// database, named after it and the model.
func (s *Store) IndexPath(model string) string {
	return s.indexFilePrefix() + modelSlug(model) + ".idx"
}

func (s *Store) indexFilePrefix() string {
	base := filepath.Base(s.path)
	return filepath.Join(filepath.Dir(s.path), strings.TrimSuffix(base, filepath.Ext(base))+".vectors.")
}

// modelSlug is a file-name-safe form of a model name, with a short hash of
// the exact name so that names differing only in unsafe characters (or in
// case) never share a file.
func modelSlug(model string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(model) {
		if b.Len() >= 64 {
			break
		}
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	sum := sha256.Sum256([]byte(model))
	return b.String() + "-" + hex.EncodeToString(sum[:4])
}

// Index returns the vector index of an embedding model, shared by everyone
// using this store, opening it on first use: from its file when that is
// sound (a stale file serves at once and catches up in the background),
// else rebuilt from the embeddings in bbolt. The store closes it.
func (s *Store) Index(model string) (*Index, error) {
	p, err := s.index(model)
	if err != nil {
		return nil, err
	}
	return p.ix, nil
}

// index is Index with the store's bookkeeping of it.
func (s *Store) index(model string) (*indexPersist, error) {
	if model == "" {
		return nil, errors.New("store: empty embedding model")
	}
	s.idxMu.Lock()
	defer s.idxMu.Unlock()
	if p := s.openIndexes()[model]; p != nil {
		return p, nil
	}
	if s.idxClosed {
		return nil, vector.ErrClosed
	}
	p, err := s.openIndex(model)
	if err != nil {
		return nil, err
	}
	s.statusMu.Lock()
	if s.indexes == nil {
		s.indexes = map[string]*indexPersist{}
	}
	s.indexes[model] = p
	s.statusMu.Unlock()
	return p, nil
}

func (s *Store) openIndexes() map[string]*indexPersist {
	s.statusMu.Lock()
	defer s.statusMu.Unlock()
	return s.indexes
}

// IndexStatus reports on model's index if this store has opened it (or is
// opening it now).
func (s *Store) IndexStatus(model string) (IndexStatus, bool) {
	ix := s.openedIndex(model)
	if ix == nil {
		return IndexStatus{}, false
	}
	return ix.Status(), true
}

func (s *Store) setOpening(model string, p *indexPersist) {
	s.statusMu.Lock()
	defer s.statusMu.Unlock()
	if p == nil {
		delete(s.opening, model)
		return
	}
	if s.opening == nil {
		s.opening = map[string]*indexPersist{}
	}
	s.opening[model] = p
}

func (s *Store) openIndex(model string) (*indexPersist, error) {
	p := &indexPersist{s: s, path: s.IndexPath(model), model: model}
	if !s.readOnly {
		vector.RemoveTempFiles(p.path)
	}
	gen, err := s.indexGen()
	if err != nil {
		return nil, err
	}
	ix, h, err := vector.Open(p.path, model, s.IndexOptions)
	if err == nil {
		p.haveFile, p.syncedGen = true, h.Gen
		if st, err := os.Stat(p.path); err == nil {
			p.fileSize = st.Size()
		}
		s.own(ix, p)
		ix.Start()
		if h.Gen != gen {
			ix.Go(func(stop <-chan struct{}) { _ = s.catchUp(p, stop) }) // retried at the next open or search
		}
		return p, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		p.note = "built from the store (there was no index file)"
	} else {
		p.note = "rebuilt from the store: " + err.Error()
	}
	ix = vector.New(0, s.IndexOptions)
	s.own(ix, p)
	s.setOpening(model, p)
	defer s.setOpening(model, nil)
	if err := s.catchUp(p, nil); err != nil {
		ix.Close()
		return nil, err
	}
	if !ix.Status().Graph || ix.Status().Linked == ix.Status().Nodes {
		// No build will save it: save now, so the next open maps a file.
		ix.Go(func(<-chan struct{}) { _ = s.saveIndex(p) }) // retried at the next change
	}
	return p, nil
}

// own makes ix a store-owned index: p keeps it (saves it after background
// builds, reloads it when its file fails the check).
func (s *Store) own(ix *Index, p *indexPersist) {
	p.ix = ix
	ix.SetKeeper(p)
}

// saveAfterBuild saves ix when a background build has linked everything, if
// that is worth rewriting the whole file: there is none yet, or what changed
// since the last save (vectors added or removed, nodes linked) comes to half
// the nodes. While embedding is slower than linking (any real model), a
// build finishes after every batch of vectors; saving each time would
// rewrite the file after every batch, quadratic in the collection (at 100k
// vectors, 311 MB every few seconds). So the writes of a growing index add
// up to a few times its final size; the rest is saved at Close, or caught
// up at the next open.
//
// The file is caught up with the store first if the store changed since
// the index last synced. The vectors a build linked were mostly added while
// the store changed (corpus add, a run's indexer): saved as they are, the
// file would record an old generation and hold unverified vectors, so every
// later open would read them all back from bbolt to check them, and a
// short-lived process (a search) never gets to save the result. Caught up,
// the file is fresh and the next open maps it and is done.
func (s *Store) saveAfterBuild(p *indexPersist, stop <-chan struct{}) {
	p.mu.Lock()
	have := p.haveFile
	p.mu.Unlock()
	changed, nodes := p.ix.Unsaved()
	if have && 2*changed < nodes {
		return
	}
	gen, err := s.indexGen()
	if err != nil {
		return
	}
	if gen != p.gen() {
		if err := s.catchUp(p, stop); err != nil {
			return // stopped: Close decides what to save
		}
	}
	_ = s.saveIndex(p) // retried at the next change
}

// catchUp syncs p's index with the store and records the generation it
// matched. It gives up when stop closes. Catch-ups of one index run one at
// a time: one started at open and one before a save would otherwise both
// add what is missing.
func (s *Store) catchUp(p *indexPersist, stop <-chan struct{}) error {
	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	gen, err := s.syncIndex(p.ix, p.model, stop)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.syncedGen = gen
	p.mu.Unlock()
	return nil
}

// errFileFailed: a catch-up gave up because the index file failed its check.
var errFileFailed = errors.New("store: the index file failed its check; reloading from the store")

// syncPage is how many chunks a sync reads per read transaction: short
// transactions never hold up writers for long.
const syncPage = 1024

// syncIndex makes ix hold exactly the chunks that have an embedding for
// model: every chunk ID with its current content's vector. The store walks
// its chunk hashes a page at a time and the index's Catchup decides what
// to do with each: nodes whose fingerprint matches the chunk's hash are
// kept untouched; unverified ones (added by Add, which does not know the
// hash) are compared with the stored vector; the rest are read from bbolt
// and added, and nodes whose chunk is gone are removed. It returns the
// store generation read before it started: anything written later makes
// the next open sync again.
func (s *Store) syncIndex(ix *Index, model string, stop <-chan struct{}) (uint64, error) {
	var gen uint64
	var total int
	if err := s.db.View(func(tx *bbolt.Tx) error {
		gen = indexGenTx(tx)
		total = tx.Bucket(bucketChunkHashes).Stats().KeyN
		return nil
	}); err != nil {
		return 0, err
	}
	phase := "loading vectors from the store"
	if ix.Len() > 0 {
		phase = "catching up with the store"
	}
	ix.SetPhase(phase, 0, total)
	defer ix.SetPhase("", 0, 0)
	cu := ix.Catchup()
	var after []byte
	done := 0
	for {
		select {
		case <-stop:
			return 0, vector.ErrClosed
		default:
		}
		if ix.BadFile() {
			return 0, errFileFailed // the reload starts over from empty
		}
		count := 0
		err := s.db.View(func(tx *bbolt.Tx) error {
			emb := tx.Bucket(bucketEmbeddings).Bucket([]byte(model))
			// stored reads the vector of content hash h; nil when it has
			// none (not embedded yet) or it is not float32s.
			stored := func(h []byte) []float32 {
				if emb == nil {
					return nil
				}
				raw := emb.Get(h)
				if raw == nil {
					return nil
				}
				vec, err := decodeVector(nil, raw)
				if err != nil {
					return nil
				}
				return vec
			}
			c := tx.Bucket(bucketChunkHashes).Cursor()
			k, h := c.First()
			if after != nil {
				k, h = c.Seek(after)
				if k != nil && bytes.Equal(k, after) {
					k, h = c.Next()
				}
			}
			for ; k != nil && count < syncPage; k, h = c.Next() {
				count++
				after = k
				cu.Chunk(k, fingerprint(h), func() []float32 { return stored(h) })
			}
			after = bytes.Clone(after)
			return nil
		})
		if err != nil {
			return 0, err
		}
		if err := cu.Flush(); err != nil {
			return 0, err
		}
		done += count
		ix.SetPhase(phase, done, total)
		if count < syncPage {
			break
		}
	}
	if ix.BadFile() {
		return 0, errFileFailed
	}
	cu.Finish()
	return gen, nil
}

// indexSaveWorth says whether an index that changed should be rewritten at
// Close: always while the file is small (under 64 MB) or missing, else once
// the changes reach 2% of the nodes (at least 2000). Changes left unsaved
// are caught up at the next open, in the background.
func indexSaveWorth(p *indexPersist, st IndexStatus, changes int) bool {
	if changes == 0 || st.Vectors == 0 {
		return false
	}
	p.mu.Lock()
	have := p.haveFile
	p.mu.Unlock()
	if !have || st.Nodes*st.Dim*4 < 64<<20 {
		return true
	}
	return changes >= max(2000, st.Nodes/50)
}

// saveIndex writes p's index file (unless the store is read-only).
func (s *Store) saveIndex(p *indexPersist) error {
	if s.readOnly {
		return nil
	}
	ix := p.ix
	p.saveMu.Lock()
	defer p.saveMu.Unlock()
	if err := ix.CheckFile(); err != nil {
		// Unverified or damaged vectors are never given a fresh checksum.
		return fmt.Errorf("store: not saving the vector index of %s: %w", p.model, err)
	}
	sn := ix.Snapshot()
	if sn.Live() == 0 {
		return nil
	}
	size, err := ix.Save(sn, p.path, p.model, p.gen())
	if err != nil {
		return fmt.Errorf("store: saving the vector index of %s: %w", p.model, err)
	}
	p.mu.Lock()
	p.haveFile, p.fileSize = true, size
	p.mu.Unlock()
	return nil
}

// closeIndexes stops every index's background work, saves those worth it
// and releases them.
func (s *Store) closeIndexes() {
	s.idxMu.Lock()
	s.idxClosed = true
	s.idxMu.Unlock()
	s.statusMu.Lock()
	open := s.indexes
	s.indexes = nil
	s.statusMu.Unlock()
	for _, p := range open {
		ix := p.ix
		ix.Stop()
		changes, _ := ix.Unsaved()
		if indexSaveWorth(p, ix.Status(), changes) {
			// Verify what Add put in (and pick up what others wrote) first,
			// so the file written is fresh: the next open maps it and is done.
			if gen, err := s.indexGen(); err == nil && gen != p.gen() {
				_ = s.catchUp(p, nil) // retried at the next search
			}
			_ = s.saveIndex(p) // closing: the next open catches up from the store
		}
		ix.Close()
	}
}

// openedIndex is the model's index if it is open (or opening), else nil.
func (s *Store) openedIndex(model string) *Index {
	s.statusMu.Lock()
	defer s.statusMu.Unlock()
	p := s.indexes[model]
	if p == nil {
		p = s.opening[model]
	}
	if p == nil {
		return nil
	}
	return p.ix
}
