package vector

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/viterin/vek/vek32"
)

// ErrClosed is returned by an Index used after Close. (The messages of
// this package's errors kept the "store:" they had before it left the
// store, so what a person reads is unchanged.)
var ErrClosed = errors.New("store: vector index is closed")

// Defaults of Options, measured on 768-d vectors shaped like text
// embeddings on a 2-vCPU box (BenchmarkSwitchPoint, BenchmarkIndexScale;
// the README's vector index section has the figures). The exact scan and
// the graph walk are level at 2,000 vectors and the walk is 1.4× faster at
// 5,000; at 10,000 the exact slab (30 MB) no longer fits the CPU cache and
// the walk is 4× faster (0.3 ms against 1.25 ms, recall@10 0.998) for a
// build of 0.12 ms a vector, so that is where the graph takes over.
// efConstruction 128 rather than 64 lifts recall@10 at 100k from 0.95 to
// 0.997 at the same query cost; ef 96 keeps p50 under 1 ms there.
const (
	DefaultM              = 16
	DefaultEfConstruction = 128
	DefaultEfSearch       = 96
	DefaultSwitchAt       = 10000
)

// Options tune an Index. The zero value is the default.
type Options struct {
	// M is the graph's degree on the upper layers; layer 0 keeps up to 2M
	// links per node. 0 means DefaultM.
	M int
	// EfConstruction is the candidate list of an insertion. 0 means
	// DefaultEfConstruction.
	EfConstruction int
	// EfSearch is the candidate list of a query (at least k). 0 means
	// DefaultEfSearch.
	EfSearch int
	// SwitchAt is how many live vectors make the index build its graph;
	// below that every search is exact. 0 means DefaultSwitchAt, a negative
	// value never builds a graph (exact only), 1 builds it from the start.
	SwitchAt int
	// Workers bounds the goroutines of a background graph build. 0 means
	// GOMAXPROCS.
	Workers int
	// Seed makes the graph's levels reproducible; 0 picks a random seed.
	Seed uint64
}

func (o Options) withDefaults() Options {
	if o.M <= 1 {
		o.M = DefaultM
	}
	if o.EfConstruction <= 0 {
		o.EfConstruction = DefaultEfConstruction
	}
	if o.EfSearch <= 0 {
		o.EfSearch = DefaultEfSearch
	}
	if o.SwitchAt == 0 {
		o.SwitchAt = DefaultSwitchAt
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.Seed == 0 {
		o.Seed = rand.Uint64()
	}
	return o
}

// Nodes live in segments: a base segment mapped from the index file, then
// heap segments of segSize nodes. A node's number never changes while the
// Index is open and its vector is never written again, so searches read
// vectors without locks of their own.
const (
	segShift = 11
	segSize  = 1 << segShift
	segMask  = segSize - 1
)

// segment holds consecutive nodes. In the base segment the slices view the
// mapped file; graph fields are nil until the graph exists.
type segment struct {
	vecs   []float32 // dim per node, unit length
	ids    []string
	fps    []uint64 // content fingerprint per node, 0 when unverified
	levels []uint8
	links0 []uint32   // per node: count, then up to 2M neighbours (layer 0)
	upper  [][]uint32 // per node: level × (count + M neighbours), nil at level 0
	nodes  int
}

// Index is the vector index of one embedding model: vectors keyed by chunk
// ID, searched by cosine similarity.
//
// While a collection is small (under Options.SwitchAt live vectors)
// every search is an exact SIMD scan, the reference (README: The knowledge base and its vector index). Past that
// the Index builds its own HNSW graph in the background and searches walk
// it; nodes the graph does not cover yet (the tail) are scanned exactly and
// merged, so a vector is searchable the moment Add returns and a search
// never waits for a build. Removing or re-adding an ID leaves a tombstone:
// the node still routes walks but is never returned, and a repair relinks
// its neighbours once tombstones pass a tenth of the graph.
//
// An Index is safe for concurrent use. Searches and graph insertions share
// a read lock (neighbour lists are read and written atomically, writers of
// one list serialise on a striped mutex); Add and Remove take the write lock
// for the few microseconds of appending a node.
type Index struct {
	opt Options

	mu      sync.RWMutex
	dim     int
	n       int // nodes 0..n-1, live or tombstoned
	live    int
	base    *segment
	baseN   int
	segs    []*segment
	pos     map[string]uint32
	posOnce sync.Once
	del     []uint64 // tombstones, one bit per node
	purged  []uint64 // tombstones the repair has unlinked
	tombs   int      // tombstones in the graph not yet unlinked
	rng     *rand.Rand
	g       *graph
	closed  bool
	file    *mapping // the file the base segment views; nil if none

	// The file's vectors are verified after opening (file_check.go): check
	// is that verification (nil when there is nothing left to verify);
	// gate is non-nil while the index reloads after a failed check, and
	// searches wait for it; badFile is set from the failure to the reset.
	check    atomic.Pointer[fileCheck]
	gate     chan struct{} // under mu
	badFile  atomic.Bool
	failOnce sync.Once

	// bookkeeping for persistence (keeper.go)
	changes int // adds and removes since the index was loaded or saved; under mu
	fileGen uint64
	keeper  Keeper // nil unless a store keeps the index

	linked atomic.Int64 // graph insertions since load or save

	phase atomic.Pointer[indexPhase]

	bgMu      sync.Mutex
	bgN       int
	bgIdle    chan struct{}
	stop      chan struct{}
	stopOnce  sync.Once
	repairing bool // under bgMu
}

// New returns an empty index for vectors of length dim; a dim of zero or
// less means "set by the first Add". The zero Options are the defaults.
func New(dim int, opt Options) *Index {
	ix := newIndex(dim, opt)
	ix.posOnce.Do(func() {}) // the ID map is kept from the start
	return ix
}

func newIndex(dim int, opt Options) *Index {
	opt = opt.withDefaults()
	ix := &Index{
		opt:  opt,
		dim:  max(dim, 0),
		pos:  make(map[string]uint32),
		rng:  rand.New(rand.NewPCG(opt.Seed, opt.Seed^0x9e3779b97f4a7c15)),
		stop: make(chan struct{}),
	}
	return ix
}

// Dim is the vector length, or 0 while an index created without one is empty.
func (ix *Index) Dim() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.dim
}

