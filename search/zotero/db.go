package zotero

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ncruces/go-sqlite3"

	"github.com/researchtui/researchtui/search/bib"
)

// ErrLocked is the error of a database that Zotero has open: Zotero holds
// zotero.sqlite with an exclusive lock while it runs.
var ErrLocked = errors.New("Zotero is running and holds its database (zotero.sqlite) locked: " +
	"close Zotero and import again, or enable its local API (Settings → Advanced → " +
	"Allow other applications on this computer to communicate with Zotero) and use it: " +
	"researchtui library import zotero --api")

// DatabaseName is the file of Zotero's database in its data directory.
const DatabaseName = "zotero.sqlite"

// DefaultDataDir is where Zotero keeps its data unless told otherwise
// (Settings → Advanced → Files and Folders): ~/Zotero.
func DefaultDataDir() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return "Zotero"
	}
	return filepath.Join(home, "Zotero")
}

// DatabaseOptions are the rarely needed settings of ReadDatabaseWith.
type DatabaseOptions struct {
	// BaseDir is Zotero's "Linked Attachment Base Directory" (Settings →
	// Files and Folders) that linked files stored as "attachments:..." are
	// relative to; such files are left out when it is empty.
	BaseDir string
}

// ReadDatabase reads the user library from the zotero.sqlite in dataDir
// (Zotero's data directory, which also holds storage/ with the imported
// files) while Zotero is closed. It never writes: the file is opened read
// only, and neither a journal nor a WAL file is made beside it. While
// Zotero runs, it holds the database with an exclusive lock, and
// ReadDatabase returns an error that is ErrLocked.
//
// Library.Version is the library's version: Zotero 10 counts every local
// change in it (libraries.clientVersion); for a database of Zotero 7 to 9
// it is the version of the last sync, given only when nothing has changed
// since that sync (else 0: unknown).
func ReadDatabase(ctx context.Context, dataDir string) (Library, error) {
	return ReadDatabaseWith(ctx, dataDir, DatabaseOptions{})
}

// ReadDatabaseWith is ReadDatabase with options.
//
// The database is not trusted to be what Zotero writes (a data folder is
// copied, synced and shared): every table queried must be a table, not a
// view; rows, values and text are capped (see the limits below); the read
// is stopped after readTimeout; and a panic of the SQLite driver (which
// panics when SQLite runs out of memory) is an error.
func ReadDatabaseWith(ctx context.Context, dataDir string, opt DatabaseOptions) (lib Library, err error) {
	defer func() {
		if p := recover(); p != nil {
			lib, err = Library{}, fmt.Errorf("zotero: the SQLite driver failed on %s (%v): is it a database Zotero wrote?", DatabaseName, p)
		}
	}()
	dataDir, err = filepath.Abs(dataDir)
	if err != nil {
		return Library{}, fmt.Errorf("zotero: %w", err)
	}
	if opt.BaseDir != "" {
		if opt.BaseDir, err = filepath.Abs(opt.BaseDir); err != nil {
			return Library{}, fmt.Errorf("zotero: %w", err)
		}
	}
	path := filepath.Join(dataDir, DatabaseName)
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Library{}, fmt.Errorf("zotero: no %s in %s: is it Zotero's data directory (Settings → Advanced → Files and Folders)?", DatabaseName, dataDir)
		}
		return Library{}, fmt.Errorf("zotero: %w", err)
	}
	defer f.Close()
	wal, err := readHeader(f)
	if err != nil {
		return Library{}, fmt.Errorf("zotero: %s: %w", path, err)
	}
	// Take the lock a reader of SQLite takes, on this process's own file
	// descriptor: it fails while Zotero holds its exclusive lock, and
	// while it is held Zotero cannot start writing.
	unlock, immutable, err := lockFile(f)
	if err != nil {
		return Library{}, err
	}
	defer unlock()
	// With the lock held, the file is whole unless a write was cut off: a
	// rollback journal or a WAL with frames in it is left beside it, which
	// only Zotero should replay.
	for _, side := range []string{"-journal", "-wal"} {
		if st, err := os.Stat(path + side); err == nil && st.Size() > 0 && (side == "-journal" || wal) {
			return Library{}, fmt.Errorf("zotero: %s%s shows that Zotero did not close its database cleanly: start Zotero and close it once, then import again", DatabaseName, side)
		}
	}
	db, err := openReadOnly(path, immutable)
	if err != nil {
		return Library{}, fmt.Errorf("zotero: opening %s: %w", path, lockedOr(err))
	}
	defer closeConn(db)
	lib, err = readLibrary(ctx, db, dataDir, opt.BaseDir)
	if err != nil {
		return Library{}, fmt.Errorf("zotero: reading %s: %w", path, lockedOr(err))
	}
	return lib, nil
}

