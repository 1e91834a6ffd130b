package cli

import (
	"context"
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

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/store"
)

// The local corpus: `corpus add` reads documents, stores each one as a
// source (a search.Record with Source "local", key search.LocalKey(path))
// with its chunks, and keeps a manifest in the data dir (corpus.json) of
// what is indexed: path, size, modification time and content hash, so that
// unchanged files are skipped on re-add, changed ones re-indexed and removed
// ones dropped. Chunks are embedded as they are committed (corpus_ingest.go)
// when the embedding model answers, else by the next run's index stage.

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
	// EmbeddedWith is the embedding model all the file's chunks have
	// vectors of; a re-run skips looking at them.
	EmbeddedWith string `json:"embedded_with,omitempty"`
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
func corpusDocs(cfg *Config, st store.DB) search.LocalDocsFunc {
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
			db, err := openStore(cfg, own)
			if err != nil {
				return err
			}
			st := db.(*store.Store)
			defer st.Close()
			d := corpusDeps{st: st, model: cfg.EmbedModel, parallel: max(cfg.modelParallel(), 2)}
			if b, err := newBackend(cfg); err == nil && cfg.EmbedModel != "" {
				eng := &pipeline.Engine{Store: st, LLM: b}
				d.embed = func(ctx context.Context, texts []string) ([][]float32, error) {
					return eng.EmbedDocuments(ctx, cfg.EmbedModel, texts)
				}
			} else if err != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "documents are indexed without embeddings: %v\n", err)
			}
			return corpusAdd(cmd.Context(), cfg, d, args, cmd.OutOrStdout(), cmd.ErrOrStderr())
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
