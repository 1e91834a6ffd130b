package search

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"

	"github.com/researchtui/researchtui/safefile"
	"github.com/researchtui/researchtui/textkit"
)

// MaxLocalFileBytes caps the size of a file `corpus add` reads.
const MaxLocalFileBytes = 200 << 20

// LocalExtensions are the file types the local corpus indexes.
var LocalExtensions = map[string]string{
	".pdf": "pdf", ".md": "markdown", ".markdown": "markdown", ".txt": "text", ".text": "text",
	".html": "html", ".htm": "html", ".xhtml": "html",
}

// ErrEmptyFile means a local file has no bytes at all.
var ErrEmptyFile = errors.New("the file is empty")

// LocalKey is the store key of a local document: stable for its absolute
// path, so a changed file replaces its old chunks.
func LocalKey(absPath string) string {
	sum := sha256.Sum256([]byte(absPath))
	return "local:" + hex.EncodeToString(sum[:8])
}

// LocalVenue is the venue of a loose local document: it has none, and any
// source's venue for the same work is better.
const LocalVenue = "local document"

// LibraryKey is the store key of an item of the person's library: stable
// for its library and ID, so a changed item replaces its old chunks.
func LibraryKey(library, id string) string {
	sum := sha256.Sum256([]byte(library + "\x00" + id))
	return "lib:" + hex.EncodeToString(sum[:8])
}

// LocalStoreKey is where the person's own copy of a work is stored (its
// chunks, read by `corpus add` or `library import`): "" when the record has
// none. A work found online and in the person's library is one record with
// its own key; its text comes from here first.
func LocalStoreKey(r Record) string {
	switch {
	case r.Library != "" && r.LibraryID != "":
		return LibraryKey(r.Library, r.LibraryID)
	case r.Path != "":
		return LocalKey(r.Path)
	}
	return ""
}

// Why a local file is refused before any of it is read. A folder of
// documents may be shared, so its files are not trusted to be what their
// names say: a "paper.txt" may be a link to /proc/self/environ, a FIFO
// (whose open blocks until a writer comes) or a link to /dev/zero (whose
// read never ends). Each error's text completes "the file is …".
var (
	// ErrPathEscapes is a path that climbs out of its folder with "..".
	ErrPathEscapes = errors.New(`named by a path that climbs out of its folder ("..")`)
	// ErrOutsideFolder is a symlink (the file's, or a folder's on its
	// path) that leads out of the folder it is read from, or by an
	// absolute target.
	ErrOutsideFolder = errors.New("a symlink to outside its folder")
	// ErrSymlinkLoop is a chain of symlinks that does not end.
	ErrSymlinkLoop = errors.New("a symlink loop")
	// ErrNotRegularFile is a FIFO, a device, a socket or a folder.
	ErrNotRegularFile = errors.New("not a regular file")
	// ErrFileTooLarge is a file over MaxLocalFileBytes.
	ErrFileTooLarge = errors.New("too large")
)

// OpenLocalFile opens rel, a path inside dir, to be read, without trusting
// what dir holds: a path that climbs out of dir is refused
// (ErrPathEscapes); symlinks are followed only while they stay inside dir
// (os.Root resolves every component itself, so a link swapped in between
// the check and the open cannot lead out; ErrOutsideFolder,
// ErrSymlinkLoop); only a regular file is opened (its mode is checked
// before the open, the open cannot block on a FIFO (O_NONBLOCK), and the
// opened file's own mode is checked again: ErrNotRegularFile); and its size
// is checked before a byte is read (ErrFileTooLarge). A file that is not
// there gives an error that is fs.ErrNotExist. The caller closes the file.
func OpenLocalFile(dir, rel string) (*os.File, fs.FileInfo, error) {
	if rel == "" || filepath.IsAbs(rel) || climbs(rel) {
		return nil, nil, ErrPathEscapes
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	fi, err := root.Stat(rel) // follows links only inside dir
	if err != nil {
		return nil, nil, refused(err)
	}
	if err := usableFile(fi); err != nil {
		return nil, nil, err
	}
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, refused(err)
	}
	info, err := f.Stat()
	if err == nil {
		err = usableFile(info) // what was opened, whatever was checked before
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, info, nil
}

// climbs reports a ".." element in a path.
func climbs(p string) bool {
	for _, el := range strings.FieldsFunc(filepath.ToSlash(p), func(r rune) bool { return r == '/' }) {
		if el == ".." {
			return true
		}
	}
	return false
}

// usableFile refuses what is not a regular file of at most
// MaxLocalFileBytes.
func usableFile(fi fs.FileInfo) error {
	m := fi.Mode()
	if !m.IsRegular() {
		return fmt.Errorf("%w: %s", ErrNotRegularFile, safefile.Kind(m))
	}
	if fi.Size() > MaxLocalFileBytes {
		return &TooLargeError{Size: fi.Size()}
	}
	return nil
}

// TooLargeError is a local file over MaxLocalFileBytes; it is
// ErrFileTooLarge. Size is what it was found to have (at least).
type TooLargeError struct{ Size int64 }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s, over the %s limit", SizeText(e.Size), SizeText(MaxLocalFileBytes))
}