// Len is the number of live vectors in the index.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.live
}

// Has reports whether id has a vector in the index: a keeper's tests use
// it to see that a catch-up removed what the store no longer has.
func (ix *Index) Has(id string) bool {
	ix.ensurePos()
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	_, ok := ix.pos[id]
	return ok && !ix.closed
}

func (ix *Index) seg(node uint32) (*segment, int) {
	i := int(node)
	if i < ix.baseN {
		return ix.base, i
	}
	j := i - ix.baseN
	return ix.segs[j>>segShift], j & segMask
}

func (ix *Index) vec(node uint32) []float32 {
	s, i := ix.seg(node)
	d := ix.dim
	return s.vecs[i*d : i*d+d : i*d+d]
}

func (ix *Index) id(node uint32) string {
	s, i := ix.seg(node)
	return s.ids[i]
}

func (ix *Index) isDel(node uint32) bool { return ix.del[node>>6]&(1<<(node&63)) != 0 }

// ensurePos builds the ID map of an index opened from a file. It is built on
// first need (Add, Remove, a sync), not at open: a million IDs take a few
// hundred milliseconds that a search never needs.
func (ix *Index) ensurePos() {
	ix.posOnce.Do(func() {
		ix.mu.RLock()
		base, n := ix.base, ix.baseN
		ix.mu.RUnlock()
		m := make(map[string]uint32, n)
		var dup []uint32
		for i := 0; i < n; i++ {
			id := base.ids[i]
			if old, ok := m[id]; ok {
				dup = append(dup, old) // a damaged file; the later one wins
			}
			m[id] = uint32(i)
		}
		ix.mu.Lock()
		ix.pos = m
		for _, d := range dup {
			if !ix.isDel(d) {
				ix.tombstoneLocked(d)
			}
		}
		ix.mu.Unlock()
	})
}

// Add stores a normalised copy of vec under id, replacing any vector already
// stored under that id (the same vector again changes nothing). It fails with ErrDimension if len(vec) differs from
// the index's dimension. Once the graph exists, Add also links the vector
// into it (a fraction of a millisecond), unless a background build is
// running, which then takes it.
func (ix *Index) Add(id string, vec []float32) error { return ix.add(id, vec, 0) }

// add is Add with the content fingerprint of the vector (0: unverified).
func (ix *Index) add(id string, vec []float32, fp uint64) error {
	return ix.addBatch([]string{id}, [][]float32{vec}, []uint64{fp})
}

