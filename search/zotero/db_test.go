package zotero_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/researchtui/researchtui/search/bib"
	"github.com/researchtui/researchtui/search/zotero"
	"github.com/researchtui/researchtui/search/zotero/zoterotest"
)

// testLibrary has items of several types, creators of every kind, tags,
// a collection with a sub-collection, an item in the trash, a standalone
// note and attachment, an imported PDF, an HTML snapshot, a linked file
// (absolute and relative to the base directory), a link and an image.
func testLibrary(linked string) zoterotest.Library {
	return zoterotest.Library{
		Collections: []zoterotest.Collection{
			{Key: "CLLAAAAA", Name: "Thesis"},
			{Key: "CLLBBBBB", Name: "Chapter 2", Parent: "CLLAAAAA"},
			{Key: "CLLCCCCC", Name: "Old", Trashed: true},
			{Key: "CLLDDDDD", Name: "Older", Parent: "CLLCCCCC"},
		},
		Items: []zoterotest.Entry{
			{
				Key:  "ARTICLE2",
				Type: "journalArticle",
				Fields: map[string]string{
					"title":            "Attention Is All You Need",
					"publicationTitle": "Advances in Neural Information Processing Systems",
					"volume":           "30",
					"issue":            "1",
					"pages":            "5998-6008",
					"date":             "2017-12-04",
					"DOI":              "https://doi.org/10.48550/ARXIV.1706.03762",
					"ISSN":             "1049-5258",
					"url":              "https://arxiv.org/abs/1706.03762",
					"abstractNote":     "The dominant sequence transduction models\n\nare based on \x1b[31mrecurrent\x1b[0m networks.",
					"language":         "en",
				},
				Creators: []zoterotest.Creator{
					{First: "Ashish", Last: "Vaswani"},
					{First: "Noam", Last: "Shazeer"},
					{Type: "editor", First: "Isabelle", Last: "Guyon"},
					{Type: "contributor", First: "Some", Last: "Helper"},
				},
				Tags:        []string{"transformers", "attention"},
				Collections: []string{"CLLBBBBB", "CLLAAAAA"},
				Attachments: []zoterotest.Attachment{
					{Key: "SNAPSHT2", Mode: "imported_url", Filename: "snapshot.html", Content: []byte("<html>snap</html>"), URL: "https://arxiv.org/abs/1706.03762"},
					{Key: "PDFATT22", Filename: "Vaswani et al. - 2017 - Attention.pdf"},
					{Key: "LINKURL2", Mode: "linked_url", URL: "https://example.org/"},
					{Key: "IMAGE222", Filename: "figure.png", Content: []byte("png")},
					{Key: "TRASHATT", Filename: "old.pdf", Trashed: true},
				},
				Notes: []string{"A child note"},
			},
			{
				Key:  "CNFPAPR2",
				Type: "conferencePaper",
				Fields: map[string]string{
					"title":            "Deep Residual Learning",
					"publicationTitle": "Proceedings of CVPR", // the base field of proceedingsTitle
					"conferenceName":   "CVPR 2016",
					"date":             "June 2016",
					"pages":            "770–778",
					"publisher":        "IEEE",
					"DOI":              "10.1109/CVPR.2016.90",
				},
				Creators:    []zoterotest.Creator{{First: "Kaiming", Last: "He"}},
				Collections: []string{"CLLAAAAA"},
				Attachments: []zoterotest.Attachment{
					{Key: "LINKED22", Mode: "linked_file", Path: linked},
					{Key: "LINKED23", Mode: "linked_file", Path: "attachments:papers/he.epub"},
				},
			},
			{
				Key:  "BKKUHN22",
				Type: "book",
				Fields: map[string]string{
					"title":     "The Structure of Scientific Revolutions",
					"publisher": "University of Chicago Press",
					"date":      "1962",
					"ISBN":      "978-0-226-45808-3",
				},
				Creators: []zoterotest.Creator{{First: "Thomas S.", Last: "Kuhn"}},
			},
			{
				Key:  "SECTN222",
				Type: "bookSection",
				Fields: map[string]string{
					"title":     "A Chapter",
					"bookTitle": "Collected Essays",
					"date":      "2001-05",
				},
				Creators: []zoterotest.Creator{{Type: "editor", Name: "The Editorial Board"}, {Last: "Solo"}},
			},
			{
				Key:    "THESIS22",
				Type:   "thesis",
				Fields: map[string]string{"title": "On Things", "university": "MIT", "date": "2019"},
			},
			{
				Key:    "REPRT222",
				Type:   "report",
				Fields: map[string]string{"title": "A Report", "institution": "RAND", "extra": "Some note\nDOI: 10.7249/RR1234\nPMID: 1"},
			},
			{
				Key:      "WEBPAGE2",
				Type:     "webpage",
				Fields:   map[string]string{"title": "A Page", "websiteTitle": "Example Site", "url": "https://example.org/page"},
				Creators: []zoterotest.Creator{{Name: "World Health Organization"}},
			},
			{
				Key:    "PREPRNT2",
				Type:   "preprint",
				Fields: map[string]string{"title": "A Preprint", "repository": "arXiv", "DOI": "10.48550/arXiv.2001.00001"},
			},
			{
				Key:      "FILM2222",
				Type:     "film",
				Fields:   map[string]string{"title": "A Film"},
				Creators: []zoterotest.Creator{{Type: "director", First: "Agnès", Last: "Varda"}},
			},
			{
				Key:     "TRASHED2",
				Type:    "journalArticle",
				Fields:  map[string]string{"title": "In the trash"},
				Trashed: true,
			},
			{
				Key:         "INXLDCL2",
				Type:        "manuscript",
				Fields:      map[string]string{"title": "Filed in a trashed collection"},
				Collections: []string{"CLLDDDDD"},
			},
		},
		Notes:       []string{"A standalone note"},
		Attachments: []zoterotest.Attachment{{Key: "STANDALN", Filename: "loose.pdf"}},
	}
}

