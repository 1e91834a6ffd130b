package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/store"
)

// The local corpus: `corpus add` reads documents, stores each one as a
// source (a search.Record with Source "local", key search.LocalKey(path))
// with its chunks, and keeps a manifest in the data dir (corpus.json) of
// what is indexed: path, size, modification time and content hash, so that
// unchanged files are skipped on re-add, changed ones re-indexed and removed
// ones dropped. Embeddings are computed by the next run's index stage.

// corpusEntry is one indexed document in the manifest.
type corpusEntry struct {
	Path    string    `json:"path"`
	Key     string    `json:"key"`
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mtime"`
	SHA256  string    `json:"sha256"`
	Title   string    `json:"title"`
	Type    string    `json:"type"`
	Pages   int       `json:"pages,omitempty"`
	Chunks  int       `json:"chunks"`
	Indexed time.Time `json:"indexed_at"`
}

type corpusManifest struct {
	Version int                     `json:"version"`
	Files   map[string]*corpusEntry `json:"files"` // by absolute path
}

func (c *Config) corpusPath() string { return filepath.Join(c.dataDir, "corpus.json") }

func loadManifest(cfg *Config) (*corpusManifest, error) {
	m := &corpusManifest{Version: 1, Files: map[string]*corpusEntry{}}
	raw, err := os.ReadFile(cfg.corpusPath())
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, m); err != nil {
		return nil, fmt.Errorf("the corpus manifest %s is damaged (%v); move it aside and run `researchtui corpus add` again", cfg.corpusPath(), err)
	}
	if m.Files == nil {
		m.Files = map[string]*corpusEntry{}
	}
	return m, nil
}

func saveManifest(cfg *Config, m *corpusManifest) error {
	raw, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.dataDir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(cfg.dataDir, ".corpus-*.json")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(raw); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), cfg.corpusPath())
}

// corpusDocs is the local source's view of the corpus: the manifest's
// documents with their stored records and chunk text.
func corpusDocs(cfg *Config, st *store.Store) search.LocalDocsFunc {
	return func() ([]search.LocalDoc, error) {
		m, err := loadManifest(cfg)
		if err != nil {
			return nil, err
		}
		paths := make([]string, 0, len(m.Files))
		for p := range m.Files {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		var out []search.LocalDoc
		for _, p := range paths {
			e := m.Files[p]
			raw, ok, err := st.Source(e.Key)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			var rec search.Record
			if json.Unmarshal(raw, &rec) != nil {
				continue
			}
			chunks, err := st.Chunks(e.Key)
			if err != nil {
				return nil, err
			}
			var b strings.Builder
			for _, c := range chunks {
				b.WriteString(c.Text)
				b.WriteByte('\n')
			}
			out = append(out, search.LocalDoc{Record: rec, Text: b.String()})
		}
		return out, nil
	}
}

func corpusCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "corpus",
		Short: "Index local documents (pdf, md, txt, html) as a source",
		Long: `The local corpus is your own documents as one more source ("local" in --sources).
corpus add reads pdf, md, txt and html files (folders are walked); re-adding skips
unchanged files, re-indexes changed ones and drops files that no longer exist.`,
	}
	add := &cobra.Command{
		Use:   "add PATH...",
		Short: "Index documents and folders",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig()
			if err != nil {
				return err
			}
			st, err := openStore(cfg)
			if err != nil {
				return err
			}
			defer st.Close()
			return corpusAdd(cmd.Context(), cfg, st, args, cmd.OutOrStdout())
		},
	}
	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List indexed documents",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig()
			if err != nil {
				return err
			}
			return corpusList(cfg, cmd.OutOrStdout(), asJSON)
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "one JSON object per document and line")
	c.AddCommand(add, list)
	return c
}

type corpusCounts struct{ added, updated, unchanged, skipped, removed int }

type ctxDone interface{ Err() error }

