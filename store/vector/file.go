package vector

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"time"
	"unsafe"
)

// The index file holds one model's vectors, IDs and graph, laid out so that
// opening it is a memory map and a checksum pass over everything but the
// vectors (whose checksum is verified in the background: file_check.go):
// no parsing, no JSON, no per-vector work. All numbers are little-endian.
//
//	header, 4096 bytes:
//	  0 magic "RTUIVIDX"        8 version u32      12 dim u32
//	 16 flags u32 (1: graph)   20 M u32           24 nodes u64
//	 32 linked u64 (graph covers nodes below)      40 efConstruction u32
//	 44 maxLevel i32           48 entry u32       52 reserved u32
//	 56 store generation u64   64 saved at (unix ns) i64
//	 72 model name length u32, 80 model name (≤ 512 bytes)
//	 1024 section table: 8 × {offset u64, length u64, crc32 u32, 0 u32, 0 u64}
//	 4092 crc32 (IEEE) of bytes 0..4091
//	sections, each at a 4096-byte boundary:
//	  0 vectors  nodes × dim float32, unit length
//	  1 id ends  nodes+1 u64 offsets into section 2
//	  2 ids      chunk IDs, concatenated
//	  3 prints   nodes u64: fingerprint of each chunk's content hash, 0 unverified
//	  4 levels   nodes u8                                  (graph only)
//	  5 layer 0  nodes × (1 + 2M) u32: count, neighbours   (graph only)
//	  6 upper    nodes u32: offset into section 7, or none  (graph only)
//	  7 arena    level × (1 + M) u32 per node above layer 0 (graph only)
//
// Tombstones are never written: saving renumbers the live nodes.

const (
	fileMagic    = "RTUIVIDX"
	fileVersion  = 1
	headerSize   = 4096
	sectionAlign = 4096
	nSections    = 8
	maxModelName = 512
	flagGraph    = 1
)

const (
	secVectors = iota
	secIDEnds
	secIDs
	secPrints
	secLevels
	secLinks0
	secUpperIdx
	secArena
)

// ErrCorrupt wraps every reason an index file is not used as it is: a
// keeper rebuilds the index then, and says why (store stats shows the
// reason without this prefix).
var ErrCorrupt = errors.New("index file unusable")

type section struct {
	off, len uint64
	crc      uint32
}

type fileHeader struct {
	dim, m, efC   int
	flags         uint32
	nodes, linked uint64
	maxLevel      int32
	ep            uint32
	gen           uint64
	saved         time.Time
	model         string
	sections      [nSections]section
	checksum      uint32 // the header's crc (for stats)
}

// mapping is an index file's bytes in memory (mmap_*.go).
type mapping struct {
	data  []byte
	unmap func([]byte) error
}

func (m *mapping) close() error {
	if m.unmap == nil {
		return nil
	}
	err := m.unmap(m.data)
	m.data = nil
	return err
}

var littleEndianHost = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