func buildTestLibrary(t *testing.T, legacy bool) (dataDir, baseDir string) {
	t.Helper()
	root := t.TempDir()
	dataDir = filepath.Join(root, "Zotero")
	baseDir = filepath.Join(root, "Papers")
	linked := filepath.Join(root, "elsewhere", "he2016.pdf")
	for _, p := range []string{linked, filepath.Join(baseDir, "papers", "he.epub")} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, zoterotest.PDF("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lib := testLibrary(linked)
	lib.Legacy = legacy
	if err := zoterotest.Build(dataDir, lib); err != nil {
		t.Fatal(err)
	}
	return dataDir, baseDir
}

func byID(items []bib.Item) map[string]bib.Item {
	m := map[string]bib.Item{}
	for _, it := range items {
		m[it.ID] = it
	}
	return m
}

func TestReadDatabase(t *testing.T) {
	t.Parallel()
	for _, legacy := range []bool{false, true} {
		name := "zotero10"
		if legacy {
			name = "zotero7to9"
		}
		t.Run(name, func(t *testing.T) {
			dataDir, baseDir := buildTestLibrary(t, legacy)
			lib, err := zotero.ReadDatabaseWith(context.Background(), dataDir, zotero.DatabaseOptions{BaseDir: baseDir})
			if err != nil {
				t.Fatal(err)
			}
			checkTestLibrary(t, lib, dataDir, baseDir)
			if legacy && lib.Version != 0 {
				t.Errorf("an unsynced Zotero 7-9 library has version %d, want 0 (unknown)", lib.Version)
			}
			if !legacy && lib.Version != 1 {
				t.Errorf("version %d after one build transaction, want 1", lib.Version)
			}
		})
	}
}

func checkTestLibrary(t *testing.T, lib zotero.Library, dataDir, baseDir string) {
	t.Helper()
	wantCols := []zotero.Collection{{Key: "CLLAAAAA", Name: "Thesis"}, {Key: "CLLBBBBB", Name: "Chapter 2", Parent: "CLLAAAAA"}}
	if !reflect.DeepEqual(lib.Collections, wantCols) {
		t.Errorf("collections %+v, want %+v (the trashed one and its child left out)", lib.Collections, wantCols)
	}
	var ids []string
	for _, it := range lib.Items {
		ids = append(ids, it.ID)
	}
	wantIDs := []string{"ARTICLE2", "CNFPAPR2", "BKKUHN22", "SECTN222", "THESIS22", "REPRT222", "WEBPAGE2", "PREPRNT2", "FILM2222", "INXLDCL2"}
	if !slices.Equal(ids, wantIDs) {
		t.Fatalf("items %v, want %v (in the order added; trash, notes and standalone attachments left out)", ids, wantIDs)
	}
	for _, it := range lib.Items {
		checkItem(t, it)
	}
	items := byID(lib.Items)
	art := items["ARTICLE2"]
	want := bib.Item{
		ID:          "ARTICLE2",
		Type:        "article-journal",
		Title:       "Attention Is All You Need",
		Authors:     []bib.Name{{Family: "Vaswani", Given: "Ashish"}, {Family: "Shazeer", Given: "Noam"}},
		Editors:     []bib.Name{{Family: "Guyon", Given: "Isabelle"}},
		Year:        2017,
		Date:        "2017-12-04",
		Venue:       "Advances in Neural Information Processing Systems",
		Volume:      "30",
		Issue:       "1",
		Pages:       "5998–6008",
		DOI:         "10.48550/arxiv.1706.03762",
		ISSN:        "1049-5258",
		URL:         "https://arxiv.org/abs/1706.03762",
		Abstract:    "The dominant sequence transduction models\n\nare based on recurrent networks.", // paragraphs kept, as search/bib keeps them
		Language:    "en",
		Tags:        []string{"attention", "transformers"},
		Collections: []string{"Thesis", "Thesis/Chapter 2"},
		Files: []string{
			filepath.Join(dataDir, "storage", "PDFATT22", "Vaswani et al. - 2017 - Attention.pdf"),
			filepath.Join(dataDir, "storage", "SNAPSHT2", "snapshot.html"),
		},
	}
	if !reflect.DeepEqual(art, want) {
		t.Errorf("journal article:\n got %+v\nwant %+v", art, want)
	}
	conf := items["CNFPAPR2"]
	if conf.Type != "paper-conference" || conf.Venue != "Proceedings of CVPR" || conf.Year != 2016 || conf.Date != "2016-06" ||
		conf.Publisher != "IEEE" || conf.DOI != "10.1109/cvpr.2016.90" || conf.Pages != "770–778" {
		t.Errorf("conference paper: %+v", conf)
	}
	wantFiles := []string{filepath.Join(filepath.Dir(baseDir), "elsewhere", "he2016.pdf"), filepath.Join(baseDir, "papers", "he.epub")}
	if !slices.Equal(conf.Files, wantFiles) {
		t.Errorf("linked files %q, want %q", conf.Files, wantFiles)
	}
	for _, c := range []struct {
		id, typ, venue, publisher, date, doi, isbn string
		year                                       int
	}{
		{"BKKUHN22", "book", "", "University of Chicago Press", "1962", "", "978-0-226-45808-3", 1962},
		{"SECTN222", "chapter", "Collected Essays", "", "2001-05", "", "", 2001},
		{"THESIS22", "thesis", "MIT", "MIT", "2019", "", "", 2019},
		{"REPRT222", "report", "RAND", "RAND", "", "10.7249/rr1234", "", 0},
		{"WEBPAGE2", "webpage", "Example Site", "", "", "", "", 0},
		{"PREPRNT2", "article", "", "arXiv", "", "10.48550/arxiv.2001.00001", "", 0},
		{"FILM2222", "motion_picture", "", "", "", "", "", 0},
		{"INXLDCL2", "manuscript", "", "", "", "", "", 0},
	} {
		it := items[c.id]
		if it.Type != c.typ || it.Venue != c.venue || it.Publisher != c.publisher || it.Date != c.date ||
			it.DOI != c.doi || it.ISBN != c.isbn || it.Year != c.year {
			t.Errorf("%s: %+v", c.id, it)
		}
	}
	if got := items["SECTN222"]; !reflect.DeepEqual(got.Editors, []bib.Name{{Literal: "The Editorial Board"}}) ||
		!reflect.DeepEqual(got.Authors, []bib.Name{{Family: "Solo"}}) {
		t.Errorf("book section creators: %+v / %+v", got.Authors, got.Editors)
	}
	if got := items["WEBPAGE2"].Authors; !reflect.DeepEqual(got, []bib.Name{{Literal: "World Health Organization"}}) {
		t.Errorf("organisation author: %+v", got)
	}
	if got := items["FILM2222"].Authors; !reflect.DeepEqual(got, []bib.Name{{Family: "Varda", Given: "Agnès"}}) {
		t.Errorf("a film's director is its author: %+v", got)
	}
	if got := items["INXLDCL2"].Collections; got != nil {
		t.Errorf("an item in a trashed collection keeps it: %q", got)
	}
}

func fileSum(t *testing.T, p string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestReadDatabaseNeverWrites reads a database in both journal modes and
// checks that its bytes, its folder and its modification time are as
// before: no journal, WAL or -shm file is made, even for a moment that
// leaves a trace.
func TestReadDatabaseNeverWrites(t *testing.T) {
	t.Parallel()
	for _, legacy := range []bool{false, true} {
		testNeverWrites(t, legacy)
	}
}

func testNeverWrites(t *testing.T, legacy bool) {
	t.Helper()
	{
		dataDir, _ := buildTestLibrary(t, legacy)
		db := filepath.Join(dataDir, zotero.DatabaseName)
		before, names := fileSum(t, db), dirNames(t, dataDir)
		st, err := os.Stat(db)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(names, []string{"storage", "zotero.sqlite"}) {
			t.Fatalf("the built data dir holds %q", names)
		}
		if err := os.Chmod(db, 0o444); err != nil { // as a read-only file
			t.Fatal(err)
		}
		for range 2 {
			if _, err := zotero.ReadDatabase(context.Background(), dataDir); err != nil {
				t.Fatal(err)
			}
		}
		if fileSum(t, db) != before {
			t.Error("reading changed zotero.sqlite")
		}
		if got := dirNames(t, dataDir); !slices.Equal(got, names) {
			t.Errorf("reading left %q in the data dir, had %q", got, names)
		}
		if st2, err := os.Stat(db); err != nil || !st2.ModTime().Equal(st.ModTime()) {
			t.Errorf("the database's modification time changed: %v", err)
		}
	}
}

func TestReadDatabaseErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := zotero.ReadDatabase(context.Background(), dir); err == nil || !strings.Contains(err.Error(), "no zotero.sqlite") {
		t.Errorf("empty dir: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, zotero.DatabaseName), []byte("not a database at all, but long enough to have a header of a hundred bytes........................."), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := zotero.ReadDatabase(context.Background(), dir); err == nil || !strings.Contains(err.Error(), "not an SQLite database") {
		t.Errorf("garbage: %v", err)
	}
	// A WAL left with frames in it: Zotero stopped without closing.
	dataDir, _ := buildTestLibrary(t, false)
	if err := os.WriteFile(filepath.Join(dataDir, zotero.DatabaseName+"-wal"), []byte("frames"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := zotero.ReadDatabase(context.Background(), dataDir)
	if err == nil || !strings.Contains(err.Error(), "did not close its database cleanly") || errors.Is(err, zotero.ErrLocked) {
		t.Errorf("left-over WAL: %v", err)
	}
}

// TestReadDatabaseHostile: what a library holds is untrusted; the items
// read from it carry no escape sequence, control or broken UTF-8.
func TestReadDatabaseHostile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lib := zoterotest.Library{
		Collections: []zoterotest.Collection{{Key: "CLLAAAAA", Name: "Evil\x1b[2J\x1b]0;title\x07 collection"}},
		Items: []zoterotest.Entry{{
			Key:  "HSTILE22",
			Type: "journalArticle",
			Fields: map[string]string{
				"title":        "Title \x1b[31mred\x1b[0m\u202e\x00 and \xff\xfe bytes",
				"abstractNote": "line one\r\nline\ttwo\x07\x9b31m",
				"DOI":          "\x1b[1m10.1000/ABC\x1b[0m",
				"extra":        "\x00",
				"date":         "\x1b2019",
			},
			Creators:    []zoterotest.Creator{{First: "Ev\x1bil", Last: "Na\u200fme\x08"}, {Name: "\x1b]8;;http://x\x07Org\x1b]8;;\x07"}},
			Tags:        []string{"tag\nwith newline", "\x1b[5mblink"},
			Collections: []string{"CLLAAAAA"},
			Attachments: []zoterotest.Attachment{
				{Key: "HSTFILE2", Filename: "new\nline.pdf"},
				{Key: "HSTFILE3", Filename: "ok.pdf"},
			},
		}},
	}
	if err := zoterotest.Build(dir, lib); err != nil {
		t.Fatal(err)
	}
	got := read(t, dir)
	if len(got.Items) != 1 {
		t.Fatalf("%d items", len(got.Items))
	}
	it := got.Items[0]
	checkItem(t, it)
	for _, c := range got.Collections {
		checkLine(t, "collection", c.Name)
	}
	// A lone 0x9b byte is read as the 8-bit CSI it is to a terminal, and
	// "\x9b31m" goes whole, as everywhere else (textkit.StripControls).
	if it.Title != "Title red and bytes" || it.DOI != "10.1000/abc" || it.Abstract != "line one\nline two" {
		t.Errorf("cleaned: title %q, DOI %q, abstract %q", it.Title, it.DOI, it.Abstract)
	}
	if len(it.Files) != 1 || filepath.Base(it.Files[0]) != "ok.pdf" {
		t.Errorf("files %q: a path with a newline is dropped, not mended", it.Files)
	}
}