// lockFile is lockShared; tests put SQLite's own locking in its place.
var lockFile = lockShared

// readHeader checks the SQLite header and tells whether the database is
// in WAL mode (file format numbers 2).
func readHeader(f *os.File) (wal bool, err error) {
	var h [100]byte
	if _, err := io.ReadFull(f, h[:]); err != nil {
		return false, errors.New("not an SQLite database (too short)")
	}
	if !bytes.Equal(h[:16], []byte("SQLite format 3\x00")) {
		return false, errors.New("not an SQLite database")
	}
	return h[18] == 2 || h[19] == 2, nil
}

// lockedOr turns SQLite's "database is locked" (SQLITE_BUSY) into ErrLocked.
func lockedOr(err error) error {
	s := strings.ToLower(err.Error())
	if strings.Contains(s, "database is locked") || strings.Contains(s, "sqlite_busy") {
		return ErrLocked
	}
	return err
}

// userLibraryID is the libraryID of "My Library" in every Zotero database.
const userLibraryID = 1

func readLibrary(ctx context.Context, db *sqlite3.Conn, dataDir, baseDir string) (lib Library, err error) {
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	defer func() {
		if err != nil && parent.Err() == nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			lib, err = Library{}, fmt.Errorf("reading it took longer than %s, and was stopped: is it a database Zotero wrote?", readTimeout)
		}
	}()
	limitConn(db)
	// One read transaction: every query sees the same database.
	if err := db.Exec("BEGIN"); err != nil {
		return Library{}, err
	}
	defer db.Exec("ROLLBACK")   //nolint:errcheck // read only
	old := db.SetInterrupt(ctx) // SQLite stops a query when ctx ends
	defer db.SetInterrupt(old)
	s := schema{db: db}
	if err := s.inspect(ctx); err != nil {
		return Library{}, err
	}
	if lib.Version, err = s.version(ctx); err != nil {
		return lib, err
	}
	if lib.Collections, err = s.collections(ctx); err != nil {
		return lib, err
	}
	recs, err := s.items(ctx, dataDir, baseDir)
	if err != nil {
		return lib, err
	}
	paths := collectionPaths(lib.Collections)
	for _, r := range recs {
		lib.Items = append(lib.Items, r.item(paths))
	}
	return lib, nil
}

// schema reads the tables of a Zotero database, whichever of the versions
// since Zotero 5 wrote it.
type schema struct {
	db     *sqlite3.Conn
	tables map[string]bool
	// clientVersion: Zotero 10 counts local changes (libraries.clientVersion).
	clientVersion bool
	text          int // bytes of text read so far
}

// table is name, or the older fallback when the database lacks it.
func (s *schema) table(name, fallback string) string {
	if s.tables[name] {
		return name
	}
	return fallback
}

// notDeleted is a condition leaving out the items in the trash.
func (s *schema) notDeleted(col string) string {
	if !s.tables["deletedItems"] {
		return "1"
	}
	return col + " NOT IN (SELECT itemID FROM deletedItems)"
}

func (s *schema) version(ctx context.Context) (int, error) {
	if s.clientVersion {
		var v int
		err := queryRow(ctx, s.db, "SELECT clientVersion FROM libraries WHERE libraryID=?", []any{userLibraryID}, &v)
		if errors.Is(err, sql.ErrNoRows) {
			return 0, nil
		}
		return v, err
	}
	// Zotero 7 to 9: the version of the last sync, which says nothing of
	// what changed since, so it is only given when nothing did.
	var v, unsynced int
	err := queryRow(ctx, s.db, `SELECT version,
		(SELECT count(*) FROM items WHERE libraryID=?1 AND synced=0) +
		(SELECT count(*) FROM collections WHERE libraryID=?1 AND synced=0)
		FROM libraries WHERE libraryID=?1`, []any{userLibraryID}, &v, &unsynced)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if s.tables["syncDeleteLog"] {
		var deleted int
		if err := queryRow(ctx, s.db, "SELECT count(*) FROM syncDeleteLog WHERE libraryID=?", []any{userLibraryID}, &deleted); err != nil {
			return 0, err
		}
		unsynced += deleted
	}
	if unsynced > 0 {
		return 0, nil
	}
	return v, nil
}

