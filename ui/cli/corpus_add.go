package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/store"
)

// corpus add: which files to read, what each one needs (read, skipped,
// unchanged), committing them in batches with the manifest, queuing their
// chunks for the embedder (corpus_ingest.go), and dropping files that are
// gone. cmd_corpus.go has the command, the manifest and corpus list.
type corpusCounts struct{ added, updated, unchanged, skipped, removed int }

// corpusDeps is what corpus add works with: the store, and the embedding
// model when there is a backend (embed nil: the text is indexed and the next
// run embeds it).
type corpusDeps struct {
	st       *store.Store
	model    string
	embed    func(context.Context, []string) ([][]float32, error)
	parallel int // embedding requests in flight
}

// corpusJob is one file to add; old is its manifest entry before this run.
type corpusJob struct {
	abs, shown string
	size       int64
	old        *corpusEntry
	res        chan corpusResult
}

const (
	fileRead = iota
	fileUnchanged
	fileTouched // same content, new modification time
	fileSkipped
)

type corpusResult struct {
	state   int
	reason  string // why it was skipped
	dropOld bool   // the file was indexed but its new content cannot be
	info    os.FileInfo
	sum     string
	doc     search.Document
	rec     search.Record
	chunks  []store.Chunk
}

// readCorpusFile does the per-file work that needs no shared state: stat,
// hash, read and chunk. It runs on several cores at once.
func readCorpusFile(ctx context.Context, j *corpusJob, stats *ingestStats) corpusResult {
	t0 := time.Now()
	defer func() {
		stats.readNS.Add(int64(time.Since(t0)))
		stats.bytesDone.Add(j.size)
	}()
	info, err := os.Stat(j.abs)
	if err != nil {
		return corpusResult{state: fileSkipped, reason: plainErr(err)}
	}
	if info.Size() > search.MaxLocalFileBytes {
		// Said before hashing it: reading hundreds of megabytes only to
		// skip them took seconds. An indexed file that grew this big drops
		// its old version, as one that can no longer be read does.
		return corpusResult{state: fileSkipped, dropOld: true,
			reason: fmt.Sprintf("too large to index (%d MB, limit %d MB)", info.Size()>>20, search.MaxLocalFileBytes>>20)}
	}
	old := j.old
	if old != nil && old.Size == info.Size() && old.ModTime.Equal(info.ModTime()) {
		return corpusResult{state: fileUnchanged, info: info}
	}
	sum, err := fileSHA256(j.abs)
	if err != nil {
		return corpusResult{state: fileSkipped, reason: plainErr(err)}
	}
	if old != nil && old.SHA256 == sum {
		return corpusResult{state: fileTouched, info: info, sum: sum}
	}
	doc, rec, err := readLocalSafely(ctx, j.abs)
	if err != nil {
		return corpusResult{state: fileSkipped, reason: sanitize(err.Error()), dropOld: ctx.Err() == nil}
	}
	isPDF := doc.ContentType == "application/pdf"
	parts := search.ChunkPages(doc.Pages, search.ChunkOptions{TargetTokens: 500, OverlapTokens: 50})
	chunks := make([]store.Chunk, 0, len(parts))
	for i, p := range parts {
		c := store.Chunk{ID: store.ChunkID(rec.Key, i), SourceKey: rec.Key, Seq: i, Text: p.Text, Start: p.Start, End: p.End, Hash: store.HashText(p.Text), References: p.References}
		if isPDF {
			c.Page = p.Page
		}
		chunks = append(chunks, c)
	}
	return corpusResult{state: fileRead, info: info, sum: sum, doc: doc, rec: rec, chunks: chunks}
}

