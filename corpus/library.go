package corpus

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/search/bib"
	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/textkit"
)

// The person's reference library (Zotero, a .bib, CSL-JSON or RIS file) as
// part of the corpus: ImportLibrary syncs the store with the library as it
// is now. New items are read (their attachment, else their abstract), items
// whose metadata changed get a new record and keep their chunks, items
// whose file changed are read again (only new text is embedded: vectors
// are cached by text), and items gone from the library are dropped.

// Library is a reference library as it is now: everything it holds, so the
// import can tell what is new, changed and gone.
type Library struct {
	// Name names the library and is the collection all its items are in:
	// "zotero", or a file's base name ("refs" for refs.bib).
	Name string
	// Kind is how it was read: zotero (the database), zotero-api,
	// bibtex, csljson, ris.
	Kind string
	// Origin is where: the Zotero data folder, the API's address, the
	// file.
	Origin string
	// Version is the library's version (Zotero's), 0 when it has none.
	Version int
	// Folder is the library's own folder, which others may write to (a
	// shared folder): an attachment in it is read only if no symlink
	// leads it out of the folder. Empty: the folder of a library file
	// (Origin, for bibtex, csljson and ris); a Zotero library has none of
	// its own, each attachment staying in its folder (storage/<key>/).
	Folder string
	// AttachmentDirs are the other folders its attachments may be read
	// from: where the reference manager stores files (Zotero's storage,
	// its base folder of linked files) and those the person names
	// (--attachments-from). An attachment elsewhere is not read.
	AttachmentDirs []string
	// Collections are every collection of the library, empty ones too.
	Collections []string
	// Unread are the IDs of entries the library file holds but that could
	// not be read this time (a brace typed wrong): their items are kept
	// as they were, not removed. UnreadUnnamed says an entry could not be
	// read whose ID is not known either: then no item is removed.
	Unread        []string
	UnreadUnnamed bool
	Items         []bib.Item
}

// LibraryEntry is an imported library in the manifest.
type LibraryEntry struct {
	Name        string    `json:"name"`
	Kind        string    `json:"kind"`
	Origin      string    `json:"origin"`
	Version     int       `json:"version,omitempty"`
	Collections []string  `json:"collections,omitempty"`
	Imported    time.Time `json:"imported_at"`
}

// ItemEntry is one imported library item in the manifest.
type ItemEntry struct {
	Library string `json:"library"`
	ID      string `json:"id"`
	Key     string `json:"key"` // its store key (search.LibraryKey)
	Title   string `json:"title"`
	// Meta is a hash of the item's metadata: a change gives it a new
	// record without reading its file again.
	Meta string `json:"meta"`
	// File is the attachment read (empty: the item's abstract was), with
	// what tells a changed file.
	File        string    `json:"file,omitempty"`
	Size        int64     `json:"size,omitempty"`
	ModTime     time.Time `json:"mtime,omitempty"`
	SHA256      string    `json:"sha256,omitempty"`
	Type        string    `json:"type,omitempty"`
	Pages       int       `json:"pages,omitempty"`
	Chunks      int       `json:"chunks"`
	Collections []string  `json:"collections,omitempty"`
	Indexed     time.Time `json:"indexed_at"`
	// EmbeddedWith is the embedding model all its chunks have vectors
	// of.
	EmbeddedWith string `json:"embedded_with,omitempty"`
}

func itemSlot(library, id string) string { return library + "\x00" + id }