func (e *TooLargeError) Is(target error) bool { return target == ErrFileTooLarge }

// SizeText is a size for people: "830 KB", "12 MB", "2.0 GB".
func SizeText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%d MB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// refused names why os.Root would not open a path: a link out of the
// folder or a loop of links. Anything else (a missing file) stays as it is.
func refused(err error) error {
	var pe *fs.PathError
	switch {
	case errors.Is(err, syscall.ELOOP):
		return ErrSymlinkLoop
	case errors.As(err, &pe) && pe.Err != nil && pe.Err.Error() == "path escapes from parent": // os.Root's errPathEscapes
		return ErrOutsideFolder
	}
	return err
}

// ReadLocalData reads a file opened by OpenLocalFile whole, with its
// SHA-256 (hex): at most MaxLocalFileBytes (a file that grew past it since
// it was opened is refused, ErrFileTooLarge), a few megabytes at a time,
// stopping when ctx ends. size is the file's size when opened.
func ReadLocalData(ctx context.Context, f *os.File, size int64) ([]byte, string, error) {
	h := sha256.New()
	buf := bytes.NewBuffer(make([]byte, 0, min(max(size, 0), MaxLocalFileBytes)+bytes.MinRead))
	r := io.TeeReader(io.LimitReader(ctxReader{ctx, f}, MaxLocalFileBytes+1), h)
	if _, err := buf.ReadFrom(r); err != nil {
		return nil, "", err
	}
	if buf.Len() > MaxLocalFileBytes {
		return nil, "", &TooLargeError{Size: int64(buf.Len())}
	}
	return buf.Bytes(), hex.EncodeToString(h.Sum(nil)), nil
}

// ctxReader reads at most 4 MB at a time and not once ctx has ended.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p[:min(len(p), 4<<20)])
}

// LocalKind is the kind of document a file's extension names (pdf,
// markdown, text, html), or ErrUnsupportedType.
func LocalKind(path string) (string, error) {
	kind, ok := LocalExtensions[strings.ToLower(filepath.Ext(path))]
	if !ok {
		return "", fmt.Errorf("%w: %q (pdf, md, txt and html are indexed)", ErrUnsupportedType, filepath.Ext(path))
	}
	return kind, nil
}

// ReadLocalFile reads a pdf, md, txt or html file into a Document (Pages
// for PDFs, one page otherwise) and a Record describing it. The file is
// opened by OpenLocalFile in its own folder: a symlink to outside that
// folder, a FIFO, a device or a file over MaxLocalFileBytes is refused
// before any of it is read. Errors say why a file cannot be indexed, for
// one clear line per skipped file: ErrUnsupportedType (unknown extension or
// binary content), ErrEmptyFile, ErrNoText (a scanned PDF or a page without
// text), and those of OpenLocalFile.
func ReadLocalFile(path string) (Document, Record, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Document{}, Record{}, err
	}
	if _, err := LocalKind(abs); err != nil {
		return Document{}, Record{}, err
	}
	f, info, err := OpenLocalFile(filepath.Dir(abs), filepath.Base(abs))
	if err != nil {
		return Document{}, Record{}, err
	}
	defer f.Close()
	data, _, err := ReadLocalData(context.Background(), f, info.Size())
	if err != nil {
		return Document{}, Record{}, err
	}
	return ParseLocalFile(abs, data, info.ModTime())
}

