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
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"go.etcd.io/bbolt"
)

// The store owns one vector Index per embedding model, persisted in a file
// beside the database (indexfile.go) and kept in step with the chunks and
// embeddings in bbolt:
//
//   - The file records the store's index generation (a counter bumped by
//     every PutChunks, PutSourceBatch and PutEmbeddings) it was synced at.
//     Equal: the file is fresh and opening is a map and a checksum pass
//     over its small sections; the vectors are verified in the background
//     (indexcheck.go), and a mismatch there is handled like a corrupt file.
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

// indexPersist is a store-owned index's file bookkeeping.
type indexPersist struct {
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
	if model == "" {
		return nil, errors.New("store: empty embedding model")
	}
	s.idxMu.Lock()
	defer s.idxMu.Unlock()
	if ix := s.openIndexes()[model]; ix != nil {
		return ix, nil
	}
	if s.idxClosed {
		return nil, ErrIndexClosed
	}
	ix, err := s.openIndex(model)
	if err != nil {
		return nil, err
	}
	s.statusMu.Lock()
	if s.indexes == nil {
		s.indexes = map[string]*Index{}
	}
	s.indexes[model] = ix
	s.statusMu.Unlock()
	return ix, nil
}

func (s *Store) openIndexes() map[string]*Index {
	s.statusMu.Lock()
	defer s.statusMu.Unlock()
	return s.indexes
}

// IndexStatus reports on model's index if this store has opened it (or is
// opening it now).
func (s *Store) IndexStatus(model string) (IndexStatus, bool) {
	s.statusMu.Lock()
	ix := s.indexes[model]
	if ix == nil {
		ix = s.opening[model]
	}
	s.statusMu.Unlock()
	if ix == nil {
		return IndexStatus{}, false
	}
	return ix.Status(), true
}

func (s *Store) setOpening(model string, ix *Index) {
	s.statusMu.Lock()
	defer s.statusMu.Unlock()
	if ix == nil {
		delete(s.opening, model)
		return
	}
	if s.opening == nil {
		s.opening = map[string]*Index{}
	}
	s.opening[model] = ix
}

func (s *Store) openIndex(model string) (*Index, error) {
	p := &indexPersist{path: s.IndexPath(model), model: model}
	if !s.readOnly {
		removeTempFiles(p.path)
	}
	gen, err := s.indexGen()
	if err != nil {
		return nil, err
	}
	ix, h, err := loadIndexFile(p.path, model, s.IndexOptions)
	if err == nil {
		p.haveFile, p.syncedGen = true, h.gen
		if st, err := os.Stat(p.path); err == nil {
			p.fileSize = st.Size()
		}
		s.own(ix, p)
		ix.startFileCheck()
		ix.resume()
		if h.gen != gen {
			ix.goBackground(func() { _ = s.catchUp(ix, ix.stop) }) // retried at the next open or search
		}
		return ix, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		p.note = "built from the store (there was no index file)"
	} else {
		p.note = "rebuilt from the store: " + err.Error()
	}
	ix = NewIndexWith(0, s.IndexOptions)
	s.own(ix, p)
	s.setOpening(model, ix)
	defer s.setOpening(model, nil)
	if err := s.catchUp(ix, nil); err != nil {
		ix.Close()
		return nil, err
	}
	if !ix.Status().Graph || ix.Status().Linked == ix.Status().Nodes {
		// No build will save it: save now, so the next open maps a file.
		ix.goBackground(func() { _ = s.saveIndex(ix) }) // retried at the next change
	}
	return ix, nil
}

