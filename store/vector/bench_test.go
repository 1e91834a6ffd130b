package vector

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/researchtui/researchtui/store/vector/vectortest"
	"github.com/researchtui/researchtui/testkit/child"
)

// Vector index benchmarks (scripts/bench-index.sh prints them as a table).
// Data: 768-d vectors shaped like text embeddings (vectortest.Topics); queries from
// the same distribution; ground truth by exact scan. Nothing is committed:
// every set is generated on the fly.
//
//	go test -run '^$' -bench 'IndexScale' -benchtime 1x ./store/vector/     # 10k, 100k
//	INDEX_BENCH_SIZES=1000000 go test -run '^$' -bench 'IndexScale' -benchtime 1x -timeout 2h ./store/vector/
//	go test -run '^$' -bench 'SwitchPoint' -benchtime 1x ./store/vector/

const benchDim = 768

func benchSizes(def string) []int {
	spec := os.Getenv("INDEX_BENCH_SIZES")
	if spec == "" {
		spec = def
	}
	var out []int
	for _, f := range strings.Split(spec, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}

func benchID(i int) string { return fmt.Sprintf("doi:10.48550/arxiv.%07d#%06d", i/40, i%40) }

// exactTop is the ground truth: the index's own exact scan over every node.
func exactTop(ix *Index, q []float32, k int) []Hit {
	nq, _ := normalized(q)
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.hits(ix.scan(nq, 0, k), k)
}

// groundTruth is the exact top-10 of each query, and the exact search's
// latencies over rounds passes.
func groundTruth(ix *Index, qs [][]float32, rounds int) ([][]Hit, []time.Duration) {
	truth := make([][]Hit, len(qs))
	var lat []time.Duration
	for round := 0; round < rounds; round++ {
		for i, q := range qs {
			t0 := time.Now()
			truth[i] = exactTop(ix, q, 10)
			lat = append(lat, time.Since(t0))
		}
	}
	return truth, lat
}

func percentile(d []time.Duration, p float64) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[min(len(s)-1, int(p*float64(len(s))))]) / 1e6
}

// buildGraph builds the graph of a loaded exact index in the background,
// the way a store rebuilds an index, and returns how long it took.
func buildGraph(ix *Index) time.Duration {
	t0 := time.Now()
	ix.mu.Lock()
	ix.opt.SwitchAt = 1
	ix.enableGraphLocked()
	ix.startBuilderLocked()
	ix.mu.Unlock()
	ix.Wait(context.Background())
	return time.Since(t0)
}

func measure(ix *Index, qs [][]float32, truth [][]Hit, ef int) (rec float64, p50, p99 float64) {
	var lat []time.Duration
	found, total := 0, 0
	for round := 0; round < 5; round++ {
		for i, q := range qs {
			t0 := time.Now()
			hits, _ := ix.SearchEf(q, 10, ef)
			lat = append(lat, time.Since(t0))
			if round > 0 {
				continue
			}
			in := map[string]bool{}
			for _, h := range hits {
				in[h.ID] = true
			}
			for _, h := range truth[i] {
				if in[h.ID] {
					found++
				}
			}
			total += len(truth[i])
		}
	}
	return float64(found) / float64(total), percentile(lat, 0.5), percentile(lat, 0.99)
}

func BenchmarkIndexScale(b *testing.B) {
	for _, n := range benchSizes("10000,100000") {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) { benchScale(b, n) })
	}
}

func benchScale(b *testing.B, n int) {
	g := vectortest.NewTopics(1, benchDim, max(n/200, 10))
	ix := New(benchDim, Options{SwitchAt: -1, Seed: 1})
	defer ix.Close()
	for i := 0; i < n; i++ {
		if err := ix.Add(benchID(i), g.Next()); err != nil {
			b.Fatal(err)
		}
	}
	qs := g.Queries(200)
	truth, exactLat := groundTruth(ix, qs, 1)
	build := buildGraph(ix)
	rec, p50, p99 := measure(ix, qs, truth, 0)
	for _, ef := range []int{32, 64, 128, 256} {
		r, e50, e99 := measure(ix, qs, truth, ef)
		b.Logf("n=%d ef=%d: recall@10 %.4f, p50 %.3f ms, p99 %.3f ms", n, ef, r, e50, e99)
	}

	dir := b.TempDir()
	path := filepath.Join(dir, "bench.idx")
	t0 := time.Now()
	size, err := writeIndexFile(path, "bench", 1, ix.snapshot())
	if err != nil {
		b.Fatal(err)
	}
	save := time.Since(t0)
	qpath := filepath.Join(dir, "queries.f32")
	writeQueries(b, qpath, qs)
	child := serveInChild(b, path, qpath)

	i := 0
	for b.Loop() { // before the metrics: b.Loop's first call resets them
		ix.Search(qs[i%len(qs)], 10)
		i++
	}
	raw := float64(n) * benchDim * 4
	b.ReportMetric(rec, "recall@10")
	b.ReportMetric(p50, "p50-ms")
	b.ReportMetric(p99, "p99-ms")
	b.ReportMetric(percentile(exactLat, 0.5), "exact-p50-ms")
	b.ReportMetric(build.Seconds(), "build-s")
	b.ReportMetric(save.Seconds(), "save-s")
	b.ReportMetric(float64(size)/raw, "file/raw")
	b.ReportMetric(float64(size)/(1<<20), "file-MB")
	for k, v := range child {
		b.ReportMetric(v, k)
	}
	if rss, ok := child["rss-MB"]; ok {
		b.ReportMetric(rss*(1<<20)/raw, "rss/raw")
	}
	b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "cpus")
}