func parseHeader(b []byte) (fileHeader, error) {
	var h fileHeader
	if len(b) < headerSize {
		return h, fmt.Errorf("%w: %d bytes is shorter than a header", ErrCorrupt, len(b))
	}
	le := binary.LittleEndian
	if string(b[:8]) != fileMagic {
		return h, fmt.Errorf("%w: not an index file", ErrCorrupt)
	}
	if crc32.ChecksumIEEE(b[:headerSize-4]) != le.Uint32(b[headerSize-4:]) {
		return h, fmt.Errorf("%w: header checksum mismatch", ErrCorrupt)
	}
	if v := le.Uint32(b[8:]); v != fileVersion {
		return h, fmt.Errorf("%w: format version %d, this build reads %d", ErrCorrupt, v, fileVersion)
	}
	h.dim = int(le.Uint32(b[12:]))
	h.flags = le.Uint32(b[16:])
	h.m = int(le.Uint32(b[20:]))
	h.nodes = le.Uint64(b[24:])
	h.linked = le.Uint64(b[32:])
	h.efC = int(le.Uint32(b[40:]))
	h.maxLevel = int32(le.Uint32(b[44:]))
	h.ep = le.Uint32(b[48:])
	h.gen = le.Uint64(b[56:])
	h.saved = time.Unix(0, int64(le.Uint64(b[64:])))
	nameLen := int(le.Uint32(b[72:]))
	if nameLen > maxModelName {
		return h, fmt.Errorf("%w: model name of %d bytes", ErrCorrupt, nameLen)
	}
	h.model = string(b[80 : 80+nameLen])
	for i := range h.sections {
		e := b[1024+32*i:]
		h.sections[i] = section{off: le.Uint64(e), len: le.Uint64(e[8:]), crc: le.Uint32(e[16:])}
	}
	h.checksum = le.Uint32(b[headerSize-4:])
	switch {
	case h.dim <= 0 || h.dim > 1<<16:
		return h, fmt.Errorf("%w: dimension %d", ErrCorrupt, h.dim)
	case h.nodes >= uint64(noNode):
		return h, fmt.Errorf("%w: %d nodes", ErrCorrupt, h.nodes)
	case h.linked > h.nodes:
		return h, fmt.Errorf("%w: %d linked of %d nodes", ErrCorrupt, h.linked, h.nodes)
	case h.flags&flagGraph != 0 && (h.m < 2 || h.m > 256 || h.maxLevel < -1 || h.maxLevel > maxGraphLevel):
		return h, fmt.Errorf("%w: graph parameters M=%d maxLevel=%d", ErrCorrupt, h.m, h.maxLevel)
	}
	return h, nil
}

func (h *fileHeader) encode() []byte {
	b := make([]byte, headerSize)
	le := binary.LittleEndian
	copy(b, fileMagic)
	le.PutUint32(b[8:], fileVersion)
	le.PutUint32(b[12:], uint32(h.dim))
	le.PutUint32(b[16:], h.flags)
	le.PutUint32(b[20:], uint32(h.m))
	le.PutUint64(b[24:], h.nodes)
	le.PutUint64(b[32:], h.linked)
	le.PutUint32(b[40:], uint32(h.efC))
	le.PutUint32(b[44:], uint32(h.maxLevel))
	le.PutUint32(b[48:], h.ep)
	le.PutUint64(b[56:], h.gen)
	le.PutUint64(b[64:], uint64(h.saved.UnixNano()))
	le.PutUint32(b[72:], uint32(len(h.model)))
	copy(b[80:80+maxModelName], h.model)
	for i, s := range h.sections {
		e := b[1024+32*i:]
		le.PutUint64(e, s.off)
		le.PutUint64(e[8:], s.len)
		le.PutUint32(e[16:], s.crc)
	}
	le.PutUint32(b[headerSize-4:], crc32.ChecksumIEEE(b[:headerSize-4]))
	return b
}

// Header is what an index file says of itself in its first 4096 bytes:
// enough for stats, and for a keeper to tell whether the file is fresh.
type Header struct {
	Model   string    // the embedding model whose vectors it holds
	Gen     uint64    // the keeper's generation the file was saved at
	Saved   time.Time // when
	Dim     int
	Vectors int  // live vectors (a saved file has no tombstones)
	Graph   bool // it holds an HNSW graph
	Linked  int  // vectors the graph covers
}

func (h *fileHeader) public() Header {
	return Header{Model: h.model, Gen: h.gen, Saved: h.saved, Dim: h.dim, Vectors: int(h.nodes),
		Graph: h.flags&flagGraph != 0, Linked: int(h.linked)}
}

// ReadHeader reads only the header of an index file (for stats, which must
// not map gigabytes to count them) and returns it with the file's size. A
// header that is unusable is an error wrapping ErrCorrupt; the Header then
// holds what could be read (its Model, often).
func ReadHeader(path string) (Header, int64, error) {
	h, size, err := readIndexHeader(path)
	return h.public(), size, err
}

