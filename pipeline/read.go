package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/textkit"
)

// foundSet is the research stage's output: every distinct source found, in
// the order found, and which sub-questions each one serves.
type foundSet struct {
	Records []search.Record     `json:"records"`
	BySubQ  map[string][]string `json:"by_subq"`
}

func (f *foundSet) record(key string) (search.Record, bool) {
	for _, r := range f.Records {
		if r.Key == key {
			return r, true
		}
	}
	return search.Record{}, false
}

// readResult is a per-source checkpoint of the read stage.
type readResult struct {
	FullText bool `json:"full_text"`
	Chunks   int  `json:"chunks"`
}

// readSource turns one found source into stored chunks, from its full text
// when it can be fetched, else from its abstract. Already-read sources
// (a resumed run, or a source shared with a past session) are not re-read.
func (o *orchestrator) readSource(ctx context.Context, rec search.Record) ([]store.Chunk, bool, error) {
	var rr readResult
	if ok, err := o.loadCheckpoint("read/"+rec.Key, &rr); err != nil {
		return nil, false, err
	} else if ok {
		chunks, err := o.engine.Store.Chunks(rec.Key)
		return chunks, rr.FullText, err
	}
	a := &agentCall{o: o, stage: StageRead, name: "reader"}
	if chunks, full, ok, err := o.readOwnCopy(rec); ok || err != nil {
		return chunks, full, err
	}
	pages, full, why, noText := o.fetchText(ctx, rec)
	if ctx.Err() != nil {
		skip, ok := skippedOnPurpose(ctx)
		if !ok {
			return nil, false, ctx.Err()
		}
		// Cut short on purpose (a straggler, the deadline): the abstract
		// stands in, and the source's status says why.
		pages, full, why, noText = nil, false, skip, false
		o.noteUnread(rec.Title, skip)
	}
	var chunks []store.Chunk
	opt := search.ChunkOptions{TargetTokens: 500, OverlapTokens: 50}
	var parts []search.Chunk
	if full {
		parts = search.ChunkPages(pages, opt)
	} else {
		parts = search.ChunkText(abstractText(rec), opt)
	}
	for i, p := range parts {
		chunks = append(chunks, store.Chunk{ID: store.ChunkID(rec.Key, i), SourceKey: rec.Key, Seq: i, Text: p.Text, Page: p.Page, Start: p.Start, End: p.End, References: p.References})
	}
	if err := o.engine.Store.PutChunks(rec.Key, chunks); err != nil {
		return nil, false, err
	}
	if full {
		doc, _ := json.Marshal(pages)
		if err := o.engine.Store.PutDocument(rec.Key, doc); err != nil {
			return nil, false, err
		}
	}
	chunks, err := o.engine.Store.Chunks(rec.Key) // with hashes filled in
	if err != nil {
		return nil, false, err
	}
	msg := textkit.Plural(len(chunks), "chunk", "chunks") + " from the full text"
	if !full {
		msg = fmt.Sprintf("abstract only (%s)", why)
		if noText {
			a.warn("%q has no extractable text (a scanned or empty document?); using its abstract", textkit.Clip(rec.Title, 60))
		}
	}
	ref := sourceRef(rec)
	ref.FullText = full
	o.emit(Event{Type: DocumentRead, Stage: StageRead, Agent: a.name, Source: &ref, Count: len(chunks), Message: msg})
	if err := o.checkpoint("read/"+rec.Key, readResult{FullText: full, Chunks: len(chunks)}); err != nil {
		return nil, false, err
	}
	return chunks, full, nil
}

