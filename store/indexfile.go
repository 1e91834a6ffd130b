package store

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
// vectors (whose checksum is verified in the background: indexcheck.go):
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

// errCorrupt wraps every reason an index file is not used as it is.
var errCorrupt = errors.New("index file unusable")

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
		return h, fmt.Errorf("%w: %d bytes is shorter than a header", errCorrupt, len(b))
	}
	le := binary.LittleEndian
	if string(b[:8]) != fileMagic {
		return h, fmt.Errorf("%w: not an index file", errCorrupt)
	}
	if crc32.ChecksumIEEE(b[:headerSize-4]) != le.Uint32(b[headerSize-4:]) {
		return h, fmt.Errorf("%w: header checksum mismatch", errCorrupt)
	}
	if v := le.Uint32(b[8:]); v != fileVersion {
		return h, fmt.Errorf("%w: format version %d, this build reads %d", errCorrupt, v, fileVersion)
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
		return h, fmt.Errorf("%w: model name of %d bytes", errCorrupt, nameLen)
	}
	h.model = string(b[80 : 80+nameLen])
	for i := range h.sections {
		e := b[1024+32*i:]
		h.sections[i] = section{off: le.Uint64(e), len: le.Uint64(e[8:]), crc: le.Uint32(e[16:])}
	}
	h.checksum = le.Uint32(b[headerSize-4:])
	switch {
	case h.dim <= 0 || h.dim > 1<<16:
		return h, fmt.Errorf("%w: dimension %d", errCorrupt, h.dim)
	case h.nodes >= uint64(noNode):
		return h, fmt.Errorf("%w: %d nodes", errCorrupt, h.nodes)
	case h.linked > h.nodes:
		return h, fmt.Errorf("%w: %d linked of %d nodes", errCorrupt, h.linked, h.nodes)
	case h.flags&flagGraph != 0 && (h.m < 2 || h.m > 256 || h.maxLevel < -1 || h.maxLevel > maxGraphLevel):
		return h, fmt.Errorf("%w: graph parameters M=%d maxLevel=%d", errCorrupt, h.m, h.maxLevel)
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

// readIndexHeader reads only the header of an index file (for stats).
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
		return fileHeader{}, st.Size(), fmt.Errorf("%w: %v", errCorrupt, err)
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

// loadIndexFile opens an index file for model: the header and every section
// are checked (sizes, bounds, and the checksums of all but the vectors)
// before anything is used, and any problem is an error wrapping errCorrupt.
// The vectors' checksum is left to Index.checkFile (the owner starts it in
// the background: it reads the whole section). The vectors and the graph
// stay in the mapping; only the IDs are copied out.
func loadIndexFile(path, model string, opt IndexOptions) (*Index, fileHeader, error) {
	if !littleEndianHost {
		return nil, fileHeader{}, fmt.Errorf("%w: index files are little-endian", errCorrupt)
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
		return nil, fileHeader{}, fmt.Errorf("%w: %d bytes is shorter than a header", errCorrupt, st.Size())
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

func indexFromMapping(data []byte, model string, opt IndexOptions) (*Index, fileHeader, error) {
	h, err := parseHeader(data)
	if err != nil {
		return nil, h, err
	}
	if h.model != model {
		return nil, h, fmt.Errorf("%w: it holds vectors of %q, not %q", errCorrupt, h.model, model)
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
				return nil, h, fmt.Errorf("%w: section %d is missing", errCorrupt, i)
			}
			continue
		}
		if s.off%sectionAlign != 0 || s.off < headerSize || s.off+s.len < s.off || s.off+s.len > uint64(len(data)) {
			return nil, h, fmt.Errorf("%w: section %d out of bounds", errCorrupt, i)
		}
		if w, ok := want[i]; ok && s.len != w {
			return nil, h, fmt.Errorf("%w: section %d has %d bytes, want %d", errCorrupt, i, s.len, w)
		}
		if i == secVectors {
			continue // the bulk of the file: checked in the background
		}
		if crc32.ChecksumIEEE(data[s.off:s.off+s.len]) != s.crc {
			return nil, h, fmt.Errorf("%w: section %d checksum mismatch", errCorrupt, i)
		}
	}
	if graph && h.sections[secArena].len%4 != 0 {
		return nil, h, fmt.Errorf("%w: graph arena of %d bytes", errCorrupt, h.sections[secArena].len)
	}
	ends := view[uint64](data, h.sections[secIDEnds])
	idBytes := data[h.sections[secIDs].off : h.sections[secIDs].off+h.sections[secIDs].len]
	if ends[0] != 0 || ends[n] != uint64(len(idBytes)) {
		return nil, h, fmt.Errorf("%w: ID table does not cover the IDs", errCorrupt)
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
			return nil, h, fmt.Errorf("%w: ID table out of order", errCorrupt)
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
				return nil, h, fmt.Errorf("%w: node %d on layer %d", errCorrupt, i, l)
			}
			if l == 0 {
				continue
			}
			off := uint64(upperIdx[i])
			if off+l*w > uint64(len(arena)) {
				return nil, h, fmt.Errorf("%w: node %d's upper layers out of bounds", errCorrupt, i)
			}
			s.upper[i] = arena[off : off+l*w : off+l*w]
		}
		if h.ep != noNode && (uint64(h.ep) >= h.linked || int32(s.levels[h.ep]) != h.maxLevel) {
			return nil, h, fmt.Errorf("%w: bad entry point", errCorrupt)
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