// AddBatch is Add for many vectors under one acquisition of the write lock:
// adding a collection one Add at a time would wait, at every vector, for
// the graph insertions a background build has in flight. A vector that
// cannot be added (empty, zero, another dimension) is left out and the
// first such error is returned once the others are in.
func (ix *Index) AddBatch(ids []string, vecs [][]float32) error {
	return ix.addBatch(ids, vecs, nil)
}

// addBatch adds vecs[i] under ids[i] with fingerprint fps[i] (nil: all 0).
func (ix *Index) addBatch(ids []string, vecs [][]float32, fps []uint64) error {
	var first error
	fail := func(err error) {
		if first == nil {
			first = err
		}
	}
	nvs := make([][]float32, len(vecs))
	for i, v := range vecs {
		if len(v) == 0 {
			fail(fmt.Errorf("store: empty vector for %q", ids[i]))
			continue
		}
		nv, err := normalized(v)
		if err != nil {
			fail(fmt.Errorf("%w for %q", err, ids[i]))
			continue
		}
		nvs[i] = nv
	}
	ix.ensurePos()
	ix.mu.Lock()
	if ix.closed {
		ix.mu.Unlock()
		return ErrClosed
	}
	added := 0
	for i, nv := range nvs {
		if nv == nil {
			continue
		}
		if ix.dim == 0 {
			ix.dim = len(nv)
		}
		if len(nv) != ix.dim {
			fail(fmt.Errorf("%w: %q has %d, index has %d", ErrDimension, ids[i], len(nv), ix.dim))
			continue
		}
		var fp uint64
		if fps != nil {
			fp = fps[i]
		}
		if old, ok := ix.pos[ids[i]]; ok {
			if ix.sameVecLocked(old, nv) {
				// Already there: a catch-up with the store and the writer
				// that committed the vector may both add it.
				if s, j := ix.seg(old); fp != 0 && s.fps[j] == 0 {
					s.fps[j] = fp
					ix.changes++
				}
				continue
			}
			ix.tombstoneLocked(old)
		}
		ix.pos[ids[i]] = ix.appendNode(ids[i], nv, fp)
		ix.live++
		ix.changes++
		added++
	}
	drain := false
	switch {
	case added == 0:
	case ix.g == nil:
		if ix.opt.SwitchAt > 0 && ix.live >= ix.opt.SwitchAt {
			ix.enableGraphLocked()
			if ix.n <= 64 {
				drain = true
			} else {
				ix.startBuilderLocked()
			}
		}
	case ix.g.building:
	case added > 64:
		ix.startBuilderLocked() // link a large batch on every core
	default:
		drain = true
	}
	ix.mu.Unlock()
	if drain {
		ix.drain(nil)
	}
	ix.maybeRepair()
	return first
}

// sameVecLocked reports whether node holds exactly the normalised vector
// nv; the caller holds the lock.
func (ix *Index) sameVecLocked(node uint32, nv []float32) bool {
	for i, f := range ix.vec(node) {
		if math.Float32bits(f) != math.Float32bits(nv[i]) {
			return false
		}
	}
	return true
}

// appendNode adds a node at the end; the caller holds the write lock.
func (ix *Index) appendNode(id string, v []float32, fp uint64) uint32 {
	node := uint32(ix.n)
	j := ix.n - ix.baseN
	if j>>segShift == len(ix.segs) {
		s := &segment{}
		if len(ix.segs) > 0 || ix.baseN > 0 {
			// A collection past one segment grows by whole segments.
			s.vecs = make([]float32, 0, segSize*ix.dim)
		}
		ix.segs = append(ix.segs, s)
	}
	s := ix.segs[j>>segShift]
	s.vecs = append(s.vecs, v...)
	s.ids = append(s.ids, id)
	s.fps = append(s.fps, fp)
	s.nodes++
	if ix.g != nil {
		ix.g.allocNode(s, ix.randomLevel())
	}
	ix.n++
	for ix.n > 64*len(ix.del) {
		ix.del = append(ix.del, 0)
		ix.purged = append(ix.purged, 0)
	}
	return node
}

// tombstoneLocked marks node deleted; the caller holds the write lock (so no
// insertion is in flight) and has removed or replaced its ID in pos.
func (ix *Index) tombstoneLocked(node uint32) {
	ix.del[node>>6] |= 1 << (node & 63)
	ix.live--
	if ix.g == nil {
		return
	}
	ix.tombs++
	g := ix.g
	g.mu.Lock()
	if g.hasEP && g.ep == node {
		ix.pickEntryLocked()
	}
	g.mu.Unlock()
}

