package corpus

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/store"
)

// Bulk ingestion for Add. Files are read and chunked on every
// core, in order; their sources and chunks are committed to the store in
// batches (one transaction per batch, the manifest saved after each, so an
// interrupted run keeps every committed file and a re-run skips it); the
// chunks then flow to the embedder, which keeps several requests in flight
// (spread over the pool's hosts), commits vectors in batches and adds them
// to the vector index. Reading runs ahead of embedding by a bounded amount.

const (
	commitFiles       = 64              // files per store transaction
	commitChunks      = 2000            // or this many chunks
	commitEvery       = time.Second     // or this long since the last commit
	corpusEmbedBatch  = 64              // texts per embedding request
	embedCommitEvery  = 1024            // vectors per PutEmbeddings
	corpusFileTimeout = 3 * time.Minute // a file that takes longer is skipped
)

// ingestStats is what an ingestion did and where its time went.
type ingestStats struct {
	files, filesDone  atomic.Int64
	bytes, bytesDone  atomic.Int64
	chunksStored      atomic.Int64
	chunksToEmbed     atomic.Int64
	chunksEmbedded    atomic.Int64
	chunksNotEmbedded atomic.Int64
	start             time.Time

	// Where the time goes, summed over the goroutines doing it: reading
	// and chunking files (on every core), committing sources and chunks
	// and saving the manifest (the main loop), the main loop waiting for
	// the embedder to take more chunks (embedding is behind), embedding
	// requests (several in flight), committing vectors, and the vector
	// index (adding, and at the end waiting for its graph).
	readNS, commitNS, backlogNS, embedNS, vecStoreNS, indexNS atomic.Int64

	// ix is the vector index the vectors go to, once opened: the progress
	// line shows its graph build.
	ix atomic.Pointer[store.Index]
}

// index is the vector index the vectors go to; nil until one is opened.
func (s *ingestStats) index() *store.Index { return s.ix.Load() }

// Progress is a snapshot of an ingestion: files and bytes read of those
// found, chunks stored, to embed, embedded and not embedded, and where the
// time went (summed over the goroutines doing it: reading and chunking
// files on every core, committing sources and chunks and saving the
// manifest, waiting for the embedder to take more chunks, embedding
// requests, committing vectors, and the vector index).
type Progress struct {
	Start                                                          time.Time
	Files, FilesDone, Bytes, BytesDone                             int64
	ChunksStored, ChunksToEmbed, ChunksEmbedded, ChunksNotEmbedded int64
	Read, Commit, Backlog, Embed, VecStore, IndexTime              time.Duration
	// Index is the vector index's status once one is opened.
	Index *store.IndexStatus
}

func (s *ingestStats) snapshot() Progress {
	p := Progress{Start: s.start,
		Files: s.files.Load(), FilesDone: s.filesDone.Load(), Bytes: s.bytes.Load(), BytesDone: s.bytesDone.Load(),
		ChunksStored: s.chunksStored.Load(), ChunksToEmbed: s.chunksToEmbed.Load(),
		ChunksEmbedded: s.chunksEmbedded.Load(), ChunksNotEmbedded: s.chunksNotEmbedded.Load(),
		Read: time.Duration(s.readNS.Load()), Commit: time.Duration(s.commitNS.Load()), Backlog: time.Duration(s.backlogNS.Load()),
		Embed: time.Duration(s.embedNS.Load()), VecStore: time.Duration(s.vecStoreNS.Load()), IndexTime: time.Duration(s.indexNS.Load())}
	if ix := s.index(); ix != nil {
		st := ix.Status()
		p.Index = &st
	}
	return p
}

// How far readFileSafely went with a file.
const (
	stageOpen  = iota // opening it (refused, missing) or seeing it unchanged
	stageRead         // reading and hashing it, or seeing its content unchanged
	stageParse        // making a document of it
	stageDone
)

// fileOutcome is what readFileSafely got of one file.
type fileOutcome struct {
	stage int
	info  fs.FileInfo // of the opened file
	sum   string      // SHA-256 of its bytes, once read
	doc   search.Document
	rec   search.Record
}

