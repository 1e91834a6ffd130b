package corpus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/store"
)

// Add: which files to read, what each one needs (read, skipped,
// unchanged), committing them in batches with the manifest, queuing their
// chunks for the embedder (ingest.go), and dropping files that are gone.

// Options are what Add works with.
type Options struct {
	// Manifest is the path of the manifest (corpus.json in the data dir).
	Manifest string
	// Store is the data dir's store, owned by this process.
	Store Store
	// Embedder embeds the chunks as they are committed; nil: the text is
	// indexed and the next run embeds it.
	Embedder *Embedder
	// File, if set, is told each file's outcome as it is settled: verb is
	// added, updated, unchanged, skipped or removed; path the file as
	// named on the command line; detail what happened (why it was
	// skipped, its size). path and detail are untrusted text.
	File func(verb, path, detail string)
	// Watch, if set, is called when reading starts with a function that
	// snapshots the progress (for a progress line); the function it returns
	// is called when reading and embedding are done.
	Watch func(progress func() Progress) (stop func())
}

// Result is what Add did.
type Result struct {
	Added, Updated, Unchanged, Skipped, Removed int
	// Documents is how many documents the corpus holds now.
	Documents int
	// Progress is the final figures: chunks stored and embedded, and
	// where the time went.
	Progress Progress
	// Embedded says how embedding went (nil without an Embedder).
	Embedded *EmbedOutcome
}

// EmbedOutcome is how embedding went.
type EmbedOutcome struct {
	Model    string
	Parallel int // requests in flight
	// Fatal stopped embedding (the backend cannot embed); Failed is the
	// last request that failed otherwise.
	Fatal, Failed error
	// Index is the vector index the vectors went to; nil when none opened.
	Index *store.IndexStatus
}

// ErrInterrupted is Add's error when ctx ended: what was read is kept.
var ErrInterrupted = errors.New("interrupted: what was read is kept; run the same command again to continue")

// NotFoundError lists paths given to Add that do not exist; the others
// were added.
type NotFoundError struct{ Paths []string }

func (e *NotFoundError) Error() string { return "not found: " + strings.Join(e.Paths, ", ") }

// corpusJob is one file to add; old is its manifest entry before this run.
// It is read as rel inside dir: no symlink leads it out of dir (the folder
// named on the command line, or the folder of a file named there).
type corpusJob struct {
	abs, shown string
	dir, rel   string
	size       int64
	old        *Entry
	item       *itemJob // a library item, not a file
	// res brings the job's result: a pointer, so that the channel's
	// buffer of every job waiting its turn is a word, not a whole result
	// (some 1 KB: 100 MB for a library of 100,000 items).
	res chan *corpusResult
}

const (
	fileRead = iota
	fileUnchanged
	fileTouched // same content, new modification time
	fileSkipped
	itemMetaChanged // a library item's text is the same, its metadata not
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
	meta    string // a library item's metadata hash
	file    string // the library item's attachment read ("" its abstract)
}