func corpusAdd(ctx ctxDone, cfg *Config, st *store.Store, args []string, out io.Writer) error {
	m, err := loadManifest(cfg)
	if err != nil {
		return err
	}
	var n corpusCounts
	var missing []string
	seen := map[string]bool{}
	save := func() error { return saveManifest(cfg, m) }
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
			seen[abs] = true
			if err := corpusAddFile(cfg, st, m, abs, sanitize(arg), true, out, &n); err != nil {
				return err
			}
			continue
		}
		err = filepath.WalkDir(abs, func(p string, d fs.DirEntry, werr error) error {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			rel := displayPath(arg, abs, p)
			if werr != nil {
				fmt.Fprintf(out, "  skipped   %s: %s\n", rel, plainErr(werr))
				n.skipped++
				if d != nil && d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if p != abs && strings.HasPrefix(d.Name(), ".") {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil // hidden files are not documents
			}
			if d.IsDir() {
				return nil
			}
			if !d.Type().IsRegular() {
				fmt.Fprintf(out, "  skipped   %s: not a regular file\n", rel)
				n.skipped++
				return nil
			}
			seen[p] = true
			return corpusAddFile(cfg, st, m, p, rel, false, out, &n)
		})
		if err != nil {
			save()
			return err
		}
		// files once indexed under this folder that are gone now
		for p, e := range m.Files {
			if strings.HasPrefix(p, abs+string(filepath.Separator)) && !seen[p] {
				if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
					if err := corpusDrop(st, m, e); err != nil {
						return err
					}
					fmt.Fprintf(out, "  removed   %s (no longer exists)\n", displayPath(arg, abs, p))
					n.removed++
				}
			}
		}
	}
	// indexed files elsewhere that were deleted
	for p, e := range m.Files {
		if seen[p] {
			continue
		}
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			if err := corpusDrop(st, m, e); err != nil {
				return err
			}
			fmt.Fprintf(out, "  removed   %s (no longer exists)\n", sanitize(p))
			n.removed++
		}
	}
	if err := save(); err != nil {
		return err
	}
	fmt.Fprintf(out, "%d added, %d updated, %d unchanged, %d skipped, %d removed; %d documents in the corpus\n",
		n.added, n.updated, n.unchanged, n.skipped, n.removed, len(m.Files))
	if n.added+n.updated > 0 {
		fmt.Fprintln(out, "they are searched when a run's --sources include local (embedded on the next run)")
	}
	if len(missing) > 0 {
		return &exitError{exitUsage, fmt.Errorf("not found: %s", strings.Join(missing, ", "))}
	}
	return nil
}

// displayPath is how a file is named in corpus output: relative to the
// argument it was found under, and stripped of control characters (a file
// name can hold an escape sequence as easily as a web page can).
func displayPath(arg, abs, p string) string {
	shown := p
	if rel, err := filepath.Rel(abs, p); err == nil {
		shown = filepath.Join(arg, rel)
	}
	return sanitize(shown)
}

func plainErr(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return sanitize(err.Error())
}