func (s *schema) collections(ctx context.Context) ([]Collection, error) {
	q := "SELECT c.collectionID, " + capped("c.key", maxKey) + ", " + capped("c.collectionName", maxCollName) + `, c.parentCollectionID
		FROM collections c WHERE c.libraryID=?`
	type row struct {
		c      Collection
		parent sql.NullInt64
	}
	var all []row
	keys := map[int64]string{}
	err := s.each(ctx, "collections", maxCollections, q, func(sc scanner) error {
		var r row
		var id int64
		var key, name sql.NullString
		if err := sc.Scan(&id, &key, &name, &r.parent); err != nil {
			return err
		}
		if err := s.spend(key.String, name.String); err != nil {
			return err
		}
		r.c.Key = key.String
		r.c.Name = bib.CleanLine(name.String)
		keys[id] = r.c.Key
		all = append(all, r)
		return nil
	}, userLibraryID)
	if err != nil {
		return nil, err
	}
	trashed := map[string]bool{}
	if s.tables["deletedCollections"] {
		ids, err := s.ids(ctx, "deletedCollections", maxCollections, "SELECT collectionID FROM deletedCollections")
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			trashed[keys[id]] = true
		}
	}
	var out []Collection
	for _, r := range all {
		if r.parent.Valid {
			r.c.Parent = keys[r.parent.Int64]
		}
		out = append(out, r.c)
	}
	// A collection in the trash takes its sub-collections with it.
	parent := map[string]string{}
	for _, c := range out {
		parent[c.Key] = c.Parent
	}
	inTrash := func(k string) bool {
		for i := 0; k != "" && i <= maxDepth; i++ { // a chain (or a cycle) of a crafted database ends here
			if trashed[k] {
				return true
			}
			k = parent[k]
		}
		return false
	}
	kept := out[:0]
	for _, c := range out {
		if !inTrash(c.Key) {
			kept = append(kept, c)
		}
	}
	boundChains(kept)
	return kept, nil
}

func (s *schema) ids(ctx context.Context, table string, limit int, q string, args ...any) ([]int64, error) {
	var ids []int64
	err := s.each(ctx, table, limit, q, func(sc scanner) error {
		var id int64
		if err := sc.Scan(&id); err != nil {
			return err
		}
		ids = append(ids, id)
		return nil
	}, args...)
	return ids, err
}