func readIndexHeader(path string) (fileHeader, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return fileHeader{}, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fileHeader{}, 0, err
	}
	b := make([]byte, headerSize)
	if _, err := io.ReadFull(f, b); err != nil {
		return fileHeader{}, st.Size(), fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	h, err := parseHeader(b)
	return h, st.Size(), err
}

// view reinterprets a section of the mapped file. Sections are aligned to
// 4096 bytes in a page-aligned (or 8-byte aligned) buffer.
func view[T any](data []byte, s section) []T {
	var zero T
	size := uint64(unsafe.Sizeof(zero))
	if s.len == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&data[s.off])), s.len/size)
}

// Open opens the index file at path, which must hold vectors of model.
// The header and every section are checked (sizes, bounds, and the
// checksums of all but the vectors) before anything is used, and any
// problem is an error wrapping ErrCorrupt (a missing file is
// fs.ErrNotExist): the caller rebuilds the index rather than trust it. The
// vectors' checksum is left to a check that Start runs in the background
// (it reads the whole section) and that the first search waits for. The
// vectors and the graph stay in the mapping; only the IDs are copied out.
//
// Nothing runs in the background until Start: a keeper first sets itself
// (SetKeeper), so that what the background work reports reaches it.
func Open(path, model string, opt Options) (*Index, Header, error) {
	ix, h, err := loadIndexFile(path, model, opt)
	return ix, h.public(), err
}