// LibraryEntries are the imported libraries by name.
func (m *Manifest) LibraryEntries() []*LibraryEntry {
	out := make([]*LibraryEntry, 0, len(m.Libraries))
	for _, l := range m.Libraries {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ItemEntries are the imported items, by library and title.
func (m *Manifest) ItemEntries() []*ItemEntry {
	out := make([]*ItemEntry, 0, len(m.Items))
	for _, e := range m.Items {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Library != out[j].Library {
			return out[i].Library < out[j].Library
		}
		return out[i].Title < out[j].Title
	})
	return out
}

// ImportLibrary syncs the corpus with lib: what is new is added, what
// changed updated, what the library no longer holds removed. opt.File is
// told each item's outcome (named by its title). What was read is kept
// when ctx ends (ErrInterrupted): a re-run goes on from there.
func ImportLibrary(ctx context.Context, opt Options, lib Library) (Result, error) {
	if lib.Name == "" {
		return Result{}, errors.New("a library needs a name")
	}
	m, err := LoadManifest(opt.Manifest)
	if err != nil {
		return Result{}, err
	}
	now := time.Now()
	c := &corpusIngest{opt: opt, st: opt.Store, m: m, stats: &ingestStats{start: now}, queued: map[string]bool{}, lastCommit: now, lastSave: now}
	seen := map[string]bool{}
	var jobs []*corpusJob
	folder, others := lib.folder(), lib.attachmentDirs()
	for i := range lib.Items {
		it := &lib.Items[i]
		if it.ID == "" {
			c.file("skipped", it.Title, "it has no ID in the library")
			c.n.Skipped++
			continue
		}
		slot := itemSlot(lib.Name, it.ID)
		if seen[slot] {
			c.file("skipped", it.Title, "a second item with the ID "+it.ID)
			c.n.Skipped++
			continue
		}
		seen[slot] = true
		j := &corpusJob{shown: itemShown(*it), res: make(chan *corpusResult, 1), item: &itemJob{lib: &lib, it: it}}
		if e := m.Items[slot]; e != nil {
			old := *e
			j.item.old = &old
		}
		j.item.file, j.item.skippedFiles = attachment(it.Files)
		if j.item.file != "" {
			j.item.dir, j.item.rel, j.item.inLibrary, j.item.refused = attachmentPlace(folder, others, j.item.file)
			if j.item.refused == nil { // a path refused by itself is not even looked at
				if fi, err := os.Lstat(j.item.file); err == nil && fi.Mode().IsRegular() {
					j.size = min(fi.Size(), search.MaxLocalFileBytes) // for the progress line only
				}
			}
		}
		c.stats.bytes.Add(j.size)
		jobs = append(jobs, j)
	}
	return c.run(ctx, jobs, func(j *corpusJob) corpusResult { return readLibraryItem(ctx, c.st, j, c.stats) }, func() error {
		// Only a complete pass can tell what the library no longer holds.
		unread := map[string]bool{}
		for _, id := range lib.Unread {
			unread[itemSlot(lib.Name, id)] = true
		}
		for slot, e := range m.Items {
			if e.Library == lib.Name && !seen[slot] && (unread[slot] || lib.UnreadUnnamed) {
				c.file("kept", e.Title, "its entry could not be read this time: fix it and import again")
				c.n.Unchanged++
				continue
			}
			if e.Library == lib.Name && !seen[slot] {
				if err := c.st.PutChunks(e.Key, nil); err != nil {
					return err
				}
				delete(m.Items, slot)
				c.file("removed", e.Title, "no longer in the library")
				c.n.Removed++
			}
		}
		if m.Libraries == nil {
			m.Libraries = map[string]*LibraryEntry{}
		}
		m.Libraries[lib.Name] = &LibraryEntry{Name: lib.Name, Kind: lib.Kind, Origin: lib.Origin, Version: lib.Version,
			Collections: lib.Collections, Imported: time.Now().UTC()}
		return nil
	})
}

// itemJob is one library item to import.
type itemJob struct {
	lib          *Library
	it           *bib.Item
	old          *ItemEntry
	file         string   // the attachment to read ("" none)
	skippedFiles []string // attachments of a kind that is not read
	// The attachment is read as rel inside dir (attachmentPlace), unless
	// refused by its path alone.
	dir, rel  string
	inLibrary bool // dir is the library's folder
	refused   error
}

func itemShown(it bib.Item) string {
	if it.Title != "" {
		return it.Title
	}
	return it.ID
}

// recordVersion changes when itemRecord makes records differently, so an
// import after an upgrade gives every item its new record.
const recordVersion = 4 // 4: an edited book's editors, suffixes in filed names

// metaHash is a hash of what the record of an item is made of.
func metaHash(it bib.Item, lib string) string {
	it.Files = nil
	raw, _ := json.Marshal(struct {
		V    int
		Lib  string
		Item bib.Item
	}{recordVersion, lib, it})
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:12])
}