func (s *schema) items(ctx context.Context, dataDir, baseDir string) ([]*record, error) {
	itemTypes := s.table("itemTypesCombined", "itemTypes")
	fields := s.table("fieldsCombined", "fields")
	byID := map[int64]*record{}
	var recs []*record

	//nolint:gosec // the table names are this code's (by the schema's version), values are bound
	query := `SELECT i.itemID, ` + capped("i.key", maxKey) + `, ` + capped("t.typeName", maxKey) + ` FROM items i
		JOIN ` + itemTypes + ` t ON t.itemTypeID=i.itemTypeID
		WHERE i.libraryID=? AND t.typeName NOT IN ('note', 'attachment', 'annotation') AND ` + s.notDeleted("i.itemID") + `
		ORDER BY i.dateAdded, i.itemID`
	err := s.each(ctx, "items", maxItems, query, func(sc scanner) error {
		var id int64
		var key, typ sql.NullString
		if err := sc.Scan(&id, &key, &typ); err != nil {
			return err
		}
		if err := s.spend(key.String, typ.String); err != nil {
			return err
		}
		r := &record{key: key.String, itemType: typ.String, fields: map[string]string{}}
		byID[id] = r
		recs = append(recs, r)
		return nil
	}, userLibraryID)
	if err != nil {
		return nil, err
	}

	//nolint:gosec // as above
	err = s.each(ctx, "itemData", maxRows, `SELECT d.itemID, `+capped("f.fieldName", maxKey)+`, `+capped("v.value", maxValue)+` FROM itemData d
		JOIN `+fields+` f ON f.fieldID=d.fieldID
		JOIN itemDataValues v ON v.valueID=d.valueID
		JOIN items i ON i.itemID=d.itemID WHERE i.libraryID=?`, func(sc scanner) error {
		var id int64
		var name, value sql.NullString
		if err := sc.Scan(&id); err != nil {
			return err
		}
		r := byID[id]
		if r == nil {
			return nil
		}
		if err := sc.Scan(&id, &name, &value); err != nil {
			return err
		}
		if _, ok := r.fields[name.String]; !ok && len(r.fields) >= maxFields {
			return nil
		}
		if err := s.spend(name.String, value.String); err != nil {
			return err
		}
		if name.String == "date" {
			var typed string
			r.parsedDate, typed = multipartSQL(value.String)
			r.fields["date"] = typed
			return nil
		}
		r.fields[name.String] = value.String
		return nil
	}, userLibraryID)
	if err != nil {
		return nil, err
	}

	err = s.each(ctx, "itemCreators", maxRows, `SELECT ic.itemID, `+capped("ct.creatorType", maxKey)+`, `+
		capped("c.firstName", maxName)+`, `+capped("c.lastName", maxName)+`, c.fieldMode FROM itemCreators ic
		JOIN creators c ON c.creatorID=ic.creatorID
		JOIN creatorTypes ct ON ct.creatorTypeID=ic.creatorTypeID
		JOIN items i ON i.itemID=ic.itemID WHERE i.libraryID=?
		ORDER BY ic.itemID, ic.orderIndex`, func(sc scanner) error {
		var id int64
		var typ, first, last sql.NullString
		var mode sql.NullInt64
		if err := sc.Scan(&id); err != nil { // the strings only when kept
			return err
		}
		r := byID[id]
		if r == nil || len(r.creators) >= maxCreators {
			return nil
		}
		if err := sc.Scan(&id, &typ, &first, &last, &mode); err != nil {
			return err
		}
		if err := s.spend(typ.String, first.String, last.String); err != nil {
			return err
		}
		c := creator{typ: typ.String, first: first.String, last: last.String}
		if mode.Int64 == 1 { // a single field: the name is in lastName
			c = creator{typ: typ.String, name: last.String}
		}
		r.creators = append(r.creators, c)
		return nil
	}, userLibraryID)
	if err != nil {
		return nil, err
	}

	err = s.each(ctx, "itemTags", maxRows, `SELECT it.itemID, `+capped("t.name", maxName)+` FROM itemTags it JOIN tags t ON t.tagID=it.tagID
		JOIN items i ON i.itemID=it.itemID WHERE i.libraryID=?`, func(sc scanner) error {
		var id int64
		var name sql.NullString
		if err := sc.Scan(&id); err != nil {
			return err
		}
		r := byID[id]
		if r == nil || len(r.tags) >= maxPerItem {
			return nil
		}
		if err := sc.Scan(&id, &name); err != nil {
			return err
		}
		if err := s.spend(name.String); err != nil {
			return err
		}
		r.tags = append(r.tags, name.String)
		return nil
	}, userLibraryID)
	if err != nil {
		return nil, err
	}

	err = s.each(ctx, "collectionItems", maxRows, `SELECT ci.itemID, `+capped("c.key", maxKey)+` FROM collectionItems ci
		JOIN collections c ON c.collectionID=ci.collectionID WHERE c.libraryID=?`, func(sc scanner) error {
		var id int64
		var key sql.NullString
		if err := sc.Scan(&id); err != nil {
			return err
		}
		r := byID[id]
		if r == nil || len(r.collections) >= maxPerItem {
			return nil
		}
		if err := sc.Scan(&id, &key); err != nil {
			return err
		}
		if err := s.spend(key.String); err != nil {
			return err
		}
		r.collections = append(r.collections, key.String)
		return nil
	}, userLibraryID)
	if err != nil {
		return nil, err
	}

	order := 0
	//nolint:gosec // as above
	err = s.each(ctx, "itemAttachments", maxRows, `SELECT a.parentItemID, `+capped("i.key", maxKey)+`, a.linkMode, `+
		capped("a.contentType", maxName)+`, `+capped("a.path", maxPath)+` FROM itemAttachments a
		JOIN items i ON i.itemID=a.itemID
		WHERE i.libraryID=? AND a.parentItemID IS NOT NULL AND `+s.notDeleted("a.itemID")+`
		ORDER BY i.dateAdded, i.itemID`, func(sc scanner) error {
		var parent sql.NullInt64
		var key sql.NullString
		var mode sql.NullInt64
		var ct, stored sql.NullString
		if err := sc.Scan(&parent, &key, &mode, &ct, &stored); err != nil {
			return err
		}
		r := byID[parent.Int64]
		if r == nil || !mode.Valid || len(r.files) >= maxPerItem {
			return nil
		}
		m := int(mode.Int64)
		if m == linkLinkedURL || m == linkEmbedded || fileKind(ct.String, stored.String) == 0 {
			return nil
		}
		if err := s.spend(ct.String, stored.String); err != nil {
			return err
		}
		if p := storedPath(m, stored.String, key.String, dataDir, baseDir); p != "" {
			order++
			r.files = append(r.files, file{path: p, contentType: ct.String, order: order})
		}
		return nil
	}, userLibraryID)
	if err != nil {
		return nil, err
	}
	return recs, nil
}

// each runs q and calls fn on every row; more than limit rows are refused
// (table names what they are rows of).
func (s *schema) each(ctx context.Context, table string, limit int, q string, fn func(scanner) error, args ...any) error {
	return query(ctx, s.db, table, limit, q, fn, args...)
}
