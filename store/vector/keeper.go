package vector

import (
	"errors"
	"math"
)

// A Keeper keeps an Index in step with where its vectors come from (the
// store and its database) and owns its file: it decides when a save pays,
// catches the index up (Catchup) and refills it when the file fails its
// check. The index calls it from its own background work, which is why
// these are callbacks: a build finishes, or a check fails, long after the
// call that started it returned. stop closes when the index stops (Stop,
// Close); long work gives up then.
type Keeper interface {
	// Built is called when a background build has linked every node: the
	// time to save the file, if that pays.
	Built(stop <-chan struct{})
	// Reload is called once, in the background, when the file's vectors
	// fail their check (cause wraps ErrCorrupt). Searches wait meanwhile.
	// The keeper empties the index (DropFile), refills it and calls
	// Reloaded; searches also go on when Reload returns.
	Reload(cause error, stop <-chan struct{})
	// Describe adds what the keeper knows of the index's file (File,
	// FileSize, Note) to a Status.
	Describe(st *Status)
}

// SetKeeper makes k the index's keeper. It must be called before the index
// is shared or started (Start), and at most once.
func (ix *Index) SetKeeper(k Keeper) { ix.keeper = k }

// Go runs f as the index's background work, with the channel that closes
// when the index stops: Stop and Close wait for f. It reports false, and f
// never runs, if the index is stopping already.
func (ix *Index) Go(f func(stop <-chan struct{})) bool {
	return ix.goBackground(func() { f(ix.stop) })
}

// Unsaved is how much changed since the index was opened or saved (vectors
// added and removed, nodes linked into the graph), against its nodes: a
// keeper weighs the two to decide whether rewriting the whole file pays.
func (ix *Index) Unsaved() (changes, nodes int) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.changes + int(ix.linked.Load()), ix.n
}

// Catchup brings an index in step with a keeper's vectors. The keeper walks
// everything it holds (Chunk, for every ID), applies what it learnt after
// each page of its walk (Flush), and finally lets the catch-up remove what
// it no longer holds (Finish). Nodes whose fingerprint matches are kept
// without reading a vector; unverified nodes (added by Add, which knows no
// fingerprint) are compared with the keeper's vector and keep their place
// when it is the same; the rest are added.
type Catchup struct {
	ix   *Index
	n0   int      // nodes when the catch-up began; later ones are not judged
	seen []uint64 // nodes below n0 the keeper still holds

	ok   []verified
	ids  []string
	vecs [][]float32
	fps  []uint64
}

type verified struct {
	node uint32
	fp   uint64
}

// Catchup starts a catch-up of the index (the keeper runs one at a time).
func (ix *Index) Catchup() *Catchup {
	ix.ensurePos()
	ix.mu.RLock()
	n0 := ix.n
	ix.mu.RUnlock()
	return &Catchup{ix: ix, n0: n0, seen: make([]uint64, (n0+63)/64)}
}

// Chunk tells the catch-up that the keeper holds id, whose content has the
// fingerprint fp (never 0: that means unverified). vec reads the keeper's
// vector of it; it is called only when the index does not hold that
// content already, so a keeper can call Chunk inside its read transaction
// and pay for vectors only where something changed. A nil or empty vector
// (not embedded yet), or one of another dimension, leaves id out of the
// index.
func (c *Catchup) Chunk(id []byte, fp uint64, vec func() []float32) {
	ix := c.ix
	node, nodeFP, found := ix.lookup(id)
	if found && nodeFP == fp {
		c.see(node)
		return
	}
	v := vec()
	if len(v) == 0 {
		return // not embedded (yet): not searchable; a stale node goes
	}
	if d := ix.Dim(); d != 0 && len(v) != d {
		return // another dimension under the same name: never mixed
	}
	if found && nodeFP == 0 && ix.holds(node, v) {
		c.ok = append(c.ok, verified{node, fp})
		c.see(node)
		return
	}
	c.ids, c.vecs, c.fps = append(c.ids, string(id)), append(c.vecs, v), append(c.fps, fp)
}

func (c *Catchup) see(node uint32) {
	if int(node) < c.n0 {
		c.seen[node>>6] |= 1 << (node & 63)
	}
}

// Flush applies what the Chunk calls since the last Flush found: the
// fingerprints of nodes verified, then the vectors to add. A zero or
// non-finite vector cannot be ranked: it is left out rather than failing
// the whole index. The only error is ErrClosed.
func (c *Catchup) Flush() error {
	ix := c.ix
	ix.verify(c.ok)
	c.ok = c.ok[:0]
	if len(c.ids) == 0 {
		return nil
	}
	err := ix.addBatch(c.ids, c.vecs, c.fps)
	c.ids, c.vecs, c.fps = nil, nil, nil
	if errors.Is(err, ErrClosed) {
		return err
	}
	return nil
}

// Finish removes the nodes the keeper no longer backs: their chunk is
// gone, changed without a vector, or its ID was added again by Flush.
func (c *Catchup) Finish() {
	ix := c.ix
	var gone []string
	ix.mu.RLock()
	for node := uint32(0); int(node) < c.n0 && int(node) < ix.n; node++ {
		if c.seen[node>>6]&(1<<(node&63)) != 0 || ix.isDel(node) {
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

// verify records the fingerprints of nodes found to hold their chunk's
// vector.
func (ix *Index) verify(ok []verified) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		return
	}
	for _, v := range ok {
		if int(v.node) < ix.n {
			s, i := ix.seg(v.node)
			s.fps[i] = v.fp
			ix.changes++
		}
	}
}