// corpusIngest is the state of one corpus add: the manifest, the counts,
// the batch waiting to be committed and the embedder.
type corpusIngest struct {
	cfg   *Config
	d     corpusDeps
	m     *corpusManifest
	out   io.Writer
	n     corpusCounts
	stats *ingestStats
	emb   *embedder

	pending    []pendingFile // read, not committed yet
	pendingN   int
	lastCommit time.Time
	unsaved    []pendingFile // committed, not in the saved manifest yet
	lastSave   time.Time
	queued     map[string][]string // file -> chunk hashes sent to the embedder
}

type pendingFile struct {
	job   *corpusJob
	entry *corpusEntry
	item  store.SourceBatch
	line  string
}

func (c *corpusIngest) apply(j *corpusJob, r corpusResult) error {
	switch r.state {
	case fileSkipped:
		fmt.Fprintf(c.out, "  skipped   %s: %s\n", j.shown, r.reason)
		c.n.skipped++
		if r.dropOld && j.old != nil { // it was indexed, but its new content cannot be
			if err := corpusDrop(c.d.st, c.m, j.old); err != nil {
				return err
			}
			fmt.Fprintf(c.out, "  removed   %s (its old version)\n", j.shown)
			c.n.removed++
		}
	case fileUnchanged, fileTouched:
		e := c.m.Files[j.abs]
		if r.state == fileTouched {
			e.Size, e.ModTime = r.info.Size(), r.info.ModTime()
			fmt.Fprintf(c.out, "  unchanged %s (touched, same content)\n", j.shown)
		} else {
			fmt.Fprintf(c.out, "  unchanged %s\n", j.shown)
		}
		c.n.unchanged++
		if c.emb != nil && e.EmbeddedWith != c.d.model {
			// An earlier run was interrupted before its vectors were made.
			chunks, err := c.d.st.Chunks(e.Key)
			if err != nil {
				return err
			}
			c.toEmbed(j.abs, chunks)
		}
	case fileRead:
		raw, err := json.Marshal(r.rec)
		if err != nil {
			return err
		}
		isPDF := r.doc.ContentType == "application/pdf"
		e := &corpusEntry{Path: j.abs, Key: r.rec.Key, Size: r.info.Size(), ModTime: r.info.ModTime(), SHA256: r.sum,
			Title: r.rec.Title, Type: r.doc.ContentType, Chunks: len(r.chunks), Indexed: time.Now().UTC()}
		detail := fmt.Sprintf("%d chunks", len(r.chunks))
		if isPDF {
			e.Pages = len(r.doc.Pages)
			detail = fmt.Sprintf("%d pages, %d chunks", len(r.doc.Pages), len(r.chunks))
		}
		item := store.SourceBatch{Key: r.rec.Key, Record: raw, Chunks: r.chunks}
		if pages, err := json.Marshal(r.doc.Pages); err == nil {
			item.Document = pages
		}
		line := fmt.Sprintf("  added     %s (%s)\n", j.shown, detail)
		if j.old != nil {
			line = fmt.Sprintf("  updated   %s (%s)\n", j.shown, detail)
		}
		c.pending = append(c.pending, pendingFile{job: j, entry: e, item: item, line: line})
		c.pendingN += len(r.chunks)
	}
	if len(c.pending) >= commitFiles || c.pendingN >= commitChunks || len(c.pending) > 0 && time.Since(c.lastCommit) >= commitEvery {
		return c.commit()
	}
	return nil
}

// commit writes the waiting files in one transaction, then records them in
// the manifest (saved, so an interruption keeps them) and queues their
// chunks for embedding.
func (c *corpusIngest) commit() error {
	c.lastCommit = time.Now()
	if len(c.pending) == 0 {
		return nil
	}
	items := make([]store.SourceBatch, len(c.pending))
	for i, p := range c.pending {
		items[i] = p.item
	}
	t0 := time.Now()
	err := c.d.st.PutSourceBatch(items)
	c.stats.commitNS.Add(int64(time.Since(t0)))
	if err != nil {
		return err
	}
	for _, p := range c.pending {
		c.m.Files[p.job.abs] = p.entry
		c.stats.chunksStored.Add(int64(len(p.item.Chunks)))
		if c.emb != nil {
			c.toEmbed(p.job.abs, p.item.Chunks)
		}
	}
	c.unsaved = append(c.unsaved, c.pending...)
	c.pending, c.pendingN = nil, 0
	if time.Since(c.lastSave) >= manifestEvery {
		return c.saveManifest()
	}
	return nil
}