// ParseLocalFile makes the Document and Record of the local file at abs
// from its bytes (read by ReadLocalData); modTime is its modification time.
// Its errors are ReadLocalFile's.
func ParseLocalFile(abs string, data []byte, modTime time.Time) (Document, Record, error) {
	kind, err := LocalKind(abs)
	if err != nil {
		return Document{}, Record{}, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return Document{}, Record{}, ErrEmptyFile
	}
	var doc Document
	switch kind {
	case "pdf":
		if !bytes.HasPrefix(bytes.TrimLeft(data[:min(len(data), 1024)], "\x00\t\r\n "), []byte("%PDF-")) {
			return Document{}, Record{}, fmt.Errorf("%w: named .pdf but not a PDF", ErrUnsupportedType)
		}
		doc, err = ExtractDocument("file://"+abs, data)
		if err == nil && strings.TrimSpace(doc.Text) == "" {
			err = ErrNoText
		}
	case "html":
		doc, err = ExtractDocument("file://"+abs, data)
		if err == nil && doc.ContentType != "text/html" && doc.ContentType != "text/plain" {
			err = fmt.Errorf("%w: %s", ErrUnsupportedType, doc.ContentType)
		}
	default:
		if looksBinary(data) {
			if !latin1Text(data) {
				return Document{}, Record{}, fmt.Errorf("%w: binary content in a .%s file", ErrUnsupportedType, strings.TrimPrefix(filepath.Ext(abs), "."))
			}
			// legacy 8-bit text (Windows-1252 / Latin-1), not binary
			if dec, err := charmap.Windows1252.NewDecoder().Bytes(data); err == nil {
				data = dec
			}
		}
		doc = Document{URL: "file://" + abs, ContentType: "text/plain", Text: strings.TrimSpace(textkit.CleanText(string(data)))}
		if kind == "markdown" {
			doc.Title = markdownTitle(doc.Text)
		}
		if doc.Text == "" {
			err = ErrNoText
		}
	}
	if err != nil {
		if errors.Is(err, ErrNoText) && kind == "pdf" {
			return doc, Record{}, fmt.Errorf("%w (a scanned or image-only PDF? only its file name would be searchable)", ErrNoText)
		}
		return doc, Record{}, err
	}
	if len(doc.Pages) == 0 {
		doc.Pages = []string{doc.Text}
	}
	r := Record{
		Key:     LocalKey(abs),
		Source:  "local",
		FoundBy: []string{"local"},
		Path:    abs,
		Title:   textkit.CleanLine(doc.Title),
		Venue:   LocalVenue,
		URL:     "file://" + abs,
		Year:    modTime.Year(),
	}
	if r.Title == "" && kind == "pdf" {
		r.Title = pdfTitleGuess(doc.Pages[0])
	}
	if r.Title == "" {
		r.Title = strings.TrimSuffix(filepath.Base(abs), filepath.Ext(abs))
	}
	r.Abstract = truncateText(textkit.CleanLine(doc.Text), 1200)
	return doc, r, nil
}

// looksBinary reports NUL bytes or invalid UTF-8 in the first 8 KB.
func looksBinary(b []byte) bool {
	head := b[:min(len(b), 8192)]
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	if len(b) > len(head) { // the sample may end inside a rune
		for k := 0; k < 3 && len(head) > 0 && !utf8.RuneStart(head[len(head)-1]); k++ {
			head = head[:len(head)-1]
		}
		if len(head) > 0 && head[len(head)-1] >= 0xc0 {
			head = head[:len(head)-1]
		}
	}
	return !utf8.Valid(head)
}

// latin1Text reports 8-bit text: no NULs, and almost no C0 controls other
// than whitespace.
func latin1Text(b []byte) bool {
	if bytes.IndexByte(b, 0) >= 0 {
		return false
	}
	ctl := 0
	for _, c := range b[:min(len(b), 8192)] {
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' {
			ctl++
		}
	}
	return ctl*100 < min(len(b), 8192)
}

func markdownTitle(text string) string {
	for _, line := range strings.SplitN(text, "\n", 40) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "# ") {
			return textkit.CleanLine(strings.TrimPrefix(line, "# "))
		}
	}
	return ""
}

// pdfTitleGuess takes the first line of the first page that reads like a
// title (a few words, not a page header full of digits).
func pdfTitleGuess(page string) string {
	for _, line := range strings.SplitN(page, "\n", 8) {
		line = textkit.CleanLine(line)
		n := len(strings.Fields(line))
		if n >= 3 && n <= 25 && strings.IndexFunc(line, unicode.IsLetter) >= 0 && !strings.HasPrefix(strings.ToLower(line), "arxiv:") {
			return line
		}
	}
	return ""
}

func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := strings.LastIndexByte(s[:n], ' ')
	if cut < n/2 {
		cut = n
	}
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// LocalDoc is one indexed local document as the local source sees it.
type LocalDoc struct {
	Record Record
	Text   string // its text (the chunks joined), for keyword matching
}