// ItemCollections are the collections an item of lib is in: the library
// itself, its collections, and its tags as "#tag".
func ItemCollections(lib string, it bib.Item) []string {
	out := []string{lib}
	seen := map[string]bool{strings.ToLower(lib): true}
	add := func(c string) {
		if c = strings.TrimSpace(c); c != "" && !seen[strings.ToLower(c)] {
			seen[strings.ToLower(c)] = true
			out = append(out, c)
		}
	}
	for _, c := range it.Collections {
		add(c)
	}
	for _, t := range it.Tags {
		add("#" + strings.TrimPrefix(t, "#"))
	}
	return out
}

// itemRecord is the search record of a library item: every field from the
// library's metadata, the text from the person's file.
func itemRecord(lib string, it bib.Item, file string) search.Record {
	r := search.Record{
		Key:         search.LibraryKey(lib, it.ID),
		Source:      "local",
		FoundBy:     []string{"local"},
		Library:     lib,
		LibraryID:   it.ID,
		Collections: ItemCollections(lib, it),
		Title:       textkit.CleanLine(it.Title),
		Year:        it.Year,
		Venue:       textkit.CleanLine(it.Venue),
		Publication: search.Publication{
			ItemType:  it.Type,
			Volume:    textkit.CleanLine(it.Volume),
			Issue:     textkit.CleanLine(it.Issue),
			Pages:     textkit.CleanLine(it.Pages),
			Publisher: textkit.CleanLine(it.Publisher),
		},
		DOI:      search.NormalizeDOI(it.DOI),
		URL:      it.URL,
		Abstract: textkit.CleanLine(it.Abstract),
		Path:     file,
	}
	names := it.Authors
	if len(names) == 0 { // an edited book is cited by its editors, as editors
		names = it.Editors
	}
	for _, e := range it.Editors { // a chapter's book's editors, or the book's own
		if f := filed(e); f != "" {
			r.Editors = append(r.Editors, f)
		}
	}
	for _, a := range names {
		if s := textkit.CleanLine(a.String()); s != "" {
			r.Authors = append(r.Authors, s)
			r.AuthorsFiled = append(r.AuthorsFiled, filed(a))
		}
	}
	if r.Title == "" {
		r.Title = it.ID
	}
	return r
}

// filed is a name as a library files it: "Family, Given", or an
// organisation's name whole.
func filed(n bib.Name) string {
	if n.Literal != "" {
		return textkit.CleanLine(n.String())
	}
	f := search.FiledName(n.Family, n.Given, n.String())
	if n.Suffix != "" && strings.Contains(f, ", ") {
		f += ", " + textkit.CleanLine(n.Suffix) // "Doe, Jeffrey, Jr.": APA writes "Doe, J., Jr."
	}
	return f
}

