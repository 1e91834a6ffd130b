package corpus

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/researchtui/researchtui/search"
)

// Entry is one indexed document in the manifest.
type Entry struct {
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

// Manifest is what the corpus holds (corpus.json in the data dir).
type Manifest struct {
	Version int               `json:"version"`
	Files   map[string]*Entry `json:"files"` // by absolute path
	// Libraries are the imported reference libraries by name, Items their
	// items (by library and ID; see library.go).
	Libraries map[string]*LibraryEntry `json:"libraries,omitempty"`
	Items     map[string]*ItemEntry    `json:"items,omitempty"`
}

// LoadManifest reads the manifest at path; a missing one is empty.
func LoadManifest(path string) (*Manifest, error) {
	m := &Manifest{Version: 1, Files: map[string]*Entry{}}
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, m); err != nil {
		return nil, fmt.Errorf("the corpus manifest %s is damaged (%v); move it aside and run `researchtui corpus add` again", path, err)
	}
	if m.Files == nil {
		m.Files = map[string]*Entry{}
	}
	return m, nil
}

// Save writes the manifest to path through a temporary file beside it.
// It is written entry by entry, as json.MarshalIndent(m, "", "  ") would
// write it whole: a library of 100,000 items makes a manifest of some 50
// MB, which MarshalIndent held twice (compact and indented) at every save.
func (m *Manifest) Save(path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".corpus-*.json")
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(tmp, 256<<10)
	err = m.write(w)
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// write writes the manifest as json.MarshalIndent(m, "", "  ") does.
func (m *Manifest) write(bw *bufio.Writer) error {
	w := sticky{bw}
	w.put("{\n  \"version\": ", strconv.Itoa(m.Version), ",\n  \"files\": ")
	if err := writeMap(w, m.Files); err != nil {
		return err
	}
	if len(m.Libraries) > 0 {
		w.put(",\n  \"libraries\": ")
		if err := writeMap(w, m.Libraries); err != nil {
			return err
		}
	}
	if len(m.Items) > 0 {
		w.put(",\n  \"items\": ")
		if err := writeMap(w, m.Items); err != nil {
			return err
		}
	}
	w.put("\n}")
	return nil
}

// sticky writes to a bufio.Writer, whose first error stays: Flush reports
// it.
type sticky struct{ *bufio.Writer }

func (w sticky) put(parts ...string) {
	for _, p := range parts {
		_, _ = w.WriteString(p)
	}
}

// writeMap writes a map of the manifest one entry at a time, its keys
// sorted as encoding/json sorts them.
func writeMap[V any](w sticky, m map[string]V) error {
	switch {
	case m == nil:
		w.put("null")
		return nil
	case len(m) == 0:
		w.put("{}")
		return nil
	}
	w.put("{")
	for i, k := range slices.Sorted(maps.Keys(m)) {
		key, err := json.Marshal(k)
		if err != nil {
			return err
		}
		val, err := json.MarshalIndent(m[k], "    ", "  ")
		if err != nil {
			return err
		}
		if i > 0 {
			w.put(",")
		}
		w.put("\n    ", string(key), ": ", string(val))
	}
	w.put("\n  }")
	return nil
}

// Entries are the manifest's documents by path.
func (m *Manifest) Entries() []*Entry {
	entries := make([]*Entry, 0, len(m.Files))
	for _, e := range m.Files {
		entries = append(entries, e)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Path < entries[j].Path })
	return entries
}

// LooseCollection is the collection of the documents `corpus add` indexed
// (loose files, not items of a library).
const LooseCollection = "corpus"

// Docs is the local source's view of the corpus: the manifest's documents
// and library items (at manifest) with their stored records and chunk
// text.
func Docs(manifest string, st Reader) search.LocalDocsFunc {
	return func() ([]search.LocalDoc, error) {
		m, err := LoadManifest(manifest)
		if err != nil {
			return nil, err
		}
		var out []search.LocalDoc
		add := func(key string, collections []string) error {
			raw, ok, err := st.Source(key)
			if err != nil || !ok {
				return err
			}
			var rec search.Record
			if json.Unmarshal(raw, &rec) != nil {
				return nil
			}
			if len(rec.Collections) == 0 {
				rec.Collections = collections
			}
			chunks, err := st.Chunks(key)
			if err != nil {
				return err
			}
			var b strings.Builder
			for _, c := range chunks {
				b.WriteString(c.Text)
				b.WriteByte('\n')
			}
			out = append(out, search.LocalDoc{Record: rec, Text: b.String()})
			return nil
		}
		for _, e := range m.Entries() {
			if err := add(e.Key, []string{LooseCollection}); err != nil {
				return nil, err
			}
		}
		for _, e := range m.ItemEntries() {
			if err := add(e.Key, e.Collections); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
}

// drop takes a document out of the corpus: its chunks go (so the librarian
// no longer finds them); its source record stays, because past sessions
// may cite it.
func drop(st Store, m *Manifest, e *Entry) error {
	if err := st.PutChunks(e.Key, nil); err != nil {
		return err
	}
	delete(m.Files, e.Path)
	return nil
}