func writeQueries(b *testing.B, path string, qs [][]float32) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	for _, q := range qs {
		binary.Write(f, binary.LittleEndian, q)
	}
}

func readQueries(path string, dim int) ([][]float32, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var qs [][]float32
	for off := 0; off+4*dim <= len(raw); off += 4 * dim {
		q := make([]float32, dim)
		for i := range q {
			q[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[off+4*i:]))
		}
		qs = append(qs, q)
	}
	return qs, nil
}

// serveInChild opens the saved index in a fresh process, as a new
// researchtui would, and returns what that process measured: open time
// with the file out of the page cache and in it, query latency from the
// mapped file, the ID map's build time and resident memory.
func serveInChild(b *testing.B, path, qpath string) map[string]float64 {
	cmd := child.Command(context.Background(), "TestIndexServeChild", []string{"INDEX_SERVE_PATH=" + path, "INDEX_SERVE_QUERIES=" + qpath}, "-test.v")
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("child: %v\n%s", err, out)
	}
	res := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "SERVE ") {
			continue
		}
		for _, f := range strings.Fields(line)[1:] {
			k, v, _ := strings.Cut(f, "=")
			if x, err := strconv.ParseFloat(v, 64); err == nil {
				res[k] = x
			}
		}
	}
	if len(res) == 0 {
		b.Fatalf("child printed no measurements:\n%s", out)
	}
	return res
}

// TestIndexServeChild is the child half of serveInChild.
func TestIndexServeChild(t *testing.T) {
	path := child.Var(t, "INDEX_SERVE_PATH", "BenchmarkIndexScale")
	qs, err := readQueries(os.Getenv("INDEX_SERVE_QUERIES"), benchDim)
	if err != nil {
		t.Fatal(err)
	}
	coldOK := dropFromPageCache(path)
	t0 := time.Now()
	ix, _, err := loadIndexFile(path, "bench", Options{})
	if err != nil {
		t.Fatal(err)
	}
	cold := time.Since(t0)
	ix.Close()
	t0 = time.Now()
	ix, _, err = loadIndexFile(path, "bench", Options{})
	if err != nil {
		t.Fatal(err)
	}
	warm := time.Since(t0)
	rssOpen := residentMB()
	var lat []time.Duration
	for round := 0; round < 5; round++ {
		for _, q := range qs {
			t1 := time.Now()
			ix.Search(q, 10)
			lat = append(lat, time.Since(t1))
		}
	}
	t0 = time.Now()
	ix.ensurePos() // what the first Add of a run pays
	pos := time.Since(t0)
	runtime.GC()
	line := fmt.Sprintf("SERVE open-warm-ms=%.1f served-p50-ms=%.3f served-p99-ms=%.3f idmap-ms=%.0f rss-open-MB=%.0f rss-MB=%.0f",
		float64(warm)/1e6, percentile(lat, 0.5), percentile(lat, 0.99), float64(pos)/1e6, rssOpen, residentMB())
	if coldOK {
		line += fmt.Sprintf(" open-cold-ms=%.1f", float64(cold)/1e6)
	}
	fmt.Println(line)
	ix.Close()
}

// residentMB is this process's resident set (heap and mapped file pages).
func residentMB() float64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			f := strings.Fields(line)
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// BenchmarkSwitchPoint measures where the graph starts to pay: exact scan
// against graph walk (default ef) by collection size, with the walk's
// recall and the graph's build cost. DefaultSwitchAt is set from it.
func BenchmarkSwitchPoint(b *testing.B) {
	for _, n := range benchSizes("2000,5000,10000,20000,50000") {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			g := vectortest.NewTopics(2, benchDim, max(n/200, 10))
			ix := New(benchDim, Options{SwitchAt: -1, Seed: 1})
			defer ix.Close()
			for i := 0; i < n; i++ {
				ix.Add(benchID(i), g.Next())
			}
			qs := g.Queries(200)
			truth, exactLat := groundTruth(ix, qs, 3)
			build := buildGraph(ix)
			rec, p50, p99 := measure(ix, qs, truth, 0)
			for b.Loop() {
				ix.Search(qs[0], 10)
			}
			b.ReportMetric(percentile(exactLat, 0.5), "exact-p50-ms")
			b.ReportMetric(percentile(exactLat, 0.99), "exact-p99-ms")
			b.ReportMetric(p50, "hnsw-p50-ms")
			b.ReportMetric(p99, "hnsw-p99-ms")
			b.ReportMetric(rec, "recall@10")
			b.ReportMetric(build.Seconds()*1e3/float64(n), "build-ms/vector")
		})
	}
}