// readLibraryItem does the per-item work that needs no shared state:
// decide what changed, and read and chunk the file (or the abstract).
func readLibraryItem(ctx context.Context, st Store, j *corpusJob, stats *ingestStats) corpusResult {
	t0 := time.Now()
	defer func() {
		stats.readNS.Add(int64(time.Since(t0)))
		stats.bytesDone.Add(j.size)
	}()
	ij := j.item
	meta := metaHash(*ij.it, ij.lib.Name)
	old := ij.old
	rec := itemRecord(ij.lib.Name, *ij.it, ij.file)
	res := corpusResult{rec: rec, meta: meta}
	res.file = ij.file
	var out fileOutcome
	if ij.file != "" {
		err := ij.refused
		if err == nil {
			out, err = readFileSafely(ctx, ij.dir, ij.rel, ij.file, notHardLinked,
				func(info fs.FileInfo) bool {
					return old != nil && old.File == ij.file && old.Size == info.Size() && old.ModTime.Equal(info.ModTime())
				},
				func(sum string) bool { return old != nil && old.SHA256 == sum })
		}
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return corpusResult{state: fileSkipped, reason: err.Error()}
		default:
			// Not on this disk (a Zotero file not synced here), not to
			// be read, not readable, or read without text (a scanned
			// PDF): the abstract stands in, and the report says why.
			// The item is kept with its metadata, as an item without a
			// file is. The import goes on.
			switch {
			case errors.Is(err, search.ErrNoText):
				res.reason = "no text could be extracted from its file (a scan without OCR?)"
			case out.stage >= stageParse:
				res.reason = "its file could not be read as a document (" + plainErr(err) + ")"
			case errors.Is(err, fs.ErrNotExist):
				res.reason = "its file is missing (" + plainErr(err) + ")"
			case refusedFile(err) || errors.Is(err, errRelativePath) || errors.Is(err, errOutsideLibrary) || errors.Is(err, errHardLink):
				res.reason = refusedReason(ij, err)
			default:
				res.reason = "its file could not be read (" + plainErr(err) + ")"
			}
			if strings.TrimSpace(ij.it.Abstract) == "" {
				res.reason += "; read from its title" // it has no abstract either
			} else {
				res.reason += "; read from its abstract"
			}
			res.file = ""
			rec = itemRecord(ij.lib.Name, *ij.it, "")
			res.rec = rec
		}
	}
	if res.file == "" {
		title := strings.TrimSpace(res.rec.Title)
		if !strings.HasSuffix(title, ".") && !strings.HasSuffix(title, "?") && !strings.HasSuffix(title, "!") {
			title += "." // "…Turing test?", never "…test?."
		}
		text := strings.TrimSpace(title + " " + res.rec.Abstract)
		sum := sha256.Sum256([]byte(text))
		res.sum = "text:" + hex.EncodeToString(sum[:12])
		if old != nil && old.File == "" && old.SHA256 == res.sum {
			res.state = itemState(old.Meta == meta)
			return res
		}
		parts := search.ChunkText(text, search.ChunkOptions{TargetTokens: 500, OverlapTokens: 50})
		res.chunks = toChunks(st, rec.Key, parts, false)
		res.doc = search.Document{ContentType: "text/plain", Pages: []string{text}}
		res.state = fileRead
		return res
	}
	res.info = out.info
	switch out.stage {
	case stageOpen: // the same size and time as when it was read
		res.sum = old.SHA256
		res.state = itemState(old.Meta == meta)
		return res
	case stageRead: // the same bytes
		res.sum = out.sum
		res.state = itemState(old.Meta == meta)
		return res
	}
	res.sum = out.sum
	doc := out.doc
	parts := search.ChunkPages(doc.Pages, search.ChunkOptions{TargetTokens: 500, OverlapTokens: 50})
	res.chunks = toChunks(st, rec.Key, parts, doc.ContentType == "application/pdf")
	res.doc = doc
	res.state = fileRead
	return res
}

// itemState is an item whose text is unchanged: unchanged, or with new
// metadata.
func itemState(sameMeta bool) int {
	if sameMeta {
		return fileUnchanged
	}
	return itemMetaChanged
}

func toChunks(st Store, key string, parts []search.Chunk, paged bool) []store.Chunk {
	chunks := make([]store.Chunk, 0, len(parts))
	for i, p := range parts {
		c := store.Chunk{ID: store.ChunkID(key, i), SourceKey: key, Seq: i, Text: p.Text, Start: p.Start, End: p.End, Hash: store.HashText(p.Text), References: p.References}
		if paged {
			c.Page = p.Page
		}
		chunks = append(chunks, c)
	}
	return chunks
}

