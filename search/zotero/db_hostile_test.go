package zotero_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/researchtui/researchtui/search/zotero"
	"github.com/researchtui/researchtui/search/zotero/zoterotest"
)

// craftedLibrary is a small library whose database the test then alters
// with stmts, as a hostile copy of a Zotero data folder would be.
func craftedLibrary(t *testing.T, stmts ...string) string {
	t.Helper()
	dir := t.TempDir()
	lib := zoterotest.Library{Items: []zoterotest.Entry{
		{Key: "ITEMAAAA", Type: "journalArticle", Fields: map[string]string{"title": "First", "abstractNote": "An abstract."},
			Creators: []zoterotest.Creator{{First: "Ada", Last: "Lovelace"}}, Tags: []string{"one"}},
		{Key: "ITEMBBBB", Type: "book", Fields: map[string]string{"title": "Second"}},
	}}
	if err := zoterotest.Build(dir, lib); err != nil {
		t.Fatal(err)
	}
	craft(t, dir, stmts...)
	return dir
}

// craft runs stmts on the database in dir.
func craft(t *testing.T, dir string, stmts ...string) {
	t.Helper()
	p := filepath.ToSlash(filepath.Join(dir, zotero.DatabaseName))
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	db, err := sql.Open("sqlite3", (&url.URL{Scheme: "file", Path: p}).String()+"?_pragma=foreign_keys(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// readBounded reads the database in dir, failing the test if the read has
// not returned after a minute: a regression fails instead of hanging.
func readBounded(t *testing.T, dir string) (zotero.Library, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	type result struct {
		lib zotero.Library
		err error
	}
	done := make(chan result, 1)
	go func() {
		lib, err := zotero.ReadDatabase(ctx, dir)
		done <- result{lib, err}
	}()
	select {
	case r := <-done:
		return r.lib, r.err
	case <-time.After(time.Minute):
		t.Fatal("ReadDatabase did not return in a minute")
	}
	return zotero.Library{}, nil
}

// Each table the reader queries must be a table: a view in its place (one
// that never ends, one that grows memory without bound, one that spins
// the CPU, one that only renames the real table, one named in other case)
// is refused with an error naming it, before it runs.
func TestCraftedDatabaseViewsAreRefused(t *testing.T) {
	t.Parallel()
	forever := "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r)"
	for _, c := range []struct {
		table string
		stmts []string
	}{
		{"itemTags", []string{"DROP TABLE itemTags",
			"CREATE VIEW itemTags AS " + forever + " SELECT (SELECT min(itemID) FROM items) AS itemID, (SELECT min(tagID) FROM tags) AS tagID, 0 AS type FROM r"}},
		{"creators", []string{"DROP TABLE creators", // strings that double
			"CREATE VIEW creators AS WITH RECURSIVE r(n, s) AS (SELECT 1, 'x' UNION ALL SELECT n+1, s||s FROM r WHERE n < 60) " +
				"SELECT (SELECT min(creatorID) FROM itemCreators) AS creatorID, s AS firstName, s AS lastName, 0 AS fieldMode FROM r"}},
		{"tags", []string{"ALTER TABLE tags RENAME TO tags_real", // spins
			"CREATE VIEW tags AS SELECT tagID, name FROM tags_real WHERE (" + forever + " SELECT count(*) FROM r) > 0"}},
		{"itemCreators", []string{"ALTER TABLE itemCreators RENAME TO ic", "CREATE VIEW itemCreators AS SELECT * FROM ic"}},
		{"collectionItems", []string{"ALTER TABLE collectionItems RENAME TO ci", "CREATE VIEW collectionItems AS SELECT * FROM ci"}},
		{"creatorTypes", []string{"ALTER TABLE creatorTypes RENAME TO ct", "CREATE VIEW creatorTypes AS SELECT * FROM ct"}},
		{"itemTags", []string{"DROP TABLE itemTags", // SQLite's names ignore case
			"CREATE VIEW ITEMTAGS AS " + forever + " SELECT (SELECT min(itemID) FROM items) AS itemID, 1 AS tagID, 0 AS type FROM r"}},
	} {
		t.Run(c.table, func(t *testing.T) {
			dir := craftedLibrary(t, c.stmts...)
			_, err := readBounded(t, dir)
			want := "not a Zotero database: " + c.table + " is a view, not a table"
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("err = %v, want %q", err, want)
			}
		})
	}
}

// A value far larger than any Zotero writes (a 50 MB title) is never
// loaded: the item is read without it, and the read allocates a fraction
// of it. A 4 MB abstract is cut, not refused.
func TestCraftedDatabaseHugeValue(t *testing.T) {
	dir := craftedLibrary(t,
		`UPDATE itemDataValues SET value = printf('%.*c', 50000000, 'x')
			WHERE valueID = (SELECT d.valueID FROM itemData d JOIN items i USING (itemID) JOIN fields f USING (fieldID)
			WHERE i.key = 'ITEMAAAA' AND f.fieldName = 'title')`,
		`UPDATE itemDataValues SET value = printf('%.*c', 4000000, 'y')
			WHERE valueID = (SELECT d.valueID FROM itemData d JOIN items i USING (itemID) JOIN fields f USING (fieldID)
			WHERE i.key = 'ITEMAAAA' AND f.fieldName = 'abstractNote')`)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	lib, err := readBounded(t, dir)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("reading allocated %d MB", (after.TotalAlloc-before.TotalAlloc)>>20)
	if n := after.TotalAlloc - before.TotalAlloc; n > 30<<20 {
		t.Errorf("reading allocated %d MB: the 50 MB value was loaded", n>>20)
	}
	if len(lib.Items) != 2 {
		t.Fatalf("%d items", len(lib.Items))
	}
	it := lib.Items[0]
	if it.ID != "ITEMAAAA" || strings.Contains(it.Title, "xxxx") || it.Authors[0].Family != "Lovelace" {
		t.Errorf("item: %s %.40q %v", it.ID, it.Title, it.Authors)
	}
	t.Logf("title %q, abstract of %d bytes", it.Title, len(it.Abstract))
	if len(it.Abstract) == 0 || len(it.Abstract) > 256<<10 {
		t.Errorf("abstract of %d bytes", len(it.Abstract))
	}
}

// Rows are capped per item (an item with 3,000 tags keeps 1,000) and per
// query (past the cap, the read stops with an error naming the table).
func TestCraftedDatabaseRowCaps(t *testing.T) {
	dir := craftedLibrary(t,
		`INSERT INTO tags (tagID, name) SELECT 1000 + value, 'tag ' || value FROM generate_series(1, 3000)`,
		`INSERT INTO itemTags (itemID, tagID, type) SELECT (SELECT itemID FROM items WHERE key = 'ITEMBBBB'), 1000 + value, 0 FROM generate_series(1, 3000)`)
	lib, err := readBounded(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range lib.Items {
		if it.ID == "ITEMBBBB" && len(it.Tags) != 1000 {
			t.Errorf("%d tags", len(it.Tags))
		}
	}
	defer zotero.SetMaxRows(2000)()
	if _, err := readBounded(t, dir); err == nil || !strings.Contains(err.Error(), "itemTags has more than 2000 rows") {
		t.Errorf("err = %v", err)
	}
}

// SQLite running out of memory makes its driver panic: the read fails
// with an error that says so, and the program goes on.
func TestCraftedDatabaseDriverPanicIsAnError(t *testing.T) {
	dir := craftedLibrary(t)
	defer zotero.LimitHeap(64 << 10)()
	_, err := readBounded(t, dir)
	if err == nil || !strings.Contains(err.Error(), "the SQLite driver failed") {
		t.Errorf("err = %v", err)
	}
}

// A read that takes longer than its time limit is stopped, and says so.
func TestCraftedDatabaseReadIsTimed(t *testing.T) {
	dir := craftedLibrary(t)
	defer zotero.SetReadTimeout(time.Nanosecond)()
	_, err := readBounded(t, dir)
	if want := fmt.Sprintf("took longer than %s", time.Nanosecond); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want %q", err, want)
	}
}

// A chain of 300 nested collections and a cycle of two: every collection
// the reader returns reaches the top within 64 parents, so whoever walks
// them (the command line builds their paths again) walks a bounded chain.
func TestCraftedDatabaseCollectionChains(t *testing.T) {
	t.Parallel()
	var cols []zoterotest.Collection
	for i := range 300 {
		c := zoterotest.Collection{Key: zoterotest.Key(i), Name: fmt.Sprintf("level %d", i)}
		if i > 0 {
			c.Parent = zoterotest.Key(i - 1)
		}
		cols = append(cols, c)
	}
	cols = append(cols, zoterotest.Collection{Key: "CYCLEAAA", Name: "A"}, zoterotest.Collection{Key: "CYCLEBBB", Name: "B", Parent: "CYCLEAAA"})
	dir := t.TempDir()
	if err := zoterotest.Build(dir, zoterotest.Library{Collections: cols}); err != nil {
		t.Fatal(err)
	}
	craft(t, dir, `UPDATE collections SET parentCollectionID = (SELECT collectionID FROM collections WHERE key = 'CYCLEBBB') WHERE key = 'CYCLEAAA'`)
	lib, err := readBounded(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	parent := map[string]string{}
	for _, c := range lib.Collections {
		parent[c.Key] = c.Parent
	}
	if len(parent) != len(cols) {
		t.Fatalf("%d collections, want %d", len(parent), len(cols))
	}
	for k := range parent {
		n := 0
		for p := parent[k]; p != ""; p = parent[p] {
			if n++; n > 64 {
				t.Fatalf("%s: more than 64 parents", k)
			}
		}
	}
}