// Remove deletes id's vector and reports whether it was present.
func (ix *Index) Remove(id string) bool {
	ix.ensurePos()
	ix.mu.Lock()
	node, ok := ix.pos[id]
	if !ok || ix.closed {
		ix.mu.Unlock()
		return false
	}
	delete(ix.pos, id)
	ix.tombstoneLocked(node)
	ix.changes++
	ix.mu.Unlock()
	ix.maybeRepair()
	return true
}

// Search returns the k vectors most similar to q by cosine similarity, best
// first (equal scores by ID). q need not be normalised. It fails with
// ErrDimension if len(q) differs from the index's dimension; an empty index
// returns no hits.
func (ix *Index) Search(q []float32, k int) ([]Hit, error) {
	return ix.SearchEf(q, k, 0)
}

// SearchEf is Search with the graph walk's candidate list set to ef (0: the
// index's EfSearch). A larger ef finds more of the true neighbours and
// costs more; exact-only indexes ignore it.
func (ix *Index) SearchEf(q []float32, k, ef int) ([]Hit, error) {
	ix.awaitFileCheck()
	ix.mu.RLock()
	for ix.gate != nil {
		// The file failed its check: wait for the vectors from the store.
		gate := ix.gate
		ix.mu.RUnlock()
		<-gate
		ix.mu.RLock()
	}
	defer ix.mu.RUnlock()
	if ix.closed {
		return nil, ErrClosed
	}
	if ix.live == 0 || k <= 0 {
		return nil, nil
	}
	if len(q) != ix.dim {
		return nil, fmt.Errorf("%w: query has %d, index has %d", ErrDimension, len(q), ix.dim)
	}
	nq, err := normalized(q)
	if err != nil {
		return nil, fmt.Errorf("%w (query)", err)
	}
	if ef <= 0 {
		ef = ix.opt.EfSearch
	}
	ef = max(ef, k)
	var found []cand
	from := 0
	if g := ix.g; g != nil {
		g.mu.Lock()
		ep, top, hasEP := g.ep, g.maxLevel, g.hasEP
		from = g.wm
		g.mu.Unlock()
		if hasEP {
			found = ix.walk(nq, ep, top, ef)
		}
	}
	if from < ix.n {
		found = append(found, ix.scan(nq, from, k)...)
	}
	return ix.hits(found, k), nil
}

// hits turns candidates (possibly repeated) into the k best hits, best
// first, ties broken by ID as the exact index does.
func (ix *Index) hits(found []cand, k int) []Hit {
	seen := make(map[uint32]bool, len(found))
	out := make([]Hit, 0, len(found))
	for _, c := range found {
		if seen[c.node] {
			continue
		}
		seen[c.node] = true
		out = append(out, Hit{ID: ix.id(c.node), Score: c.sim})
	}
	sort.Slice(out, func(i, j int) bool { return better(out[i], out[j]) })
	if len(out) > k {
		out = out[:k]
	}
	return out
}

// scan is the exact search over nodes from..n-1: one SIMD dot product per
// live node, the k best kept with equal scores ordered by ID as in Exact.
func (ix *Index) scan(q []float32, from, k int) []cand {
	h := make([]cand, 0, k)
	// worse reports whether a ranks below b; IDs are only read on ties.
	worse := func(a, b cand) bool {
		if a.sim != b.sim {
			return a.sim < b.sim
		}
		return ix.id(a.node) > ix.id(b.node)
	}
	down := func(i int) {
		for {
			w, l, r := i, 2*i+1, 2*i+2
			if l < len(h) && worse(h[l], h[w]) {
				w = l
			}
			if r < len(h) && worse(h[r], h[w]) {
				w = r
			}
			if w == i {
				return
			}
			h[i], h[w] = h[w], h[i]
			i = w
		}
	}
	d := ix.dim
	for node := from; node < ix.n; {
		s, i := ix.seg(uint32(node))
		end := node + s.nodes - i
		for ; node < end; node, i = node+1, i+1 {
			if ix.isDel(uint32(node)) {
				continue
			}
			c := cand{vek32.Dot(q, s.vecs[i*d:i*d+d]), uint32(node)}
			if len(h) < k {
				h = append(h, c)
				for j := len(h) - 1; j > 0; {
					p := (j - 1) / 2
					if !worse(h[j], h[p]) {
						break
					}
					h[j], h[p] = h[p], h[j]
					j = p
				}
				continue
			}
			if c.sim < h[0].sim || !worse(h[0], c) {
				continue
			}
			h[0] = c
			down(0)
		}
	}
	return h
}
