package corpus_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/researchtui/researchtui/corpus"
	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/search/bib"
)

// libraryWorld is a library of three items (a PDF, a Markdown note, one
// with its abstract only) over an in-memory store that counts what it
// embeds.
type libraryWorld struct {
	dir      string
	st       *memStore
	opt      corpus.Options
	embedded atomic.Int64
	reports  []string
	details  map[string]string // by title
}

func newLibraryWorld(t *testing.T) *libraryWorld {
	t.Helper()
	w := &libraryWorld{dir: t.TempDir(), st: newMemStore(), details: map[string]string{}}
	pdf, err := os.ReadFile(filepath.Join("..", "search", "testdata", "pdf", "elsarticle-elstest-5p.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(w.dir, "storage", "AAAA"), 0o755)
	os.WriteFile(filepath.Join(w.dir, "storage", "AAAA", "paper.pdf"), pdf, 0o644)
	os.WriteFile(filepath.Join(w.dir, "note.md"), []byte("# Phonons\n\nPhonon scattering limits thermal conductivity in d-wave superconductors.\n"), 0o644)
	w.opt = corpus.Options{
		Manifest: filepath.Join(w.dir, "data", "corpus.json"),
		Store:    w.st,
		File: func(verb, title, detail string) {
			w.reports = append(w.reports, verb+" "+title)
			w.details[title] = detail
		},
		Embedder: &corpus.Embedder{Model: "m", Parallel: 2, Embed: func(_ context.Context, texts []string) ([][]float32, error) {
			w.embedded.Add(int64(len(texts)))
			out := make([][]float32, len(texts))
			for i := range out {
				out[i] = []float32{1, 0}
			}
			return out, nil
		}},
	}
	return w
}

func (w *libraryWorld) items() []bib.Item {
	return []bib.Item{
		{ID: "AAAA", Type: "article-journal", Title: "Elastic moduli of thin films", Authors: []bib.Name{{Family: "Müller", Given: "Anna"}, {Literal: "CERN Collaboration"}},
			Year: 2019, Venue: "Physical Review B", DOI: "10.1103/PhysRevB.1", Volume: "1", Issue: "2", Pages: "1–10", Publisher: "APS",
			Editors: []bib.Name{{Family: "Editor", Given: "Ed"}, {Literal: "IEEE"}}, Tags: []string{"to read"}, Collections: []string{"Thesis", "Thesis/Chapter 2"},
			Files: []string{filepath.Join(w.dir, "storage", "AAAA", "paper.pdf"), filepath.Join(w.dir, "storage", "AAAA", "book.epub")}},
		{ID: "BBBB", Type: "manuscript", Title: "Phonon notes", Authors: []bib.Name{{Family: "Lee", Given: "Bo"}}, Year: 2021,
			Collections: []string{"Thesis"}, Files: []string{filepath.Join(w.dir, "note.md")}},
		{ID: "CCCC", Type: "article-journal", Title: "Spin liquids revisited", Authors: []bib.Name{{Family: "Kitaev", Given: "Alexei"}}, Year: 2006,
			Venue: "Annals of Physics", Abstract: "An exactly solvable model of a spin liquid on the honeycomb lattice.", Collections: []string{"Reading group"}},
	}
}

func (w *libraryWorld) importItems(t *testing.T, items []bib.Item) corpus.Result {
	t.Helper()
	w.reports = nil
	res, err := corpus.ImportLibrary(context.Background(), w.opt, corpus.Library{Name: "zotero", Kind: "zotero", Origin: w.dir, Items: items,
		Collections: []string{"Thesis", "Thesis/Chapter 2", "Reading group", "Empty"}})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(w.reports)
	return res
}

// A library imported, then synced: new items are read (the PDF by pages,
// the note, the abstract of an item without a file), an EPUB is named as
// not read; a second import of the same library changes nothing and
// embeds nothing; one item deleted and one retitled: 1 removed, 1 updated,
// nothing embedded again. The records carry the library's metadata and
// collections, which list with their counts.
func TestImportLibrarySyncs(t *testing.T) {
	t.Parallel()
	w := newLibraryWorld(t)
	res := w.importItems(t, w.items())
	if res.Added != 3 || res.Skipped != 0 {
		t.Fatalf("first import: %+v %q", res, w.reports)
	}
	if d := w.details["Elastic moduli of thin films"]; d != "4 pages, 11 chunks; not read: book.epub (EPUB is not read)" {
		t.Errorf("the PDF item's report: %q", d)
	}
	if d := w.details["Spin liquids revisited"]; !strings.HasPrefix(d, "its abstract") {
		t.Errorf("the abstract-only item's report: %q", d)
	}
	first := w.embedded.Load()
	if first == 0 {
		t.Fatal("nothing embedded")
	}
	m, err := corpus.LoadManifest(w.opt.Manifest)
	if err != nil {
		t.Fatal(err)
	}
	a := m.Items["zotero\x00AAAA"]
	if a == nil || a.Pages != 4 || a.File == "" || a.EmbeddedWith != "m" {
		t.Fatalf("the PDF item: %+v", a)
	}
	var rec search.Record
	raw, ok, _ := w.st.Source(search.LibraryKey("zotero", "AAAA"))
	if !ok || json.Unmarshal(raw, &rec) != nil {
		t.Fatal("no record for the PDF item")
	}
	if rec.Title != "Elastic moduli of thin films" || rec.Year != 2019 || rec.Venue != "Physical Review B" || rec.DOI != "10.1103/physrevb.1" ||
		!slices.Equal(rec.Authors, []string{"Anna Müller", "CERN Collaboration"}) || !slices.Equal(rec.AuthorsFiled, []string{"Müller, Anna", "CERN Collaboration"}) || rec.Library != "zotero" || rec.LibraryID != "AAAA" ||
		!slices.Equal(rec.Collections, []string{"zotero", "Thesis", "Thesis/Chapter 2", "#to read"}) {
		t.Fatalf("record %+v", rec)
	}
	if want := (search.Publication{ItemType: "article-journal", Volume: "1", Issue: "2", Pages: "1–10", Publisher: "APS", Editors: []string{"Editor, Ed", "IEEE"}}); !reflect.DeepEqual(rec.Publication, want) {
		t.Errorf("the library's publication details: %+v, want %+v", rec.Publication, want)
	}
	if search.LocalStoreKey(rec) != rec.Key {
		t.Fatalf("the record's own copy is at %s, not its key %s", search.LocalStoreKey(rec), rec.Key)
	}
	c, _ := w.st.Chunks(search.LibraryKey("zotero", "CCCC"))
	if len(c) != 1 || !strings.Contains(c[0].Text, "honeycomb") {
		t.Fatalf("the abstract-only item's chunks: %+v", c)
	}

	// The same library again: nothing read, nothing embedded.
	res = w.importItems(t, w.items())
	if res.Unchanged != 3 || res.Added+res.Updated+res.Removed != 0 || w.embedded.Load() != first {
		t.Fatalf("second import: %+v, embedded %d more", res, w.embedded.Load()-first)
	}

	// One deleted, one retitled and moved: its chunks and vectors stay.
	items := w.items()
	items[0].Title = "Elastic moduli of thin films, revisited"
	items[0].Collections = []string{"Reading group"}
	items = items[:2]
	res = w.importItems(t, items)
	if res.Removed != 1 || res.Updated != 1 || res.Unchanged != 1 || w.embedded.Load() != first {
		t.Fatalf("sync: %+v %q, embedded %d more", res, w.reports, w.embedded.Load()-first)
	}
	if want := []string{"removed Spin liquids revisited", "unchanged Phonon notes", "updated Elastic moduli of thin films, revisited"}; !slices.Equal(w.reports, want) {
		t.Fatalf("reports %q, want %q", w.reports, want)
	}
	if c, _ := w.st.Chunks(search.LibraryKey("zotero", "AAAA")); len(c) == 0 {
		t.Fatal("the retitled item lost its chunks")
	}
	if c, _ := w.st.Chunks(search.LibraryKey("zotero", "CCCC")); len(c) != 0 {
		t.Fatal("the deleted item is still searchable")
	}

	m, _ = corpus.LoadManifest(w.opt.Manifest)
	counts := map[string]int{}
	for _, c := range m.Collections() {
		counts[c.Kind+" "+c.Name] = c.Items
	}
	want := map[string]int{"library zotero": 2, "collection Thesis": 1, "collection Thesis/Chapter 2": 0, "collection Reading group": 1, "collection Empty": 0, "tag #to read": 1}
	for k, n := range want {
		if counts[k] != n {
			t.Errorf("collection %s: %d items, want %d (all: %v)", k, counts[k], n, counts)
		}
	}
	if u := m.UnknownCollections([]string{"thesis", "THESIS/chapter 2", "Nope", "#to read"}); !slices.Equal(u, []string{"Nope"}) {
		t.Errorf("unknown collections %q", u)
	}
}

// The local source searches the library's items with the loose documents,
// and only the named collections when a run names some.
func TestLocalSourceByCollection(t *testing.T) {
	t.Parallel()
	w := newLibraryWorld(t)
	w.importItems(t, w.items())
	os.WriteFile(filepath.Join(w.dir, "loose.md"), []byte("# Honeycomb\n\nA loose note on the honeycomb lattice spin liquid.\n"), 0o644)
	if _, err := corpus.Add(context.Background(), w.opt, []string{filepath.Join(w.dir, "loose.md")}); err != nil {
		t.Fatal(err)
	}
	src := search.NewLocal(corpus.Docs(w.opt.Manifest, w.st))
	titles := func(collections ...string) []string {
		recs, err := src.(search.CollectionSearcher).SearchCollections(context.Background(), "honeycomb spin liquid", 10, collections)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range recs {
			out = append(out, r.Title)
		}
		sort.Strings(out)
		return out
	}
	if got := titles(); !slices.Equal(got, []string{"Honeycomb", "Spin liquids revisited"}) {
		t.Errorf("all: %q", got)
	}
	if got := titles("reading group"); !slices.Equal(got, []string{"Spin liquids revisited"}) {
		t.Errorf("one collection: %q", got)
	}
	if got := titles("corpus"); !slices.Equal(got, []string{"Honeycomb"}) {
		t.Errorf("the loose documents: %q", got)
	}
	if got := titles("Thesis"); len(got) != 0 {
		t.Errorf("a collection without a match: %q", got)
	}
}