// readCorpusFile does the per-file work that needs no shared state: open
// (refusing what must not be read), hash, read and chunk. It runs on
// several cores at once.
func readCorpusFile(ctx context.Context, st Store, j *corpusJob, stats *ingestStats) corpusResult {
	t0 := time.Now()
	defer func() {
		stats.readNS.Add(int64(time.Since(t0)))
		stats.bytesDone.Add(j.size)
	}()
	old := j.old
	out, err := readFileSafely(ctx, j.dir, j.rel, j.abs, nil,
		func(info fs.FileInfo) bool {
			return old != nil && old.Size == info.Size() && old.ModTime.Equal(info.ModTime())
		},
		func(sum string) bool { return old != nil && old.SHA256 == sum })
	var big *search.TooLargeError
	switch {
	case errors.As(err, &big):
		// Said before reading it: reading hundreds of megabytes only to
		// skip them took seconds. An indexed file that grew this big drops
		// its old version, as one that can no longer be read does.
		return corpusResult{state: fileSkipped, dropOld: true,
			reason: fmt.Sprintf("too large to index (%d MB, limit %d MB)", big.Size>>20, search.MaxLocalFileBytes>>20)}
	case refusedFile(err):
		return corpusResult{state: fileSkipped, dropOld: true, reason: err.Error()}
	case err != nil:
		return corpusResult{state: fileSkipped, reason: plainErr(err), dropOld: out.stage == stageParse && ctx.Err() == nil}
	case out.stage == stageOpen:
		return corpusResult{state: fileUnchanged, info: out.info}
	case out.stage == stageRead:
		return corpusResult{state: fileTouched, info: out.info, sum: out.sum}
	}
	info, sum, doc, rec := out.info, out.sum, out.doc, out.rec
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
	opt   Options
	st    Store
	m     *Manifest
	n     Result
	stats *ingestStats
	emb   *embedder

	pending      []pendingFile // read, not committed yet
	pendingN     int
	lastCommit   time.Time
	unsaved      []pendingFile // committed, not in the saved manifest yet
	lastSave     time.Time
	lastSaveTook time.Duration
	queued       map[string]bool // the files (and items) whose chunks were sent to the embedder
}

type pendingFile struct {
	job       *corpusJob
	entry     *Entry     // a file's manifest entry
	itemEntry *ItemEntry // or a library item's
	item      store.SourceBatch
	verb      string // added or updated
	detail    string
	// keepVectors: the chunks are the ones stored (new metadata only), so
	// nothing is embedded.
	keepVectors bool
}