func loadIndexFile(path, model string, opt Options) (*Index, fileHeader, error) {
	if !littleEndianHost {
		return nil, fileHeader{}, fmt.Errorf("%w: index files are little-endian", ErrCorrupt)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fileHeader{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fileHeader{}, err
	}
	if st.Size() < headerSize {
		return nil, fileHeader{}, fmt.Errorf("%w: %d bytes is shorter than a header", ErrCorrupt, st.Size())
	}
	m, err := mapFile(f, st.Size())
	if err != nil {
		return nil, fileHeader{}, err
	}
	ix, h, err := indexFromMapping(m.data, model, opt)
	if err != nil {
		m.close()
		return nil, h, err
	}
	ix.file = m
	return ix, h, nil
}

func indexFromMapping(data []byte, model string, opt Options) (*Index, fileHeader, error) {
	h, err := parseHeader(data)
	if err != nil {
		return nil, h, err
	}
	if h.model != model {
		return nil, h, fmt.Errorf("%w: it holds vectors of %q, not %q", ErrCorrupt, h.model, model)
	}
	n, dim := h.nodes, uint64(h.dim)
	graph := h.flags&flagGraph != 0
	want := map[int]uint64{secVectors: n * dim * 4, secIDEnds: (n + 1) * 8, secPrints: n * 8}
	if graph {
		want[secLevels] = n
		want[secLinks0] = n * uint64(2*h.m+1) * 4
		want[secUpperIdx] = n * 4
	}
	for i, s := range h.sections {
		if s.len == 0 {
			if w := want[i]; w != 0 {
				return nil, h, fmt.Errorf("%w: section %d is missing", ErrCorrupt, i)
			}
			continue
		}
		if s.off%sectionAlign != 0 || s.off < headerSize || s.off+s.len < s.off || s.off+s.len > uint64(len(data)) {
			return nil, h, fmt.Errorf("%w: section %d out of bounds", ErrCorrupt, i)
		}
		if w, ok := want[i]; ok && s.len != w {
			return nil, h, fmt.Errorf("%w: section %d has %d bytes, want %d", ErrCorrupt, i, s.len, w)
		}
		if i == secVectors {
			continue // the bulk of the file: checked in the background
		}
		if crc32.ChecksumIEEE(data[s.off:s.off+s.len]) != s.crc {
			return nil, h, fmt.Errorf("%w: section %d checksum mismatch", ErrCorrupt, i)
		}
	}
	if graph && h.sections[secArena].len%4 != 0 {
		return nil, h, fmt.Errorf("%w: graph arena of %d bytes", ErrCorrupt, h.sections[secArena].len)
	}
	ends := view[uint64](data, h.sections[secIDEnds])
	idBytes := data[h.sections[secIDs].off : h.sections[secIDs].off+h.sections[secIDs].len]
	if ends[0] != 0 || ends[n] != uint64(len(idBytes)) {
		return nil, h, fmt.Errorf("%w: ID table does not cover the IDs", ErrCorrupt)
	}
	all := string(idBytes)
	s := &segment{
		vecs:  view[float32](data, h.sections[secVectors]),
		ids:   make([]string, n),
		fps:   view[uint64](data, h.sections[secPrints]),
		nodes: int(n),
	}
	for i := uint64(0); i < n; i++ {
		if ends[i+1] < ends[i] {
			return nil, h, fmt.Errorf("%w: ID table out of order", ErrCorrupt)
		}
		s.ids[i] = all[ends[i]:ends[i+1]]
	}
	if graph {
		opt.M = h.m
		if h.efC > 0 {
			opt.EfConstruction = h.efC
		}
		s.levels = view[uint8](data, h.sections[secLevels])
		s.links0 = view[uint32](data, h.sections[secLinks0])
		upperIdx := view[uint32](data, h.sections[secUpperIdx])
		arena := view[uint32](data, h.sections[secArena])
		s.upper = make([][]uint32, n)
		w := uint64(h.m + 1)
		for i := uint64(0); i < n; i++ {
			l := uint64(s.levels[i])
			if l > maxGraphLevel {
				return nil, h, fmt.Errorf("%w: node %d on layer %d", ErrCorrupt, i, l)
			}
			if l == 0 {
				continue
			}
			off := uint64(upperIdx[i])
			if off+l*w > uint64(len(arena)) {
				return nil, h, fmt.Errorf("%w: node %d's upper layers out of bounds", ErrCorrupt, i)
			}
			s.upper[i] = arena[off : off+l*w : off+l*w]
		}
		if h.ep != noNode && (uint64(h.ep) >= h.linked || int32(s.levels[h.ep]) != h.maxLevel) {
			return nil, h, fmt.Errorf("%w: bad entry point", ErrCorrupt)
		}
	}
	ix := newIndex(h.dim, opt) // its ID map is built on first need
	ix.base, ix.baseN, ix.n, ix.live = s, int(n), int(n), int(n)
	ix.del = make([]uint64, (n+63)/64)
	ix.purged = make([]uint64, (n+63)/64)
	ix.fileGen = h.gen
	vs := h.sections[secVectors]
	ix.check.Store(&fileCheck{data: data[vs.off : vs.off+vs.len], want: vs.crc})
	if graph {
		g := newGraph(ix.opt)
		g.next, g.wm = int(h.linked), int(h.linked)
		if h.ep != noNode {
			g.ep, g.maxLevel, g.hasEP = h.ep, int(h.maxLevel), true
		}
		ix.g = g
	}
	return ix, h, nil
}

// Start begins what an index opened from a file does in the background:
// the check of its vectors, and linking the nodes its graph does not cover
// yet (or building the graph it now needs).
func (ix *Index) Start() {
	ix.startFileCheck()
	ix.resume()
}

// resume starts what a freshly opened index still has to do: link the
// nodes its graph does not cover yet, or build the graph it now needs.
func (ix *Index) resume() {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	switch {
	case ix.closed:
	case ix.g == nil:
		if ix.opt.SwitchAt > 0 && ix.live >= ix.opt.SwitchAt {
			ix.enableGraphLocked()
			ix.startBuilderLocked()
		}
	case ix.g.next < ix.n && !ix.g.building:
		ix.startBuilderLocked()
	}
}