// readFileSafely reads the document rel inside dir (abs names it in its
// record) without trusting what dir holds: search.OpenLocalFile follows no
// symlink out of dir and opens only a regular file within the size limit,
// checked before a byte is read. Unless unchanged says the opened file is
// as it was, it is read and hashed through a size-limited reader; unless
// same says the bytes are the ones indexed, they are parsed. All of it
// runs under ctx and corpusFileTimeout: a panic in a parser is an error,
// and a reader that does not return in time is left to finish on its own.
// accept, when set, may refuse the opened file by its info before a byte
// is read (a library attachment with another name: notHardLinked).
func readFileSafely(ctx context.Context, dir, rel, abs string, accept func(fs.FileInfo) error, unchanged func(fs.FileInfo) bool, same func(string) bool) (fileOutcome, error) {
	fctx, cancel := context.WithTimeout(ctx, corpusFileTimeout)
	defer cancel()
	type result struct {
		out fileOutcome
		err error
	}
	ch := make(chan result, 1)
	go func() {
		var out fileOutcome
		defer func() {
			if p := recover(); p != nil {
				ch <- result{out, fmt.Errorf("the reader failed on this file (%v)", p)}
			}
		}()
		err := readFile(fctx, dir, rel, abs, accept, unchanged, same, &out)
		ch <- result{out, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil && ctx.Err() == nil && fctx.Err() != nil {
			r.err = fmt.Errorf("reading it took longer than %s", corpusFileTimeout)
		}
		return r.out, r.err
	case <-fctx.Done():
		if err := ctx.Err(); err != nil {
			return fileOutcome{}, err
		}
		return fileOutcome{stage: stageParse}, fmt.Errorf("reading it took longer than %s", corpusFileTimeout)
	}
}

func readFile(ctx context.Context, dir, rel, abs string, accept func(fs.FileInfo) error, unchanged func(fs.FileInfo) bool, same func(string) bool, out *fileOutcome) error {
	if _, err := search.LocalKind(rel); err != nil {
		out.stage = stageParse // a kind that is not read: said before any of it is
		return err
	}
	f, info, err := search.OpenLocalFile(dir, rel)
	if err != nil {
		return err
	}
	defer f.Close()
	if accept != nil {
		if err := accept(info); err != nil {
			return err
		}
	}
	out.info = info
	if unchanged != nil && unchanged(info) {
		return nil
	}
	out.stage = stageRead
	data, sum, err := search.ReadLocalData(ctx, f, info.Size())
	if err != nil {
		return err
	}
	out.sum = sum
	if same != nil && same(sum) {
		return nil
	}
	out.stage = stageParse
	out.doc, out.rec, err = search.ParseLocalFile(abs, data, info.ModTime())
	if err != nil {
		return err
	}
	out.stage = stageDone
	return nil
}

// refusedFile reports the errors of a file that search.OpenLocalFile or
// ReadLocalData would not read: it is there, but it must not be read.
func refusedFile(err error) bool {
	for _, e := range []error{search.ErrPathEscapes, search.ErrOutsideFolder, search.ErrSymlinkLoop, search.ErrNotRegularFile, search.ErrFileTooLarge} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// readAhead reads jobs on every core; each result arrives on its job's
// channel. The consumer takes them in order and calls release after each,
// so reading stays at most 2 files per core ahead of it.
func readAhead(ctx context.Context, jobs []*corpusJob, read func(*corpusJob) corpusResult) (release func()) {
	workers := max(1, runtime.GOMAXPROCS(0))
	slots := make(chan struct{}, 2*workers)
	feed := make(chan *corpusJob)
	go func() {
		defer close(feed)
		for _, j := range jobs {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case feed <- j:
			case <-ctx.Done():
				return
			}
		}
	}()
	for w := 0; w < workers; w++ {
		go func() {
			for j := range feed {
				r := read(j)
				j.res <- &r
			}
		}()
	}
	return func() { <-slots }
}

// embedder turns stored chunks into cached embeddings and index entries.
type embedder struct {
	ctx      context.Context
	st       Store
	model    string
	embed    func(context.Context, []string) ([][]float32, error)
	fatalErr func(error) bool
	parallel int
	stats    *ingestStats

	in   chan []store.Chunk
	done chan struct{}

	mu    sync.Mutex
	fatal error // the backend cannot embed: embedding stopped
	other error // an embedding request failed (last one)
}

func newEmbedder(ctx context.Context, st Store, em Embedder, stats *ingestStats) *embedder {
	e := &embedder{ctx: ctx, st: st, model: em.Model, embed: em.Embed, fatalErr: em.Fatal, parallel: max(em.Parallel, 1), stats: stats,
		in: make(chan []store.Chunk, 64), done: make(chan struct{})}
	go e.run()
	return e
}

// add queues chunks (already committed) for embedding; it waits while
// the embedder is a full queue behind.
func (e *embedder) add(chunks []store.Chunk) {
	if len(chunks) == 0 {
		return
	}
	select {
	case e.in <- chunks:
	default:
		t0 := time.Now()
		e.in <- chunks
		e.stats.backlogNS.Add(int64(time.Since(t0)))
	}
}

// finish waits until everything queued is embedded (or given up).
func (e *embedder) finish() {
	close(e.in)
	<-e.done
}

func (e *embedder) stopped() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.fatal != nil || e.ctx.Err() != nil
}

