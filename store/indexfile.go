package store

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
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
	dim, m, efC     int
	flags           uint32
	nodes, linked   uint64
	maxLevel        int32
	ep              uint32
	gen             uint64
	saved           time.Time
	model           string
	sections        [nSections]section
	bytes, checksum uint32 // size of the header read, its crc (for stats)
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

// snapshot is what a save writes, taken under the read lock in
// microseconds; the write itself runs without the lock. Nodes and their
// vectors never change once added, and every neighbour word is a valid node,
// so lists that change while they are copied are still a valid graph.
type snapshot struct {
	dim, n, m int
	segs      []segment
	baseN     int
	del       []uint64
	graph     bool
	linked    int
	ep        uint32
	maxLevel  int
	efC       int
	changes   int
	linkedCnt int64
}

func (ix *Index) snapshot() snapshot {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	sn := snapshot{dim: ix.dim, n: ix.n, baseN: ix.baseN, del: append([]uint64(nil), ix.del...), changes: ix.changes, linkedCnt: ix.linked.Load()}
	for _, s := range ix.segments() {
		c := *s
		// Fingerprints are the only per-node words written in place under
		// the write lock (a catch-up verifying a node): copy them.
		c.fps = append([]uint64(nil), s.fps...)
		sn.segs = append(sn.segs, c)
	}
	if g := ix.g; g != nil {
		sn.graph, sn.m, sn.efC = true, g.m, g.efC
		g.mu.Lock()
		sn.linked, sn.ep, sn.maxLevel = g.wm, g.ep, g.maxLevel
		if !g.hasEP {
			sn.ep, sn.maxLevel = noNode, -1
		}
		g.mu.Unlock()
	}
	return sn
}

func (sn *snapshot) seg(node int) (*segment, int) {
	if node < sn.baseN {
		return &sn.segs[0], node
	}
	j := node - sn.baseN
	first := 0
	if sn.baseN > 0 {
		first = 1
	}
	return &sn.segs[first+j>>segShift], j & segMask
}

// entry is the entry point to save: the graph's own if it is live and
// linked (an insertion in flight may have just made itself the entry),
// else the linked live node on the highest layer.
func (sn *snapshot) entry(remap []uint32, linked int) (uint32, int) {
	if sn.ep != noNode && int(sn.ep) < sn.n && remap[sn.ep] != noNode && int(remap[sn.ep]) < linked {
		return remap[sn.ep], sn.maxLevel
	}
	best, top := noNode, -1
	for node := 0; node < sn.linked && node < sn.n; node++ {
		if remap[node] == noNode {
			continue
		}
		s, i := sn.seg(node)
		if l := int(s.levels[i]); l > top {
			best, top = remap[node], l
		}
	}
	return best, top
}

func (sn *snapshot) isDel(node int) bool { return sn.del[node>>6]&(1<<(node&63)) != 0 }

// crcWriter checksums a section while it streams to the file.
type crcWriter struct {
	w   io.Writer
	crc hash.Hash32
	n   uint64
}

func (c *crcWriter) Write(p []byte) (int, error) {
	c.crc.Write(p)
	c.n += uint64(len(p))
	return c.w.Write(p)
}

func asBytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(zero)))
}

// writeIndexFile writes the snapshot to path atomically: a temporary file
// in the same directory, fsync, rename, fsync of the directory. A crash at
// any point leaves either the old file or the new one, never a mixture; a
// leftover temporary file is removed by the next open. It returns the
// file's size.
func writeIndexFile(path, model string, gen uint64, sn snapshot) (int64, error) {
	if !littleEndianHost {
		return 0, errors.New("store: index files are little-endian; not saved on this host")
	}
	if len(model) > maxModelName {
		return 0, fmt.Errorf("store: model name longer than %d bytes", maxModelName)
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return 0, err
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	hdr, size, err := writeSections(tmp, sn)
	if err != nil {
		return 0, err
	}
	hdr.model, hdr.gen, hdr.saved = model, gen, time.Now()
	if _, err := tmp.WriteAt(hdr.encode(), 0); err != nil {
		return 0, err
	}
	if err := tmp.Sync(); err != nil {
		return 0, err
	}
	if err := tmp.Close(); err != nil {
		return 0, err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return 0, err
	}
	ok = true
	syncDir(dir)
	return size, nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync() // not supported everywhere; the rename is what matters
		d.Close()
	}
}

