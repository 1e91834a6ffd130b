package zotero

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ncruces/go-sqlite3"

	"github.com/researchtui/researchtui/search/bib"
)

// A zotero.sqlite is read as untrusted input (doc.go, "A crafted
// database"): the limits on a read, the columns read through capped, and
// the check that every table queried is a table.

// Limits on reading a database, which may be crafted: a Zotero data folder
// is copied, synced and shared. They sit far above what Zotero writes (the
// largest libraries have some 50,000 items) and keep a hostile file to
// bounded time and memory.
const (
	maxItems       = bib.MaxItems // items of the library
	maxCollections = 20_000
	maxTextBytes   = 512 << 20 // bytes of text of all rows together
	maxFields      = 1_000     // fields of one item
	maxCreators    = 10_000    // creators of one item
	maxPerItem     = 1_000     // tags, collections or attachments of one item
	maxDepth       = 64        // collections nested in one another
	maxPathBytes   = 4 << 10   // of a collection's path ("A/B/C")
	// A value is read whole up to its cap (capped), cut to the cap up to
	// maxLoad bytes, and not read beyond: SQLite is never asked to load a
	// larger one, and sqliteMaxLength makes it refuse to (SQLITE_TOOBIG)
	// rather than run out of memory, which the driver answers with a panic.
	maxLoad         = 16 << 20
	sqliteMaxLength = 32 << 20
	maxValue        = 1 << 20 // a field's value
	maxName         = 1 << 10 // a name, tag, content type
	maxCollName     = 256     // a collection's name
	maxKey          = 64      // a key, type or field name
	maxPath         = 4 << 10 // an attachment's stored path
)

// maxRows caps the rows of any one query (a variable for tests).
var maxRows = 5_000_000

// limitConn sets the limits of a connection reading a database.
var limitConn = func(c *sqlite3.Conn) { c.Limit(sqlite3.LIMIT_LENGTH, sqliteMaxLength) }

// readTimeout bounds a whole read: no query of a crafted database may run
// for ever (the driver interrupts SQLite when the context ends).
var readTimeout = 3 * time.Minute

// capped is col as a query reads it: whole up to keep bytes, cut to keep
// characters up to maxLoad bytes, NULL beyond. octet_length reads a
// value's size from its record, without loading the value.
func capped(col string, keep int) string {
	return fmt.Sprintf("CASE WHEN octet_length(%[1]s) <= %[2]d THEN %[1]s WHEN octet_length(%[1]s) <= %[3]d THEN substr(%[1]s, 1, %[2]d) END", col, keep, maxLoad)
}

// requiredTables and optionalTables are every table the reader queries.
// Each must be a table: a view or a virtual table in its place would run
// what the database's author wrote (a recursive view never ends, or grows
// without bound) in a query that expects rows of a table.
var (
	requiredTables = []string{"items", "itemData", "itemDataValues", "libraries", "collections", "itemAttachments",
		"itemCreators", "creators", "creatorTypes", "itemTags", "tags", "collectionItems"}
	optionalTables = []string{"itemTypesCombined", "itemTypes", "fieldsCombined", "fields",
		"deletedItems", "deletedCollections", "syncDeleteLog"}
)

func (s *schema) inspect(ctx context.Context) error {
	s.tables = map[string]bool{}
	names := append(append([]string{}, requiredTables...), optionalTables...)
	args := make([]any, len(names))
	for i, n := range names {
		args[i] = strings.ToLower(n) // SQLite's names ignore case
	}
	//nolint:gosec // placeholders only
	q := `SELECT name, CASE WHEN type='table' AND sql LIKE 'CREATE VIRTUAL%' THEN 'virtual table' ELSE type END
		FROM sqlite_master WHERE lower(name) IN (?` + strings.Repeat(", ?", len(names)-1) + `)`
	kinds := map[string]string{}
	err := s.each(ctx, "sqlite_master", 100, q, func(sc scanner) error {
		var name, kind string
		if err := sc.Scan(&name, &kind); err != nil {
			return err
		}
		kinds[strings.ToLower(name)] = kind
		return nil
	}, args...)
	if err != nil {
		return err
	}
	for _, t := range names {
		switch kind, ok := kinds[strings.ToLower(t)]; {
		case kind == "table":
			s.tables[t] = true
		case ok:
			return fmt.Errorf("not a Zotero database: %s is %s, not a table", t, article(kind))
		}
	}
	for _, t := range requiredTables {
		if !s.tables[t] {
			return fmt.Errorf("not a Zotero database: it has no %s table", t)
		}
	}
	for _, pair := range [][2]string{{"itemTypesCombined", "itemTypes"}, {"fieldsCombined", "fields"}} {
		if !s.tables[pair[0]] && !s.tables[pair[1]] {
			return fmt.Errorf("not a Zotero database: it has no %s table", pair[1])
		}
	}
	var n int
	err = queryRow(ctx, s.db, "SELECT count(*) FROM pragma_table_info('libraries') WHERE name='clientVersion'", nil, &n)
	s.clientVersion = n > 0
	return err
}

// article is "a view", "an index".
func article(kind string) string {
	if kind != "" && strings.ContainsRune("aeiou", rune(kind[0])) {
		return "an " + kind
	}
	return "a " + kind
}

// spend counts the bytes of text read, refusing a database whose items
// hold more than maxTextBytes.
func (s *schema) spend(strs ...string) error {
	for _, v := range strs {
		s.text += len(v)
	}
	if s.text > maxTextBytes {
		return fmt.Errorf("not read: its items hold more than %d MB of text", maxTextBytes>>20)
	}
	return nil
}