// manifestEvery spaces manifest saves: the manifest is rewritten whole, so
// saving it after every batch would cost time quadratic in the files. A
// killed run re-reads at most this much work (its vectors are cached).
const manifestEvery = 2 * time.Second

// saveManifest saves the manifest, then reports the files it now records:
// a file is said to be added once a re-run would skip it.
func (c *corpusIngest) saveManifest() error {
	t0 := time.Now()
	err := saveManifest(c.cfg, c.m)
	c.stats.commitNS.Add(int64(time.Since(t0)))
	c.lastSave = time.Now()
	if err != nil {
		return err
	}
	for _, p := range c.unsaved {
		fmt.Fprint(c.out, p.line)
		if p.job.old != nil {
			c.n.updated++
		} else {
			c.n.added++
		}
	}
	c.unsaved = nil
	return nil
}

func (c *corpusIngest) toEmbed(abs string, chunks []store.Chunk) {
	hashes := make([]string, len(chunks))
	for i, ch := range chunks {
		hashes[i] = ch.Hash
	}
	c.queued[abs] = hashes
	c.emb.add(chunks)
}

// markEmbedded records, after a complete embedding pass, which files have
// all their vectors, so a re-run does not even look at their chunks.
func (c *corpusIngest) markEmbedded() {
	if c.emb == nil || c.emb.stopped() || c.stats.chunksNotEmbedded.Load() > 0 {
		return
	}
	for abs := range c.queued {
		if e := c.m.Files[abs]; e != nil {
			e.EmbeddedWith = c.d.model
		}
	}
}

func corpusAdd(ctx context.Context, cfg *Config, d corpusDeps, args []string, out, errOut io.Writer) error {
	return corpusAddReport(ctx, cfg, d, args, out, errOut, nil)
}