// corpusAddFile indexes one file. explicit is true when the person named
// the file itself (an unsupported type is then worth a line even in quiet
// walks; in folders every skipped file gets a line too).
func corpusAddFile(cfg *Config, st *store.Store, m *corpusManifest, abs, shown string, explicit bool, out io.Writer, n *corpusCounts) error {
	info, err := os.Stat(abs)
	if err != nil {
		fmt.Fprintf(out, "  skipped   %s: %s\n", shown, plainErr(err))
		n.skipped++
		return nil
	}
	old := m.Files[abs]
	if old != nil && old.Size == info.Size() && old.ModTime.Equal(info.ModTime()) {
		fmt.Fprintf(out, "  unchanged %s\n", shown)
		n.unchanged++
		return nil
	}
	sum, err := fileSHA256(abs)
	if err != nil {
		fmt.Fprintf(out, "  skipped   %s: %s\n", shown, plainErr(err))
		n.skipped++
		return nil
	}
	if old != nil && old.SHA256 == sum {
		old.Size, old.ModTime = info.Size(), info.ModTime()
		fmt.Fprintf(out, "  unchanged %s (touched, same content)\n", shown)
		n.unchanged++
		return nil
	}
	doc, rec, err := search.ReadLocalFile(abs)
	if err != nil {
		fmt.Fprintf(out, "  skipped   %s: %s\n", shown, sanitize(err.Error()))
		n.skipped++
		if old != nil { // it was indexed, but its new content cannot be
			if err := corpusDrop(st, m, old); err != nil {
				return err
			}
			fmt.Fprintf(out, "  removed   %s (its old version)\n", shown)
			n.removed++
		}
		return nil
	}
	isPDF := doc.ContentType == "application/pdf"
	parts := search.ChunkPages(doc.Pages, search.ChunkOptions{TargetTokens: 500, OverlapTokens: 50})
	chunks := make([]store.Chunk, 0, len(parts))
	for i, p := range parts {
		c := store.Chunk{ID: store.ChunkID(rec.Key, i), SourceKey: rec.Key, Seq: i, Text: p.Text, Start: p.Start, End: p.End}
		if isPDF {
			c.Page = p.Page
		}
		chunks = append(chunks, c)
	}
	raw, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if err := st.PutSource(rec.Key, raw); err != nil {
		return err
	}
	if err := st.PutChunks(rec.Key, chunks); err != nil {
		return err
	}
	if pages, err := json.Marshal(doc.Pages); err == nil {
		if err := st.PutDocument(rec.Key, pages); err != nil {
			return err
		}
	}
	e := &corpusEntry{Path: abs, Key: rec.Key, Size: info.Size(), ModTime: info.ModTime(), SHA256: sum,
		Title: rec.Title, Type: doc.ContentType, Chunks: len(chunks), Indexed: time.Now().UTC()}
	if isPDF {
		e.Pages = len(doc.Pages)
	}
	m.Files[abs] = e
	detail := fmt.Sprintf("%d chunks", len(chunks))
	if isPDF {
		detail = fmt.Sprintf("%d pages, %d chunks", len(doc.Pages), len(chunks))
	}
	if old != nil {
		fmt.Fprintf(out, "  updated   %s (%s)\n", shown, detail)
		n.updated++
	} else {
		fmt.Fprintf(out, "  added     %s (%s)\n", shown, detail)
		n.added++
	}
	return nil
}

// corpusDrop takes a document out of the corpus: its chunks go (so the
// librarian no longer finds them); its source record stays, because past
// sessions may cite it.
func corpusDrop(st *store.Store, m *corpusManifest, e *corpusEntry) error {
	if err := st.PutChunks(e.Key, nil); err != nil {
		return err
	}
	delete(m.Files, e.Path)
	return nil
}

func fileSHA256(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func corpusList(cfg *Config, out io.Writer, asJSON bool) error {
	m, err := loadManifest(cfg)
	if err != nil {
		return err
	}
	entries := make([]*corpusEntry, 0, len(m.Files))
	for _, e := range m.Files {
		entries = append(entries, e)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Path < entries[j].Path })
	if asJSON {
		enc := json.NewEncoder(out)
		for _, e := range entries {
			if err := enc.Encode(e); err != nil {
				return err
			}
		}
		return nil
	}
	if len(entries) == 0 {
		fmt.Fprintln(out, "the corpus is empty; add documents with `researchtui corpus add PATH...`")
		return nil
	}
	for _, e := range entries {
		size := fmt.Sprintf("%d chunks", e.Chunks)
		if e.Pages > 0 {
			size = fmt.Sprintf("%d pages, %d chunks", e.Pages, e.Chunks)
		}
		fmt.Fprintf(out, "%s\n    %s · %s · indexed %s\n", sanitize(truncate(e.Title, 100)), sanitize(e.Path), size, e.Indexed.Local().Format("2006-01-02 15:04"))
	}
	fmt.Fprintf(out, "%d documents\n", len(entries))
	return nil
}