// LocalDocsFunc lists the indexed local documents (corpus reads them
// from the store).
type LocalDocsFunc func() ([]LocalDoc, error)

type localSource struct {
	docs LocalDocsFunc

	mu     sync.Mutex
	cached []localEntry
	at     time.Time
}

type localEntry struct {
	rec   Record
	terms map[string]int
	title map[string]bool
}

// NewLocal returns the "local" corpus source: keyword search (no model) over
// the documents `corpus add` indexed. The corpus is re-read at most once a
// minute.
func NewLocal(docs LocalDocsFunc) Source {
	return &localSource{docs: docs}
}

func (l *localSource) Name() string { return "local" }

// Empty says the corpus holds no document. A corpus that cannot be read
// is not empty: searching it says why.
func (l *localSource) Empty() bool {
	es, err := l.entries()
	return err == nil && len(es) == 0
}

func (l *localSource) entries() ([]localEntry, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cached != nil && time.Since(l.at) < time.Minute {
		return l.cached, nil
	}
	docs, err := l.docs()
	if err != nil {
		return nil, err
	}
	out := make([]localEntry, 0, len(docs))
	for _, d := range docs {
		e := localEntry{rec: d.Record, terms: map[string]int{}, title: map[string]bool{}}
		for _, w := range termsOf(d.Text) {
			e.terms[w]++
		}
		for _, w := range termsOf(d.Record.Title + " " + filepath.Base(d.Record.Path)) {
			e.title[w] = true
			e.terms[w]++
		}
		out = append(out, e)
	}
	l.cached, l.at = out, time.Now()
	return out, nil
}

// termsOf lower-cases and splits text into words, dropping stop words and
// one-letter words; a trailing plural "s" is folded.
func termsOf(s string) []string {
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	out := words[:0]
	for _, w := range words {
		if len(w) < 2 || stopWords[w] {
			continue
		}
		if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
			w = w[:len(w)-1]
		}
		out = append(out, w)
	}
	return out
}

// CollectionSearcher is a source whose documents are filed in collections
// (the local corpus): a run may search some of them only.
type CollectionSearcher interface {
	// SearchCollections is Search over the documents in any of
	// collections (all of them when it is empty).
	SearchCollections(ctx context.Context, query string, limit int, collections []string) ([]Record, error)
}

// InCollections says whether r is filed in any of names: matched without
// regard to case, a collection holding its sub-collections
// ("Thesis" holds "Thesis/Chapter 2").
func InCollections(r Record, names []string) bool {
	for _, want := range names {
		for _, c := range r.Collections {
			if strings.EqualFold(c, want) || len(c) > len(want) && c[len(want)] == '/' && strings.EqualFold(c[:len(want)], want) {
				return true
			}
		}
	}
	return false
}

func (l *localSource) Search(ctx context.Context, query string, limit int) ([]Record, error) {
	return l.SearchCollections(ctx, query, limit, nil)
}

func (l *localSource) SearchCollections(ctx context.Context, query string, limit int, collections []string) ([]Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = 10
	}
	q := map[string]bool{}
	for _, w := range termsOf(textkit.CleanLine(query)) {
		q[w] = true
	}
	if len(q) == 0 {
		return nil, nil
	}
	entries, err := l.entries()
	if err != nil {
		return nil, fmt.Errorf("local: %w", err)
	}
	if len(collections) > 0 {
		var in []localEntry
		for _, e := range entries {
			if InCollections(e.rec, collections) {
				in = append(in, e)
			}
		}
		entries = in
	}
	df := map[string]int{}
	for _, e := range entries {
		for w := range q {
			if e.terms[w] > 0 {
				df[w]++
			}
		}
	}
	need := (len(q) + 1) / 2 // at least half the terms must appear
	type scored struct {
		r     Record
		score float64
	}
	var hits []scored
	for _, e := range entries {
		matched, score := 0, 0.0
		for w := range q {
			tf := e.terms[w]
			if tf == 0 {
				continue
			}
			matched++
			idf := math.Log(1 + float64(len(entries))/float64(df[w]))
			score += (1 + math.Log(float64(tf))) * idf
			if e.title[w] {
				score += 2 * idf
			}
		}
		if matched >= need {
			hits = append(hits, scored{e.rec, score * float64(matched) / float64(len(q))})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].score > hits[j].score })
	out := make([]Record, 0, min(limit, len(hits)))
	for _, h := range hits[:min(limit, len(hits))] {
		out = append(out, h.r)
	}
	return out, nil
}