// applyItem records one library item's outcome: read items and items with
// new metadata wait for the next commit; the rest are settled here.
func (c *corpusIngest) applyItem(j *corpusJob, r corpusResult) error {
	ij := j.item
	slot := itemSlot(ij.lib.Name, ij.it.ID)
	switch r.state {
	case fileSkipped:
		c.file("skipped", j.shown, r.reason)
		c.n.Skipped++
		if r.dropOld && ij.old != nil {
			if err := c.st.PutChunks(ij.old.Key, nil); err != nil {
				return err
			}
			delete(c.m.Items, slot)
			c.file("removed", j.shown, "its old version")
			c.n.Removed++
		}
		return nil
	case fileUnchanged:
		c.file("unchanged", j.shown, r.reason) // an attachment still not read says so each time
		c.n.Unchanged++
		e := c.m.Items[slot]
		if c.emb != nil && e.EmbeddedWith != c.emb.model {
			chunks, err := c.st.Chunks(e.Key)
			if err != nil {
				return err
			}
			c.toEmbed("item:"+slot, chunks)
		}
		return nil
	}
	raw, err := json.Marshal(r.rec)
	if err != nil {
		return err
	}
	e := &ItemEntry{Library: ij.lib.Name, ID: ij.it.ID, Key: r.rec.Key, Title: r.rec.Title, Meta: r.meta, File: r.file,
		SHA256: r.sum, Collections: r.rec.Collections, Indexed: time.Now().UTC()}
	if r.info != nil {
		e.Size, e.ModTime = r.info.Size(), r.info.ModTime()
	}
	item := store.SourceBatch{Key: r.rec.Key, Record: raw}
	p := pendingFile{job: j, item: item, itemEntry: e, verb: "added"}
	if ij.old != nil {
		p.verb = "updated"
	}
	if r.state == itemMetaChanged {
		// The same text under new metadata: the chunks stay, and so do
		// their vectors.
		chunks, err := c.st.Chunks(ij.old.Key)
		if err != nil {
			return err
		}
		p.item.Chunks, p.keepVectors = chunks, true
		e.Type, e.Pages, e.Chunks, e.EmbeddedWith = ij.old.Type, ij.old.Pages, ij.old.Chunks, ij.old.EmbeddedWith
		p.detail = "new metadata"
	} else {
		e.Type, e.Chunks = r.doc.ContentType, len(r.chunks)
		p.item.Chunks = r.chunks
		p.detail = textkit.Plural(len(r.chunks), "chunk", "chunks")
		if r.file == "" {
			what := "its abstract, "
			if strings.TrimSpace(ij.it.Abstract) == "" {
				what = "its title only (no file, no abstract), "
				if ij.file != "" {
					what = "its title only (no abstract), "
				}
			}
			p.detail = what + p.detail
		} else if r.doc.ContentType == "application/pdf" {
			e.Pages = len(r.doc.Pages)
			p.detail = fmt.Sprintf("%d pages, %d chunks", e.Pages, len(r.chunks))
			if pages, err := json.Marshal(r.doc.Pages); err == nil {
				p.item.Document = pages
			}
		} else if pages, err := json.Marshal(r.doc.Pages); err == nil {
			p.item.Document = pages
		}
	}
	if r.reason != "" {
		p.detail += "; " + r.reason
	}
	if ij.old != nil && !sameTitle(ij.old.Title, r.rec.Title) {
		// the ID now names another work (a key reused, a duplicate key
		// whose first work was deleted): say which one it named
		p.detail += "; its ID " + ij.it.ID + " was “" + textkit.Clip(ij.old.Title, 60) + "”"
	}
	if len(ij.skippedFiles) > 0 {
		p.detail += "; not read: " + describeSkipped(ij.skippedFiles)
	}
	c.pending = append(c.pending, p)
	c.pendingN += len(p.item.Chunks)
	return c.maybeCommit()
}