// writeSections streams the live nodes of sn after a blank header and
// returns the header to write over it and the file's size.
func writeSections(f *os.File, sn snapshot) (fileHeader, int64, error) {
	remap := make([]uint32, sn.n)
	live := 0
	linked := 0
	for node := 0; node < sn.n; node++ {
		if sn.isDel(node) {
			remap[node] = noNode
			continue
		}
		remap[node] = uint32(live)
		if node < sn.linked {
			linked++
		}
		live++
	}
	h := fileHeader{dim: sn.dim, nodes: uint64(live), linked: uint64(linked), ep: noNode, maxLevel: -1}
	if sn.graph {
		h.flags |= flagGraph
		h.m, h.efC = sn.m, sn.efC
		ep, top := sn.entry(remap, linked)
		h.ep, h.maxLevel = ep, int32(top)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	var off uint64 = headerSize
	if _, err := f.Seek(headerSize, io.SeekStart); err != nil {
		return h, 0, err
	}
	var werr error
	sec := func(i int, write func(w io.Writer)) {
		if werr != nil {
			return
		}
		if pad := (sectionAlign - off%sectionAlign) % sectionAlign; pad > 0 {
			bw.Write(make([]byte, pad))
			off += pad
		}
		cw := &crcWriter{w: bw, crc: crc32.NewIEEE()}
		write(cw)
		h.sections[i] = section{off: off, len: cw.n, crc: cw.crc.Sum32()}
		off += cw.n
		werr = bw.Flush()
	}
	// runs calls fn for each run of consecutive live nodes within a segment.
	runs := func(fn func(s *segment, from, to int)) {
		for node := 0; node < sn.n; {
			s, i := sn.seg(node)
			end := node + s.nodes - i
			for node < end {
				for node < end && sn.isDel(node) {
					node, i = node+1, i+1
				}
				start := i
				for node < end && !sn.isDel(node) {
					node, i = node+1, i+1
				}
				if i > start {
					fn(s, start, i)
				}
			}
		}
	}
	le := binary.LittleEndian
	u64 := func(w io.Writer, v uint64) {
		var b [8]byte
		le.PutUint64(b[:], v)
		w.Write(b[:])
	}
	sec(secVectors, func(w io.Writer) {
		runs(func(s *segment, from, to int) { w.Write(asBytes(s.vecs[from*sn.dim : to*sn.dim])) })
	})
	sec(secIDEnds, func(w io.Writer) {
		var end uint64
		u64(w, 0)
		runs(func(s *segment, from, to int) {
			for _, id := range s.ids[from:to] {
				end += uint64(len(id))
				u64(w, end)
			}
		})
	})
	sec(secIDs, func(w io.Writer) {
		runs(func(s *segment, from, to int) {
			for _, id := range s.ids[from:to] {
				io.WriteString(w, id)
			}
		})
	})
	sec(secPrints, func(w io.Writer) {
		runs(func(s *segment, from, to int) { w.Write(asBytes(s.fps[from:to])) })
	})
	if sn.graph {
		writeGraph(sn, remap, runs, sec)
	}
	if werr != nil {
		return h, 0, werr
	}
	return h, int64(off), nil
}

// writeGraph writes the graph sections with neighbours renumbered and
// tombstones dropped.
func writeGraph(sn snapshot, remap []uint32, runs func(func(s *segment, from, to int)), sec func(int, func(io.Writer))) {
	le := binary.LittleEndian
	list := func(w io.Writer, lst []uint32, width int, buf []byte) {
		buf = buf[:4*width]
		clear(buf)
		cnt := 0
		if len(lst) > 0 {
			c := min(int(loadU32(&lst[0])), len(lst)-1)
			for j := 1; j <= c && cnt < width-1; j++ {
				nb := loadU32(&lst[j])
				if int(nb) < sn.n && remap[nb] != noNode {
					cnt++
					le.PutUint32(buf[4*cnt:], remap[nb])
				}
			}
		}
		le.PutUint32(buf, uint32(cnt))
		w.Write(buf)
	}
	buf := make([]byte, 4*(2*sn.m+1))
	sec(secLevels, func(w io.Writer) {
		runs(func(s *segment, from, to int) { w.Write(s.levels[from:to]) })
	})
	sec(secLinks0, func(w io.Writer) {
		width := 2*sn.m + 1
		runs(func(s *segment, from, to int) {
			for i := from; i < to; i++ {
				list(w, s.links0[i*width:(i+1)*width], width, buf)
			}
		})
	})
	sec(secUpperIdx, func(w io.Writer) {
		var off uint32
		var b [4]byte
		runs(func(s *segment, from, to int) {
			for i := from; i < to; i++ {
				v := noNode
				if l := int(s.levels[i]); l > 0 {
					v = off
					off += uint32(l * (sn.m + 1))
				}
				le.PutUint32(b[:], v)
				w.Write(b[:])
			}
		})
	})
	sec(secArena, func(w io.Writer) {
		width := sn.m + 1
		runs(func(s *segment, from, to int) {
			for i := from; i < to; i++ {
				u := s.upper[i]
				for l := 1; l <= int(s.levels[i]); l++ {
					var lst []uint32
					if len(u) >= l*width {
						lst = u[(l-1)*width : l*width]
					}
					list(w, lst, width, buf)
				}
			}
		})
	})
}

// removeTempFiles deletes temporary files a killed save left for path.
func removeTempFiles(path string) {
	dir, base := filepath.Dir(path), "."+filepath.Base(path)+".tmp-"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), base) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
