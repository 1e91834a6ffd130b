package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/researchtui/researchtui/corpus"
	"github.com/researchtui/researchtui/llm/ollamafake"
	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/store"
)

// BenchmarkCorpusAdd is corpus add's throughput against the fake embedding
// server (768-d vectors over real HTTP, no model time), so it measures
// everything researchtui adds around the model: reading and chunking,
// committing, the embedding requests' encoding, and the vector index. The
// larger size crosses the index's switch point, so its graph is built too.
//
//	go test -run '^$' -bench CorpusAdd -benchtime 1x ./ui/cli/
func BenchmarkCorpusAdd(b *testing.B) {
	for _, files := range []int{500, 6000} {
		b.Run(fmt.Sprintf("files=%d", files), func(b *testing.B) {
			oll := ollamafake.New(ollamafake.Options{})
			defer oll.Close()
			root := b.TempDir()
			dir := libraryFolder(b, root, files, 1500)
			b.Setenv("OLLAMA_HOST", oll.URL)
			b.Setenv("RESEARCHTUI_CONFIG", filepath.Join(root, "none.toml"))
			var st ingestReport
			run := 0
			for b.Loop() {
				run++
				b.Setenv("RESEARCHTUI_DATA_DIR", filepath.Join(root, fmt.Sprint("data", run)))
				st = benchCorpusAdd(b, dir)
			}
			// Shares of the wall time: how busy each stage kept its
			// goroutine (reading: of one core; embedding: of one request
			// slot). The stage near 1 is what the rest waits for;
			// backlog is the reader waiting for the embedder.
			el := st.elapsed.Seconds()
			b.ReportMetric(float64(st.chunks), "chunks")
			b.ReportMetric(float64(st.chunks)/el, "chunks/s")
			b.ReportMetric(st.read/el, "read-share")
			b.ReportMetric(st.commit/el, "commit-share")
			b.ReportMetric(st.backlog/el, "backlog-share")
			b.ReportMetric(st.embed/el/float64(st.parallel), "embed-share")
			b.ReportMetric(st.vecStore/el, "vecstore-share")
			b.ReportMetric(st.index/el, "index-share")
			b.ReportMetric(st.close/el, "close-share")
		})
	}
}

// ingestReport is what one benchmark run measured (times in seconds, read
// and embed summed over the goroutines doing them).
type ingestReport struct {
	chunks                                               int64
	elapsed                                              time.Duration
	read, commit, backlog, embed, vecStore, index, close float64
	parallel                                             int
}

func benchCorpusAdd(b *testing.B, dir string) ingestReport {
	cfg, st := configuredStore(b)
	be, err := newBackend(cfg)
	if err != nil {
		b.Fatal(err)
	}
	eng := &pipeline.Engine{Store: st, LLM: be}
	d := corpusDeps{st: st, model: cfg.EmbedModel, parallel: max(cfg.modelParallel(), 2),
		embed: func(ctx context.Context, texts []string) ([][]float32, error) {
			return eng.EmbedDocuments(ctx, cfg.EmbedModel, texts)
		}}
	var rep ingestReport
	err = corpusAddReport(context.Background(), cfg, d, []string{dir}, io.Discard, io.Discard, func(s corpus.Progress) {
		rep = ingestReport{chunks: s.ChunksEmbedded, elapsed: time.Since(s.Start), parallel: d.parallel,
			read: s.Read.Seconds(), commit: s.Commit.Seconds(), backlog: s.Backlog.Seconds(), embed: s.Embed.Seconds(),
			vecStore: s.VecStore.Seconds(), index: s.IndexTime.Seconds()}
	})
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	st.Close() // saves the vector index if it changed since its last save: part of the cost
	rep.close = time.Since(t0).Seconds()
	rep.elapsed += time.Since(t0)
	return rep
}

// BenchmarkSearchWarm times `researchtui search` as a user runs it, in a
// fresh process, on a store of 100,000 embedded chunks whose vector index
// file is saved (a warm store: the file is in the page cache): opening the
// store and mapping the index, embedding the query (the fake server), the
// graph walk, reading the passages and printing them.
//
//	go test -run '^$' -bench SearchWarm -benchtime 5x ./ui/cli/
func BenchmarkSearchWarm(b *testing.B) {
	const n = 100000
	oll := ollamafake.New(ollamafake.Options{})
	defer oll.Close()
	root := b.TempDir()
	data := filepath.Join(root, "data")
	st, err := store.Open(filepath.Join(data, "researchtui.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	words := strings.Fields("thermal conductivity superconductor lattice phonon electron scattering measurement anisotropic gap node quasiparticle transport magnetic field temperature sample crystal")
	for src := 0; src < n/50; src++ {
		var batch []store.SourceBatch
		emb := map[string][]float32{}
		key := fmt.Sprintf("doi:10.1/%06d", src)
		var chunks []store.Chunk
		for j := 0; j < 50; j++ {
			text := fmt.Sprintf("passage %d of paper %d: %s %s %s", j, src, words[(src+j)%len(words)], words[(src*3+j)%len(words)], words[(j*7)%len(words)])
			chunks = append(chunks, store.Chunk{Seq: j, Text: text})
			emb[store.HashText(text)] = ollamafake.Vector("search_document: "+text, 768)
		}
		batch = append(batch, store.SourceBatch{Key: key, Record: []byte(`{"title":"paper","source":"arxiv"}`), Chunks: chunks})
		if err := st.PutSourceBatch(batch); err != nil {
			b.Fatal(err)
		}
		if err := st.PutEmbeddings("nomic-embed-text", emb); err != nil {
			b.Fatal(err)
		}
	}
	// No index file yet: the first open reads the vectors from bbolt
	// (searches are exact from then on), the graph is built in the
	// background and saved.
	t0 := time.Now()
	ix, err := st.Index("nomic-embed-text")
	if err != nil {
		b.Fatal(err)
	}
	load := time.Since(t0)
	ix.Wait(context.Background())
	graph := time.Since(t0) - load
	st.Close()
	env := append(os.Environ(), "RESEARCHTUI_TEST_MAIN=1", "HOME="+root, "RESEARCHTUI_DATA_DIR="+data,
		"RESEARCHTUI_CONFIG="+filepath.Join(root, "none.toml"), "OLLAMA_HOST="+oll.URL)
	search := func() time.Duration {
		cmd := exec.Command(os.Args[0], "search", "-k", "5", "anisotropic gap phonon scattering")
		cmd.Env = env
		t0 := time.Now()
		out, err := cmd.CombinedOutput()
		el := time.Since(t0)
		if err != nil || !strings.Contains(string(out), "passage") {
			b.Fatalf("search: %v\n%s", err, out)
		}
		return el
	}
	search() // the page cache holds the files now
	var lat []time.Duration
	for b.Loop() {
		lat = append(lat, search())
	}
	slices.Sort(lat)
	b.ReportMetric(load.Seconds(), "rebuild-load-s")
	b.ReportMetric(graph.Seconds(), "rebuild-graph-s")
	b.ReportMetric(float64(lat[len(lat)/2])/1e6, "search-p50-ms")
	b.ReportMetric(float64(lat[len(lat)-1])/1e6, "search-max-ms")
}