// own makes ix a store-owned index: saved after background builds.
func (s *Store) own(ix *Index, p *indexPersist) {
	ix.persist = p
	ix.afterBuild = func() { s.saveAfterBuild(ix) }
	ix.onBadFile = func(cause error) { s.reloadIndex(ix, cause) }
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
func (s *Store) saveAfterBuild(ix *Index) {
	p := ix.persist
	p.mu.Lock()
	have := p.haveFile
	p.mu.Unlock()
	ix.mu.RLock()
	changed, nodes := ix.changes+int(ix.linked.Load()), ix.n
	ix.mu.RUnlock()
	if have && 2*changed < nodes {
		return
	}
	gen, err := s.indexGen()
	if err != nil {
		return
	}
	if gen != ix.persist.gen() {
		if err := s.catchUp(ix, ix.stop); err != nil {
			return // stopped: Close decides what to save
		}
	}
	_ = s.saveIndex(ix) // retried at the next change
}

// catchUp syncs ix with the store and records the generation it matched.
// It gives up when stop closes. Catch-ups of one index run one at a time:
// one started at open and one before a save would otherwise both add what
// is missing.
func (s *Store) catchUp(ix *Index, stop <-chan struct{}) error {
	p := ix.persist
	p.syncMu.Lock()
	defer p.syncMu.Unlock()
	gen, err := s.syncIndex(ix, p.model, stop)
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
// model: every chunk ID with its current content's vector. Nodes whose
// fingerprint matches the chunk's hash are kept untouched; unverified ones
// (added by Add, which does not know the hash) are compared with the
// stored vector; the rest are read from bbolt and added, and nodes whose
// chunk is gone are removed. It returns the store generation read before it
// started: anything written later makes the next open sync again.
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
	ix.setPhase(phase, 0, total)
	defer ix.setPhase("", 0, 0)
	ix.ensurePos()
	ix.mu.RLock()
	n0 := ix.n
	ix.mu.RUnlock()
	seen := make([]uint64, (n0+63)/64)
	type addition struct {
		id  string
		vec []float32
		fp  uint64
	}
	type verified struct {
		node uint32
		fp   uint64
	}
	var after []byte
	done := 0
	for {
		select {
		case <-stop:
			return 0, ErrIndexClosed
		default:
		}
		if ix.badFile.Load() {
			return 0, errFileFailed // the reload starts over from empty
		}
		var adds []addition
		var ok []verified
		count := 0
		err := s.db.View(func(tx *bbolt.Tx) error {
			emb := tx.Bucket(bucketEmbeddings).Bucket([]byte(model))
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
				fp := fingerprint(h)
				node, nodeFP, found := ix.lookup(k)
				if found && nodeFP == fp {
					if int(node) < n0 {
						seen[node>>6] |= 1 << (node & 63)
					}
					continue
				}
				var raw []byte
				if emb != nil {
					raw = emb.Get(h)
				}
				if raw == nil {
					continue // not embedded (yet): not searchable; a stale node goes
				}
				vec, err := decodeVector(nil, raw)
				if err != nil || len(vec) == 0 {
					continue
				}
				if d := ix.Dim(); d != 0 && len(vec) != d {
					continue // another dimension under the same name: never mixed
				}
				if found && nodeFP == 0 && ix.holds(node, vec) {
					ok = append(ok, verified{node, fp})
					if int(node) < n0 {
						seen[node>>6] |= 1 << (node & 63)
					}
					continue
				}
				adds = append(adds, addition{string(k), vec, fp})
			}
			after = bytes.Clone(after)
			return nil
		})
		if err != nil {
			return 0, err
		}
		ix.verify(func(set func(node uint32, fp uint64)) {
			for _, v := range ok {
				set(v.node, v.fp)
			}
		})
		if len(adds) > 0 {
			ids, vecs, fps := make([]string, len(adds)), make([][]float32, len(adds)), make([]uint64, len(adds))
			for i, a := range adds {
				ids[i], vecs[i], fps[i] = a.id, a.vec, a.fp
			}
			// A zero or non-finite stored vector cannot be ranked: that
			// chunk stays out rather than failing the whole index.
			if err := ix.addBatch(ids, vecs, fps); errors.Is(err, ErrIndexClosed) {
				return 0, err
			}
		}
		done += count
		ix.setPhase(phase, done, total)
		if count < syncPage {
			break
		}
	}
	if ix.badFile.Load() {
		return 0, errFileFailed
	}
	// Nodes the store no longer backs: their chunk is gone, changed without
	// an embedding, or its ID was re-added above.
	var gone []string
	ix.mu.RLock()
	for node := uint32(0); int(node) < n0 && int(node) < ix.n; node++ {
		if seen[node>>6]&(1<<(node&63)) != 0 || ix.isDel(node) {
			continue
		}
		if id := ix.id(node); ix.pos[id] == node {
			gone = append(gone, id)
		}
	}
	ix.mu.RUnlock()
	for _, id := range gone {
		ix.Remove(id)
	}
	return gen, nil
}

