package vector

// Writing an index file: a snapshot of the index taken under its lock, then
// the sections written and checksummed into a temporary file that is synced
// and renamed over the old one.

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

// Snapshot is what Save writes: an index's nodes and graph as they were
// when Index.Snapshot took it.
type Snapshot struct{ sn snapshot }

// Snapshot unlinks the index's tombstones from its graph (a save drops
// them, and the links to them with them) and takes what Save writes. It
// holds the read lock for microseconds; the write runs without it.
func (ix *Index) Snapshot() *Snapshot {
	ix.repairBeforeSave()
	return &Snapshot{ix.snapshot()}
}

// Live is the number of vectors the snapshot holds (a keeper saves no file
// of none).
func (s *Snapshot) Live() int {
	live := s.sn.n
	for node := 0; node < s.sn.n; node++ {
		if s.sn.isDel(node) {
			live--
		}
	}
	return live
}

// Save writes sn to path as the index file of model, recording gen (the
// keeper's generation that the vectors match: Header.Gen), atomically (see
// writeIndexFile). What it wrote then no longer counts as Unsaved. It
// returns the file's size.
func (ix *Index) Save(sn *Snapshot, path, model string, gen uint64) (int64, error) {
	size, err := writeIndexFile(path, model, gen, sn.sn)
	if err != nil {
		return 0, err
	}
	ix.mu.Lock()
	ix.changes -= sn.sn.changes
	ix.mu.Unlock()
	ix.linked.Add(-sn.sn.linkedCnt)
	return size, nil
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
		_ = d.Sync() // not supported everywhere; the rename is what matters
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

// RemoveTempFiles deletes the temporary files that saves killed mid-write
// left beside path. The keeper that owns the file calls it before opening
// it (a read-only one never does: another process may be saving).
func RemoveTempFiles(path string) {
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