func (c *corpusIngest) apply(j *corpusJob, r corpusResult) error {
	if j.item != nil {
		return c.applyItem(j, r)
	}
	switch r.state {
	case fileSkipped:
		c.file("skipped", j.shown, r.reason)
		c.n.Skipped++
		if r.dropOld && j.old != nil { // it was indexed, but its new content cannot be
			if err := drop(c.st, c.m, j.old); err != nil {
				return err
			}
			c.file("removed", j.shown, "its old version")
			c.n.Removed++
		}
	case fileUnchanged, fileTouched:
		e := c.m.Files[j.abs]
		if r.state == fileTouched {
			e.Size, e.ModTime = r.info.Size(), r.info.ModTime()
			c.file("unchanged", j.shown, "touched, same content")
		} else {
			c.file("unchanged", j.shown, "")
		}
		c.n.Unchanged++
		if c.emb != nil && e.EmbeddedWith != c.emb.model {
			// An earlier run was interrupted before its vectors were made.
			chunks, err := c.st.Chunks(e.Key)
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
		e := &Entry{Path: j.abs, Key: r.rec.Key, Size: r.info.Size(), ModTime: r.info.ModTime(), SHA256: r.sum,
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
		verb := "added"
		if j.old != nil {
			verb = "updated"
		}
		c.pending = append(c.pending, pendingFile{job: j, entry: e, item: item, verb: verb, detail: detail})
		c.pendingN += len(r.chunks)
	}
	return c.maybeCommit()
}

// maybeCommit commits the waiting files when there are enough of them or
// they have waited long enough.
func (c *corpusIngest) maybeCommit() error {
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
	err := c.st.PutSourceBatch(items)
	c.stats.commitNS.Add(int64(time.Since(t0)))
	if err != nil {
		return err
	}
	for _, p := range c.pending {
		slot := p.job.abs
		if p.itemEntry != nil {
			if c.m.Items == nil {
				c.m.Items = map[string]*ItemEntry{}
			}
			slot = "item:" + itemSlot(p.itemEntry.Library, p.itemEntry.ID)
			c.m.Items[itemSlot(p.itemEntry.Library, p.itemEntry.ID)] = p.itemEntry
		} else {
			c.m.Files[p.job.abs] = p.entry
		}
		if p.keepVectors {
			continue
		}
		c.stats.chunksStored.Add(int64(len(p.item.Chunks)))
		if c.emb != nil {
			c.toEmbed(slot, p.item.Chunks)
		}
	}
	for i := range c.pending {
		// Committed: until the manifest is saved, only its report line
		// is needed, not its record, pages and chunks (thousands of
		// items of a library wait for one save).
		c.pending[i].item = store.SourceBatch{}
	}
	c.unsaved = append(c.unsaved, c.pending...)
	c.pending, c.pendingN = nil, 0
	if time.Since(c.lastSave) >= max(manifestEvery, 10*c.lastSaveTook) {
		return c.saveManifest()
	}
	return nil
}

// manifestEvery spaces manifest saves: the manifest is rewritten whole, so
// saving it after every batch would cost time quadratic in the files; and
// a manifest that takes long to write (100,000 library items: some 50 MB)
// is written at most a tenth of the time. A killed run re-reads at most
// this much work (its vectors are cached).
const manifestEvery = 2 * time.Second

// saveManifest saves the manifest, then reports the files it now records:
// a file is said to be added once a re-run would skip it.
func (c *corpusIngest) saveManifest() error {
	t0 := time.Now()
	err := c.m.Save(c.opt.Manifest)
	c.lastSaveTook = time.Since(t0)
	c.stats.commitNS.Add(int64(c.lastSaveTook))
	c.lastSave = time.Now()
	if err != nil {
		return err
	}
	for _, p := range c.unsaved {
		c.file(p.verb, p.job.shown, p.detail)
		if p.verb == "updated" {
			c.n.Updated++
		} else {
			c.n.Added++
		}
	}
	c.unsaved = nil
	return nil
}

func (c *corpusIngest) file(verb, path, detail string) {
	if c.opt.File != nil {
		c.opt.File(verb, path, detail)
	}
}

func (c *corpusIngest) toEmbed(abs string, chunks []store.Chunk) {
	c.queued[abs] = true
	c.emb.add(chunks)
}

// markEmbedded records, after a complete embedding pass, which files have
// all their vectors, so a re-run does not even look at their chunks.
func (c *corpusIngest) markEmbedded() {
	if c.emb == nil || c.emb.stopped() || c.stats.chunksNotEmbedded.Load() > 0 {
		return
	}
	for slot := range c.queued {
		if e := c.m.Files[slot]; e != nil {
			e.EmbeddedWith = c.emb.model
		} else if e := c.m.Items[strings.TrimPrefix(slot, "item:")]; e != nil {
			e.EmbeddedWith = c.emb.model
		}
	}
}

// Add adds the files and folders at paths (walked; hidden files are not
// documents) to the corpus: new and changed files are read, chunked,
// stored and embedded; unchanged ones are skipped; files once indexed that
// no longer exist are dropped. What was read is kept when ctx ends
// (ErrInterrupted). Paths that do not exist give a *NotFoundError after the
// others are added.
func Add(ctx context.Context, opt Options, paths []string) (Result, error) {
	m, err := LoadManifest(opt.Manifest)
	if err != nil {
		return Result{}, err
	}
	now := time.Now()
	c := &corpusIngest{opt: opt, st: opt.Store, m: m, stats: &ingestStats{start: now}, queued: map[string]bool{}, lastCommit: now, lastSave: now}
	var missing []string
	seen := map[string]bool{}
	var jobs []*corpusJob
	addJob := func(abs, shown, dir, rel string) {
		if seen[abs] {
			return
		}
		seen[abs] = true
		j := &corpusJob{abs: abs, shown: shown, dir: dir, rel: rel, res: make(chan *corpusResult, 1)}
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
	for _, arg := range paths {
		abs, err := filepath.Abs(arg)
		if err != nil {
			return Result{}, err
		}
		info, err := os.Stat(abs)
		if err != nil {
			c.file("skipped", arg, plainErr(err))
			missing = append(missing, arg)
			continue
		}
		if !info.IsDir() {
			// A file named on the command line is read where it is, a
			// link the person names followed to its target.
			real := abs
			if r, err := filepath.EvalSymlinks(abs); err == nil {
				real = r
			}
			addJob(abs, arg, filepath.Dir(real), filepath.Base(real))
			continue
		}
		dirs = append(dirs, dirArg{arg, abs})
		err = filepath.WalkDir(abs, func(p string, de fs.DirEntry, werr error) error {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			rel := displayPath(arg, abs, p)
			if werr != nil {
				c.file("skipped", rel, plainErr(werr))
				c.n.Skipped++
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
				c.file("skipped", rel, "not a regular file")
				c.n.Skipped++
				return nil
			}
			inDir, err := filepath.Rel(abs, p)
			if err != nil {
				return err
			}
			addJob(p, rel, abs, inDir)
			return nil
		})
		if err != nil {
			return Result{}, err
		}
	}
	res, err := c.run(ctx, jobs, func(j *corpusJob) corpusResult { return readCorpusFile(ctx, c.st, j, c.stats) },
		func() error { return c.dropRemoved(seen, dirs) })
	if err != nil {
		return res, err
	}
	if len(missing) > 0 {
		return res, &NotFoundError{Paths: missing}
	}
	return res, nil
}

// run ingests the jobs with read, watched and embedded as the options say;
// settle, after a complete pass, drops what is gone. It saves the manifest
// and returns the counts.
func (c *corpusIngest) run(ctx context.Context, jobs []*corpusJob, read func(*corpusJob) corpusResult, settle func() error) (Result, error) {
	c.stats.files.Store(int64(len(jobs)))
	stopWatch := func() {}
	if c.opt.Watch != nil {
		stopWatch = c.opt.Watch(c.stats.snapshot)
	}
	if c.opt.Embedder != nil {
		c.emb = newEmbedder(ctx, c.st, *c.opt.Embedder, c.stats)
	}
	loopErr := c.ingest(ctx, jobs, read)
	stopWatch()
	if loopErr == nil && ctx.Err() == nil {
		loopErr = settle()
	}
	c.markEmbedded()
	res := c.n
	res.Progress = c.stats.snapshot()
	if err := c.m.Save(c.opt.Manifest); err != nil && loopErr == nil {
		loopErr = err
	}
	if loopErr != nil {
		return res, loopErr
	}
	res.Documents = len(c.m.Files) + len(c.m.Items)
	if c.emb != nil {
		res.Embedded = c.emb.outcome()
	}
	if ctx.Err() != nil {
		return res, ErrInterrupted
	}
	return res, nil
}

// ingest reads the jobs (on every core, in order), applies each result,
// commits what was read (even when interrupted) and waits for the
// embedder.
func (c *corpusIngest) ingest(ctx context.Context, jobs []*corpusJob, read func(*corpusJob) corpusResult) error {
	release := readAhead(ctx, jobs, read)
	var loopErr error
	for _, j := range jobs {
		var r corpusResult
		select {
		case p := <-j.res:
			r = *p
			j.res = nil
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
	return loopErr
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
					if err := drop(c.st, c.m, e); err != nil {
						return err
					}
					c.file("removed", displayPath(arg, abs, p), "no longer exists")
					c.n.Removed++
				}
			}
		}
	}
	for p, e := range c.m.Files {
		if seen[p] {
			continue
		}
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			if err := drop(c.st, c.m, e); err != nil {
				return err
			}
			c.file("removed", p, "no longer exists")
			c.n.Removed++
		}
	}
	return nil
}

// displayPath is how a file is named in Add's reports: relative to the
// argument it was found under.
func displayPath(arg, abs, p string) string {
	if rel, err := filepath.Rel(abs, p); err == nil {
		return filepath.Join(arg, rel)
	}
	return p
}

// plainErr is an error about a file without the file's path.
func plainErr(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return err.Error()
}
