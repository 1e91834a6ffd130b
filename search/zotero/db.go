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
func ReadDatabaseWith(ctx context.Context, dataDir string, opt DatabaseOptions) (Library, error) {
	dataDir, err := filepath.Abs(dataDir)
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
	defer db.Close()
	lib, err := readLibrary(ctx, db, dataDir, opt.BaseDir)
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

func readLibrary(ctx context.Context, db *sql.DB, dataDir, baseDir string) (Library, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return Library{}, err
	}
	defer conn.Close()
	// One read transaction: every query sees the same database.
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return Library{}, err
	}
	defer tx.Rollback() //nolint:errcheck // read only
	s := schema{tx: tx}
	if err := s.inspect(ctx); err != nil {
		return Library{}, err
	}
	var lib Library
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
	tx     *sql.Tx
	tables map[string]bool
	// clientVersion: Zotero 10 counts local changes (libraries.clientVersion).
	clientVersion bool
}

func (s *schema) inspect(ctx context.Context) error {
	s.tables = map[string]bool{}
	rows, err := s.tx.QueryContext(ctx, "SELECT name FROM sqlite_master WHERE type='table'")
	if err != nil {
		return err
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return err
		}
		s.tables[name] = true
	}
	if err := rows.Close(); err != nil {
		return err
	}
	for _, t := range []string{"items", "itemData", "itemDataValues", "libraries", "collections", "itemAttachments"} {
		if !s.tables[t] {
			return fmt.Errorf("not a Zotero database: it has no %s table", t)
		}
	}
	var n int
	err = s.tx.QueryRowContext(ctx, "SELECT count(*) FROM pragma_table_info('libraries') WHERE name='clientVersion'").Scan(&n)
	s.clientVersion = n > 0
	return err
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
		err := s.tx.QueryRowContext(ctx, "SELECT clientVersion FROM libraries WHERE libraryID=?", userLibraryID).Scan(&v)
		if errors.Is(err, sql.ErrNoRows) {
			return 0, nil
		}
		return v, err
	}
	// Zotero 7 to 9: the version of the last sync, which says nothing of
	// what changed since, so it is only given when nothing did.
	var v, unsynced int
	err := s.tx.QueryRowContext(ctx, `SELECT version,
		(SELECT count(*) FROM items WHERE libraryID=?1 AND synced=0) +
		(SELECT count(*) FROM collections WHERE libraryID=?1 AND synced=0)
		FROM libraries WHERE libraryID=?1`, userLibraryID).Scan(&v, &unsynced)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if s.tables["syncDeleteLog"] {
		var deleted int
		if err := s.tx.QueryRowContext(ctx, "SELECT count(*) FROM syncDeleteLog WHERE libraryID=?", userLibraryID).Scan(&deleted); err != nil {
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
	q := "SELECT c.collectionID, c.key, c.collectionName, c.parentCollectionID FROM collections c WHERE c.libraryID=?"
	rows, err := s.tx.QueryContext(ctx, q, userLibraryID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	type row struct {
		c      Collection
		parent sql.NullInt64
	}
	var all []row
	keys := map[int64]string{}
	for rows.Next() {
		var r row
		var id int64
		var name sql.NullString
		if err := rows.Scan(&id, &r.c.Key, &name, &r.parent); err != nil {
			return nil, err
		}
		r.c.Name = bib.CleanLine(name.String)
		keys[id] = r.c.Key
		all = append(all, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	trashed := map[string]bool{}
	if s.tables["deletedCollections"] {
		ids, err := s.ids(ctx, "SELECT collectionID FROM deletedCollections")
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
		for i := 0; k != "" && i < len(out)+1; i++ {
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
	return kept, nil
}

func (s *schema) ids(ctx context.Context, q string, args ...any) ([]int64, error) {
	rows, err := s.tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

func (s *schema) items(ctx context.Context, dataDir, baseDir string) ([]*record, error) {
	itemTypes := s.table("itemTypesCombined", "itemTypes")
	fields := s.table("fieldsCombined", "fields")
	byID := map[int64]*record{}
	var recs []*record

	//nolint:gosec // the table names are this code's (by the schema's version), values are bound
	query := `SELECT i.itemID, i.key, t.typeName FROM items i
		JOIN ` + itemTypes + ` t ON t.itemTypeID=i.itemTypeID
		WHERE i.libraryID=? AND t.typeName NOT IN ('note', 'attachment', 'annotation') AND ` + s.notDeleted("i.itemID") + `
		ORDER BY i.dateAdded, i.itemID`
	rows, err := s.tx.QueryContext(ctx, query, userLibraryID)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var id int64
		r := &record{fields: map[string]string{}}
		if err := rows.Scan(&id, &r.key, &r.itemType); err != nil {
			rows.Close()
			return nil, err
		}
		byID[id] = r
		recs = append(recs, r)
	}
	if err := closeRows(rows); err != nil {
		return nil, err
	}

	err = s.each(ctx, `SELECT d.itemID, f.fieldName, v.value FROM itemData d
		JOIN `+fields+` f ON f.fieldID=d.fieldID
		JOIN itemDataValues v ON v.valueID=d.valueID
		JOIN items i ON i.itemID=d.itemID WHERE i.libraryID=?`, func(sc scanner) error {
		var id int64
		var name, value sql.NullString
		if err := sc.Scan(&id, &name, &value); err != nil {
			return err
		}
		if r := byID[id]; r != nil {
			if name.String == "date" {
				var typed string
				r.parsedDate, typed = multipartSQL(value.String)
				r.fields["date"] = typed
				return nil
			}
			r.fields[name.String] = value.String
		}
		return nil
	}, userLibraryID)
	if err != nil {
		return nil, err
	}

	err = s.each(ctx, `SELECT ic.itemID, ct.creatorType, c.firstName, c.lastName, c.fieldMode FROM itemCreators ic
		JOIN creators c ON c.creatorID=ic.creatorID
		JOIN creatorTypes ct ON ct.creatorTypeID=ic.creatorTypeID
		JOIN items i ON i.itemID=ic.itemID WHERE i.libraryID=?
		ORDER BY ic.itemID, ic.orderIndex`, func(sc scanner) error {
		var id int64
		var typ, first, last sql.NullString
		var mode sql.NullInt64
		if err := sc.Scan(&id, &typ, &first, &last, &mode); err != nil {
			return err
		}
		if r := byID[id]; r != nil {
			c := creator{typ: typ.String, first: first.String, last: last.String}
			if mode.Int64 == 1 { // a single field: the name is in lastName
				c = creator{typ: typ.String, name: last.String}
			}
			r.creators = append(r.creators, c)
		}
		return nil
	}, userLibraryID)
	if err != nil {
		return nil, err
	}

	err = s.each(ctx, `SELECT it.itemID, t.name FROM itemTags it JOIN tags t ON t.tagID=it.tagID
		JOIN items i ON i.itemID=it.itemID WHERE i.libraryID=?`, func(sc scanner) error {
		var id int64
		var name sql.NullString
		if err := sc.Scan(&id, &name); err != nil {
			return err
		}
		if r := byID[id]; r != nil {
			r.tags = append(r.tags, name.String)
		}
		return nil
	}, userLibraryID)
	if err != nil {
		return nil, err
	}

	err = s.each(ctx, `SELECT ci.itemID, c.key FROM collectionItems ci
		JOIN collections c ON c.collectionID=ci.collectionID WHERE c.libraryID=?`, func(sc scanner) error {
		var id int64
		var key string
		if err := sc.Scan(&id, &key); err != nil {
			return err
		}
		if r := byID[id]; r != nil {
			r.collections = append(r.collections, key)
		}
		return nil
	}, userLibraryID)
	if err != nil {
		return nil, err
	}

	order := 0
	err = s.each(ctx, `SELECT a.parentItemID, i.key, a.linkMode, a.contentType, a.path FROM itemAttachments a
		JOIN items i ON i.itemID=a.itemID
		WHERE i.libraryID=? AND a.parentItemID IS NOT NULL AND `+s.notDeleted("a.itemID")+`
		ORDER BY i.dateAdded, i.itemID`, func(sc scanner) error {
		var parent sql.NullInt64
		var key string
		var mode sql.NullInt64
		var ct, stored sql.NullString
		if err := sc.Scan(&parent, &key, &mode, &ct, &stored); err != nil {
			return err
		}
		r := byID[parent.Int64]
		if r == nil || !mode.Valid {
			return nil
		}
		m := int(mode.Int64)
		if m == linkLinkedURL || m == linkEmbedded || fileKind(ct.String, stored.String) == 0 {
			return nil
		}
		if p := storedPath(m, stored.String, key, dataDir, baseDir); p != "" {
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

type scanner interface{ Scan(dest ...any) error }

// each runs q and calls fn on every row.
func (s *schema) each(ctx context.Context, q string, fn func(scanner) error, args ...any) error {
	rows, err := s.tx.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	for rows.Next() {
		if err := fn(rows); err != nil {
			rows.Close()
			return err
		}
	}
	return closeRows(rows)
}

func closeRows(rows *sql.Rows) error {
	err := rows.Err()
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	return err
}