// corpusAddReport is corpusAdd; report, if set, gets the statistics when
// the work is done (benchmarks).
func corpusAddReport(ctx context.Context, cfg *Config, d corpusDeps, args []string, out, errOut io.Writer, report func(*ingestStats)) error {
	m, err := loadManifest(cfg)
	if err != nil {
		return err
	}
	now := time.Now()
	c := &corpusIngest{cfg: cfg, d: d, m: m, out: out, stats: &ingestStats{start: now}, queued: map[string][]string{}, lastCommit: now, lastSave: now}
	var missing []string
	seen := map[string]bool{}
	var jobs []*corpusJob
	addJob := func(abs, shown string) {
		if seen[abs] {
			return
		}
		seen[abs] = true
		j := &corpusJob{abs: abs, shown: shown, res: make(chan corpusResult, 1)}
		if e := m.Files[abs]; e != nil {
			old := *e
			j.old = &old
		}
		if fi, err := os.Stat(abs); err == nil {
			j.size = fi.Size()
		}
		c.stats.bytes.Add(j.size)
		jobs = append(jobs, j)
	}
	var dirs []dirArg
	for _, arg := range args {
		abs, err := filepath.Abs(arg)
		if err != nil {
			return err
		}
		info, err := os.Stat(abs)
		if err != nil {
			fmt.Fprintf(out, "  skipped   %s: %s\n", sanitize(arg), plainErr(err))
			missing = append(missing, arg)
			continue
		}
		if !info.IsDir() {
			addJob(abs, sanitize(arg))
			continue
		}
		dirs = append(dirs, dirArg{arg, abs})
		err = filepath.WalkDir(abs, func(p string, de fs.DirEntry, werr error) error {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			rel := displayPath(arg, abs, p)
			if werr != nil {
				fmt.Fprintf(out, "  skipped   %s: %s\n", rel, plainErr(werr))
				c.n.skipped++
				if de != nil && de.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if p != abs && strings.HasPrefix(de.Name(), ".") {
				if de.IsDir() {
					return fs.SkipDir
				}
				return nil // hidden files are not documents
			}
			if de.IsDir() {
				return nil
			}
			if !de.Type().IsRegular() {
				fmt.Fprintf(out, "  skipped   %s: not a regular file\n", rel)
				c.n.skipped++
				return nil
			}
			addJob(p, rel)
			return nil
		})
		if err != nil {
			return err
		}
	}
	c.stats.files.Store(int64(len(jobs)))
	stopBar := make(chan struct{})
	bar := showProgress(errOut, c.stats, stopBar)
	if d.embed != nil {
		c.emb = newEmbedder(ctx, d.st, d.model, d.embed, d.parallel, c.stats)
	}
	release := readAhead(ctx, jobs, func(j *corpusJob) corpusResult { return readCorpusFile(ctx, j, c.stats) })
	var loopErr error
	for _, j := range jobs {
		var r corpusResult
		select {
		case r = <-j.res:
			release()
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		c.stats.filesDone.Add(1)
		if loopErr = c.apply(j, r); loopErr != nil {
			break
		}
	}
	if err := c.commit(); err != nil && loopErr == nil { // what was read is kept, even when interrupted
		loopErr = err
	}
	if err := c.saveManifest(); err != nil && loopErr == nil {
		loopErr = err
	}
	if c.emb != nil {
		c.emb.finish()
		c.emb.finishIndex(ctx)
	}
	close(stopBar)
	bar.Wait()
	if loopErr == nil && ctx.Err() == nil {
		loopErr = c.dropRemoved(seen, dirs)
	}
	c.markEmbedded()
	if report != nil {
		report(c.stats)
	}
	if err := saveManifest(cfg, m); err != nil && loopErr == nil {
		loopErr = err
	}
	if loopErr != nil {
		return loopErr
	}
	n := c.n
	fmt.Fprintf(out, "%d added, %d updated, %d unchanged, %d skipped, %d removed; %d documents in the corpus\n",
		n.added, n.updated, n.unchanged, n.skipped, n.removed, len(m.Files))
	if c.emb != nil {
		fmt.Fprint(out, c.emb.note(c.stats))
	}
	if ctx.Err() != nil {
		return &exitError{exitCancelled, errors.New("interrupted: what was read is kept; run the same command again to continue")}
	}
	if n.added+n.updated > 0 {
		fmt.Fprintln(out, "they are searched when a run's --sources include local")
	}
	if len(missing) > 0 {
		return &exitError{exitUsage, fmt.Errorf("not found: %s", strings.Join(missing, ", "))}
	}
	return nil
}

// dirArg is a folder named on the command line.
type dirArg struct{ arg, abs string }

// dropRemoved takes out of the corpus the files once indexed under the
// folders given, or anywhere, that no longer exist.
func (c *corpusIngest) dropRemoved(seen map[string]bool, dirs []dirArg) error {
	for _, d := range dirs {
		arg, abs := d.arg, d.abs
		for p, e := range c.m.Files {
			if strings.HasPrefix(p, abs+string(filepath.Separator)) && !seen[p] {
				if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
					if err := corpusDrop(c.d.st, c.m, e); err != nil {
						return err
					}
					fmt.Fprintf(c.out, "  removed   %s (no longer exists)\n", displayPath(arg, abs, p))
					c.n.removed++
				}
			}
		}
	}
	for p, e := range c.m.Files {
		if seen[p] {
			continue
		}
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			if err := corpusDrop(c.d.st, c.m, e); err != nil {
				return err
			}
			fmt.Fprintf(c.out, "  removed   %s (no longer exists)\n", sanitize(p))
			c.n.removed++
		}
	}
	return nil
}