func (e *embedder) failed(err error, n int) {
	e.stats.chunksNotEmbedded.Add(int64(n))
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.ctx.Err() != nil:
	case err != nil && e.fatalErr != nil && e.fatalErr(err):
		if e.fatal == nil {
			e.fatal = err
		}
	default:
		e.other = err
	}
}

type embedded struct {
	chunks []store.Chunk
	vecs   [][]float32
}

func (e *embedder) run() {
	defer close(e.done)
	batches := make(chan []store.Chunk)
	results := make(chan embedded, e.parallel)
	var workers sync.WaitGroup
	for w := 0; w < e.parallel; w++ {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for b := range batches {
				if e.stopped() {
					e.failed(nil, len(b))
					continue
				}
				texts := make([]string, len(b))
				for i, c := range b {
					texts[i] = c.Text
				}
				t0 := time.Now()
				vecs, err := e.embed(e.ctx, texts)
				e.stats.embedNS.Add(int64(time.Since(t0)))
				if err != nil {
					e.failed(err, len(b))
					continue
				}
				results <- embedded{b, vecs}
			}
		}()
	}
	go func() {
		workers.Wait()
		close(results)
	}()
	var saving sync.WaitGroup
	saving.Add(1)
	go func() {
		defer saving.Done()
		e.save(results)
	}()

	seen := map[string]bool{} // hashes queued in this run
	var batch []store.Chunk
	for chunks := range e.in {
		if e.stopped() {
			continue
		}
		hashes := make([]string, len(chunks))
		for i, c := range chunks {
			if c.Hash == "" {
				c.Hash = store.HashText(c.Text)
				chunks[i] = c
			}
			hashes[i] = c.Hash
		}
		missing, err := e.st.MissingEmbeddings(e.model, hashes)
		if err != nil {
			e.failed(err, 0)
			continue
		}
		need := map[string]bool{}
		for _, h := range missing {
			need[h] = !seen[h]
		}
		for _, c := range chunks {
			if !need[c.Hash] {
				continue
			}
			need[c.Hash] = false
			seen[c.Hash] = true
			e.stats.chunksToEmbed.Add(1)
			batch = append(batch, c)
			if len(batch) == corpusEmbedBatch {
				batches <- batch
				batch = nil
			}
		}
	}
	if len(batch) > 0 {
		batches <- batch
	}
	close(batches)
	saving.Wait()
}

// save commits vectors in batches and adds them to the vector index.
func (e *embedder) save(results <-chan embedded) {
	var ix *store.Index
	pending := map[string][]float32{}
	var ids []string
	var vecs [][]float32
	flush := func() {
		if len(pending) == 0 {
			return
		}
		t0 := time.Now()
		err := e.st.PutEmbeddings(e.model, pending)
		e.stats.vecStoreNS.Add(int64(time.Since(t0)))
		if err != nil {
			e.failed(err, len(ids))
		} else {
			e.stats.chunksEmbedded.Add(int64(len(ids)))
			t0 = time.Now()
			if ix == nil {
				if ix, _ = e.st.Index(e.model); ix != nil {
					e.stats.ix.Store(ix)
				}
			}
			if ix != nil {
				_ = ix.AddBatch(ids, vecs) // a vector the index refuses is still cached and searched by keyword
			}
			e.stats.indexNS.Add(int64(time.Since(t0)))
		}
		pending, ids, vecs = map[string][]float32{}, nil, nil
	}
	for r := range results {
		for i, c := range r.chunks {
			pending[c.Hash] = r.vecs[i]
			ids = append(ids, c.ID)
			vecs = append(vecs, r.vecs[i])
		}
		if len(ids) >= embedCommitEvery {
			flush()
		}
	}
	flush()
}

// finishIndex waits for the vector index's background work: the graph that
// large batches have the index build on every core while embedding goes on.
// corpus add leaves a finished index, or every later command would take the
// build up where the last one stopped (a search would spend both cores on
// it, then rewrite the file at exit). Ctrl-C ends the wait; what is linked
// by then is saved when the store closes and the rest is linked when the
// index is next opened.
func (e *embedder) finishIndex(ctx context.Context) {
	ix := e.stats.index()
	if ix == nil {
		return
	}
	t0 := time.Now()
	_ = ix.Wait(ctx) // interrupted: the next corpus add or run finishes the index
	e.stats.indexNS.Add(int64(time.Since(t0)))
}

// outcome is how embedding went, once it is finished.
func (e *embedder) outcome() *EmbedOutcome {
	e.mu.Lock()
	defer e.mu.Unlock()
	o := &EmbedOutcome{Model: e.model, Parallel: e.parallel, Fatal: e.fatal, Failed: e.other}
	if ix := e.stats.index(); ix != nil {
		st := ix.Status()
		o.Index = &st
	}
	return o
}