// lookup finds id's node and its fingerprint.
func (ix *Index) lookup(id []byte) (uint32, uint64, bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	node, ok := ix.pos[string(id)]
	if !ok || ix.closed {
		return 0, 0, false
	}
	s, i := ix.seg(node)
	return node, s.fps[i], true
}

// holds reports whether node's vector is vec, normalised.
func (ix *Index) holds(node uint32, vec []float32) bool {
	nv, err := normalized(vec)
	if err != nil {
		return false
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed || int(node) >= ix.n || len(nv) != ix.dim {
		return false
	}
	for i, f := range ix.vec(node) {
		if math.Float32bits(f) != math.Float32bits(nv[i]) {
			return false
		}
	}
	return true
}

// verify records fingerprints of nodes found to hold their chunk's vector.
func (ix *Index) verify(each func(set func(node uint32, fp uint64))) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		return
	}
	each(func(node uint32, fp uint64) {
		if int(node) < ix.n {
			s, i := ix.seg(node)
			s.fps[i] = fp
			ix.changes++
		}
	})
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

// saveIndex writes ix's file (for store-owned, writable indexes).
func (s *Store) saveIndex(ix *Index) error {
	p := ix.persist
	if p == nil || s.readOnly {
		return nil
	}
	p.saveMu.Lock()
	defer p.saveMu.Unlock()
	if err := ix.checkFile(nil); err != nil {
		// Unverified or damaged vectors are never given a fresh checksum.
		return fmt.Errorf("store: not saving the vector index of %s: %w", p.model, err)
	}
	ix.repairBeforeSave()
	sn := ix.snapshot()
	live := sn.n
	for node := 0; node < sn.n; node++ {
		if sn.isDel(node) {
			live--
		}
	}
	if live == 0 {
		return nil
	}
	p.mu.Lock()
	gen := p.syncedGen
	p.mu.Unlock()
	size, err := writeIndexFile(p.path, p.model, gen, sn)
	if err != nil {
		return fmt.Errorf("store: saving the vector index of %s: %w", p.model, err)
	}
	ix.mu.Lock()
	ix.changes -= sn.changes
	ix.mu.Unlock()
	ix.linked.Add(-sn.linkedCnt)
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
	for _, ix := range open {
		ix.stopBackground()
		ix.mu.RLock()
		changes := ix.changes
		ix.mu.RUnlock()
		if indexSaveWorth(ix.persist, ix.Status(), changes+int(ix.linked.Load())) {
			// Verify what Add put in (and pick up what others wrote) first,
			// so the file written is fresh: the next open maps it and is done.
			if gen, err := s.indexGen(); err == nil && gen != ix.persist.gen() {
				_ = s.catchUp(ix, nil) // retried at the next search
			}
			_ = s.saveIndex(ix) // closing: the next open catches up from the store
		}
		ix.Close()
	}
}

// openedIndex is the model's index if it is open (or opening), else nil.
func (s *Store) openedIndex(model string) *Index {
	s.statusMu.Lock()
	defer s.statusMu.Unlock()
	if ix := s.indexes[model]; ix != nil {
		return ix
	}
	return s.opening[model]
}
