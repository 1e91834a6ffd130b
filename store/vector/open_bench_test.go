package vector

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// TestIndexOpenTime measures opening an index file of n 768-d vectors,
// cold (the file dropped from the page cache) and warm, and the background
// check of its vectors, cold. Opening does not depend on the graph's
// quality, so the file is written directly (random unit vectors, a trivial
// graph: each node links to the next) instead of building a graph, which
// takes 12 minutes at a million:
//
//	INDEX_OPEN_SIZES=100000,1000000 go test -run '^TestIndexOpenTime$' -v ./store/vector/
func TestIndexOpenTime(t *testing.T) {
	sizes := os.Getenv("INDEX_OPEN_SIZES")
	if sizes == "" {
		t.Skip("set INDEX_OPEN_SIZES (e.g. 100000,1000000)")
	}
	t.Setenv("INDEX_BENCH_SIZES", sizes)
	for _, n := range benchSizes("") {
		path := filepath.Join(t.TempDir(), "open.idx")
		if err := writeTrivialIndexFile(path, "bench", n, benchDim); err != nil {
			t.Fatal(err)
		}
		st, _ := os.Stat(path)
		var cold, warm, check []float64
		for run := 0; run < 3; run++ {
			if !dropFromPageCache(path) {
				t.Fatal("cannot drop the file from the page cache")
			}
			t0 := time.Now()
			ix, _, err := loadIndexFile(path, "bench", Options{})
			if err != nil {
				t.Fatal(err)
			}
			cold = append(cold, ms(time.Since(t0)))
			t0 = time.Now()
			if err := ix.checkFile(nil); err != nil {
				t.Fatal(err)
			}
			check = append(check, ms(time.Since(t0)))
			ix.Close()
			t0 = time.Now()
			ix, _, err = loadIndexFile(path, "bench", Options{})
			if err != nil {
				t.Fatal(err)
			}
			warm = append(warm, ms(time.Since(t0)))
			ix.Close()
		}
		fmt.Printf("OPEN n=%d file-MB=%.0f open-cold-ms=%.0f open-warm-ms=%.1f check-cold-ms=%.0f (medians of 3; cold %v, warm %v, check %v)\n",
			n, float64(st.Size())/1e6, median(cold), median(warm), median(check), round(cold), round(warm), round(check))
		os.Remove(path)
	}
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func median(x []float64) float64 {
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func round(x []float64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = math.Round(v*10) / 10
	}
	return out
}

// writeTrivialIndexFile streams a valid index file of n random unit
// vectors with a graph in which every node is on layer 0 and links to the
// next one.
func writeTrivialIndexFile(path, model string, n, dim int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	const m = DefaultM
	h := fileHeader{dim: dim, flags: flagGraph, m: m, efC: DefaultEfConstruction, nodes: uint64(n), linked: uint64(n),
		maxLevel: 0, ep: 0, model: model, saved: time.Now()}
	bw := bufio.NewWriterSize(f, 4<<20)
	off := uint64(headerSize)
	bw.Write(make([]byte, headerSize))
	le := binary.LittleEndian
	sec := func(i int, write func(w io.Writer)) {
		if pad := (sectionAlign - off%sectionAlign) % sectionAlign; pad > 0 {
			bw.Write(make([]byte, pad))
			off += pad
		}
		cw := &crcWriter{w: bw, crc: crc32.NewIEEE()}
		write(cw)
		h.sections[i] = section{off: off, len: cw.n, crc: cw.crc.Sum32()}
		off += cw.n
	}
	id := func(i int) string { return fmt.Sprintf("doi:10.1/%08d#0", i) }
	r := rand.New(rand.NewPCG(1, 2))
	sec(secVectors, func(w io.Writer) {
		v := make([]float32, dim)
		for i := 0; i < n; i++ {
			var norm float64
			for j := range v {
				v[j] = float32(r.NormFloat64())
				norm += float64(v[j]) * float64(v[j])
			}
			s := float32(1 / math.Sqrt(norm))
			for j := range v {
				v[j] *= s
			}
			w.Write(asBytes(v))
		}
	})
	u64 := func(w io.Writer, x uint64) {
		var b [8]byte
		le.PutUint64(b[:], x)
		w.Write(b[:])
	}
	u32 := func(w io.Writer, x uint32) {
		var b [4]byte
		le.PutUint32(b[:], x)
		w.Write(b[:])
	}
	sec(secIDEnds, func(w io.Writer) {
		var end uint64
		u64(w, 0)
		for i := 0; i < n; i++ {
			end += uint64(len(id(i)))
			u64(w, end)
		}
	})
	sec(secIDs, func(w io.Writer) {
		for i := 0; i < n; i++ {
			io.WriteString(w, id(i))
		}
	})
	sec(secPrints, func(w io.Writer) {
		for i := 0; i < n; i++ {
			h := fnv.New64a()
			io.WriteString(h, id(i))
			u64(w, max(h.Sum64(), 1)) // a content fingerprint, as a store keeps
		}
	})
	sec(secLevels, func(w io.Writer) { w.Write(make([]byte, n)) })
	sec(secLinks0, func(w io.Writer) {
		list := make([]uint32, 2*m+1)
		for i := 0; i < n; i++ {
			list[0], list[1] = 1, uint32((i+1)%n)
			w.Write(asBytes(list))
		}
	})
	sec(secUpperIdx, func(w io.Writer) {
		for i := 0; i < n; i++ {
			u32(w, noNode)
		}
	})
	if err := bw.Flush(); err != nil {
		return err
	}
	if _, err := f.WriteAt(h.encode(), 0); err != nil {
		return err
	}
	return f.Sync()
}