// readOwnCopy reads a work from the person's own copy, read and chunked by
// `corpus add` or `library import`: a work also found online is read from
// the person's PDF first. Its chunks are stored under the work's key as
// well when that differs (the text is the same, so no vector is made
// again). ok is false when there is no own copy.
func (o *orchestrator) readOwnCopy(rec search.Record) ([]store.Chunk, bool, bool, error) {
	own := search.LocalStoreKey(rec)
	if own == "" {
		return nil, false, false, nil
	}
	chunks, err := o.engine.Store.Chunks(own)
	if err != nil || len(chunks) == 0 {
		return nil, false, false, err
	}
	full := rec.Path != "" // a library item without a file is its abstract
	if own != rec.Key {
		copied := make([]store.Chunk, len(chunks))
		for i, c := range chunks {
			c.ID, c.SourceKey = store.ChunkID(rec.Key, i), rec.Key
			copied[i] = c
		}
		if err := o.engine.Store.PutChunks(rec.Key, copied); err != nil {
			return nil, false, false, err
		}
		if chunks, err = o.engine.Store.Chunks(rec.Key); err != nil {
			return nil, false, false, err
		}
	}
	where := "the local corpus"
	if rec.Library != "" {
		where = "your library (" + rec.Library + ")"
	}
	msg := textkit.Plural(len(chunks), "chunk", "chunks") + " from " + where
	if !full {
		msg = "abstract from " + where
	}
	ref := sourceRef(rec)
	ref.FullText = full
	o.emit(Event{Type: DocumentRead, Stage: StageRead, Agent: "reader", Source: &ref, Count: len(chunks), Message: msg})
	return chunks, full, true, o.checkpoint("read/"+rec.Key, readResult{FullText: full, Chunks: len(chunks)})
}

// fetchText downloads a source's full text. It returns the pages, whether
// full text was found, and if not, why (for the person, not an error), and
// whether a document was downloaded but held no text.
func (o *orchestrator) fetchText(ctx context.Context, rec search.Record) ([]string, bool, string, bool) {
	f := o.engine.Fetcher
	if f == nil {
		return nil, false, "full-text fetching is off", false
	}
	var urls []string
	if rec.PDFURL != "" {
		urls = append(urls, rec.PDFURL)
	}
	if rec.URL != "" && rec.Source == "web" && rec.URL != rec.PDFURL {
		urls = append(urls, rec.URL)
	}
	if len(urls) == 0 {
		return nil, false, "no open-access link", false
	}
	var lastErr error
	for _, u := range urls {
		doc, err := f.FetchGated(ctx, u, &o.deadHosts)
		if err != nil {
			lastErr = err
			continue
		}
		pages := doc.Pages
		if len(pages) == 0 && doc.Text != "" {
			pages = []string{doc.Text}
		}
		if len(pages) > 0 {
			return pages, true, "", false
		}
	}
	o.fetchFailures.note(shortErr(lastErr))
	return nil, false, shortErr(lastErr), errors.Is(lastErr, search.ErrNoText)
}

func abstractText(r search.Record) string {
	title := report.SentenceEnd(strings.TrimSpace(r.Title), "") // "…Turing test?", never "…test?."
	if r.Abstract == "" {
		return title
	}
	return title + " " + r.Abstract
}

func shortErr(err error) string {
	if err == nil {
		return "no text"
	}
	return textkit.Clip(textkit.CleanLine(err.Error()), 120)
}

func sourceRef(r search.Record) SourceRef {
	return SourceRef{Key: r.Key, Title: r.Title, Source: r.Source, Library: r.Library, Year: r.Year, URL: textkit.FirstNonEmpty(r.URL, r.PDFURL)}
}

// failureTally counts full-text downloads that failed, for one summary
// warning instead of one per source.
type failureTally struct {
	mu    sync.Mutex
	n     int
	first string
}

func (f *failureTally) note(why string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == 0 {
		f.first = why
	}
	f.n++
}

func (f *failureTally) take() (int, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, why := f.n, f.first
	f.n, f.first = 0, ""
	return n, why
}

// readLoop reads sources as they are chosen.
func (f *gather) readLoop(ctx context.Context) error {
	for rec := range f.readCh {
		f.progress(rec, StateReading, "")
		rctx, done := f.startRead(ctx, rec.Key)
		chunks, full, err := f.o.readSource(rctx, rec)
		done()
		if err != nil {
			return err
		}
		f.mu.Lock()
		f.counts.read++
		if full {
			f.counts.full++
		}
		f.mu.Unlock()
		select {
		case f.indexCh <- readySource{rec: rec, chunks: chunks, full: full}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
