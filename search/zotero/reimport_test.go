package zotero_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/researchtui/researchtui/search/bib"
	"github.com/researchtui/researchtui/search/zotero"
	"github.com/researchtui/researchtui/search/zotero/zoterotest"
)

func read(t *testing.T, dataDir string) zotero.Library {
	t.Helper()
	lib, err := zotero.ReadDatabase(context.Background(), dataDir)
	if err != nil {
		t.Fatal(err)
	}
	return lib
}

// TestReimport builds the shape of library the acceptance test uses, then
// changes it the ways Zotero does and checks what a second import sees:
// the version moves on every change and only then.
func TestReimport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := zoterotest.Build(dir, zoterotest.Sample(200, 5)); err != nil {
		t.Fatal(err)
	}
	lib := read(t, dir)
	if len(lib.Items) != 200 || len(lib.Collections) != 5 || lib.Version != 1 {
		t.Fatalf("%d items, %d collections, version %d", len(lib.Items), len(lib.Collections), lib.Version)
	}
	first := lib.Items[0]
	if first.ID != zoterotest.Key(1) || first.DOI != "10.5555/sample.1" || len(first.Files) != 1 ||
		!slices.Equal(first.Collections, []string{"Collection 1"}) {
		t.Errorf("first item: %+v", first)
	}
	if got := lib.Items[4].Collections; !slices.Equal(got, []string{"Collection 1/Collection 5"}) {
		t.Errorf("an item of the sub-collection: %q", got)
	}
	for _, it := range lib.Items {
		if len(it.Files) != 1 {
			t.Fatalf("%s has files %q", it.ID, it.Files)
		}
		if b, err := os.ReadFile(it.Files[0]); err != nil || len(b) < 100 || string(b[:5]) != "%PDF-" {
			t.Fatalf("%s: the PDF %s: %v", it.ID, it.Files[0], err)
		}
	}
	if again := read(t, dir); again.Version != lib.Version {
		t.Errorf("reading changed the version: %d, then %d", lib.Version, again.Version)
	}

	// An edit: new title, no more PDF but an EPUB.
	e := zoterotest.Sample(200, 5).Items[2]
	e.Fields["title"] = "A new title"
	e.Attachments = []zoterotest.Attachment{{Filename: "book.epub", Content: []byte("epub")}}
	if err := zoterotest.Update(dir, e); err != nil {
		t.Fatal(err)
	}
	oldPDF := lib.Items[2].Files[0]
	lib2 := read(t, dir)
	if lib2.Version != 2 {
		t.Errorf("version %d after an edit, want 2", lib2.Version)
	}
	edited := byID(lib2.Items)[e.Key]
	if edited.Title != "A new title" || len(edited.Files) != 1 || filepath.Base(edited.Files[0]) != "book.epub" {
		t.Errorf("edited item: %+v", edited)
	}
	if _, err := os.Stat(oldPDF); !os.IsNotExist(err) {
		t.Errorf("the replaced attachment's file is still there: %v", err)
	}
	if !slices.EqualFunc(lib2.Items, lib.Items, func(a, b bib.Item) bool { return a.ID == b.ID }) {
		t.Error("an edit changed the order of the items")
	}

	// A new item, one to the trash, one erased.
	if err := zoterotest.Update(dir, zoterotest.Entry{Key: "NEWITEM2", Type: "book", Fields: map[string]string{"title": "Added"}}); err != nil {
		t.Fatal(err)
	}
	if err := zoterotest.Trash(dir, zoterotest.Key(10)); err != nil {
		t.Fatal(err)
	}
	if err := zoterotest.Delete(dir, zoterotest.Key(20)); err != nil {
		t.Fatal(err)
	}
	lib3 := read(t, dir)
	if lib3.Version != 5 {
		t.Errorf("version %d after three more changes, want 5", lib3.Version)
	}
	ids := map[string]bool{}
	for _, it := range lib3.Items {
		ids[it.ID] = true
	}
	if len(lib3.Items) != 199 || !ids["NEWITEM2"] || ids[zoterotest.Key(10)] || ids[zoterotest.Key(20)] {
		t.Errorf("%d items after adding one, trashing one, erasing one", len(lib3.Items))
	}
	if _, err := os.Stat(filepath.Join(dir, "storage", zoterotest.Key(200_000+19))); !os.IsNotExist(err) {
		t.Errorf("the erased item's storage folder is still there: %v", err)
	}
	if v, err := zoterotest.Version(dir); err != nil || v != lib3.Version {
		t.Errorf("zoterotest.Version %d, %v; the reader says %d", v, err, lib3.Version)
	}
	if names := dirNames(t, dir); !slices.Equal(names, []string{"storage", "zotero.sqlite"}) {
		t.Errorf("the data dir holds %q after the changes", names)
	}
}

// TestReimportLegacy: a Zotero 7-9 database gives the version of the last
// sync while nothing changed since, and 0 (unknown) once something has.
func TestReimportLegacy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lib := zoterotest.Sample(3, 1)
	lib.Legacy = true
	lib.SyncedVersion = 57
	if err := zoterotest.Build(dir, lib); err != nil {
		t.Fatal(err)
	}
	if got := read(t, dir); got.Version != 57 || len(got.Items) != 3 {
		t.Fatalf("synced library: version %d, %d items", got.Version, len(got.Items))
	}
	if err := zoterotest.Delete(dir, zoterotest.Key(2)); err != nil {
		t.Fatal(err)
	}
	if got := read(t, dir); got.Version != 0 || len(got.Items) != 2 {
		t.Errorf("after an unsynced change: version %d, %d items", got.Version, len(got.Items))
	}
}
