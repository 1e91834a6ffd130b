// Package zoterotest builds Zotero data directories for tests: a
// zotero.sqlite made from Zotero's own schema files (testdata/, see
// testdata/ATTRIBUTION.md) and a storage/ folder with the imported files,
// as Zotero itself lays them out. Items can then be changed, trashed and
// deleted the way Zotero does it, versions bumped, so that a test can
// import a library, change it and import it again.
//
// It writes the database; package zotero only ever reads one.
package zoterotest

import (
	"context"
	"database/sql"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	_ "github.com/ncruces/go-sqlite3/driver"
)

// Zotero's schema files, from the zotero/zotero repository (the SQL) and
// zotero/zotero-schema (the item types and fields Zotero ships, cut down
// to them): see testdata/ATTRIBUTION.md.
var (
	//go:embed testdata/system.sql
	systemSQL string
	//go:embed testdata/userdata.sql
	userdataSQL string
	//go:embed testdata/userdata-125.sql
	userdataLegacySQL string
	//go:embed testdata/triggers.sql
	triggersSQL string
	//go:embed testdata/schema.json
	schemaJSON []byte
)

// Library is what Build puts in a data directory.
type Library struct {
	Collections []Collection
	Items       []Entry
	// Notes are standalone notes and Attachments standalone attachments
	// (no parent item): a reader leaves them out.
	Notes       []string
	Attachments []Attachment
	// Legacy builds the database as Zotero 7 to 9 write it: a rollback
	// journal, no clientVersion columns (userdata schema 125); Zotero 10's
	// (userdata 129, WAL) otherwise.
	Legacy bool
	// SyncedVersion is, for a Legacy database, the version of the last sync
	// (libraries.version); with it, everything built counts as synced.
	SyncedVersion int
}

// Collection is one collection; Parent is the key of its parent.
type Collection struct {
	Key, Name, Parent string
	Trashed           bool
}

// Entry is one regular item (a work).
type Entry struct {
	// Key is the item key; one is made up when empty.
	Key string
	// Type is the Zotero item type ("journalArticle", "book", ...).
	Type string
	// Fields are the item's fields by Zotero's names ("title", "DOI",
	// "publicationTitle", "date", "extra"...). A base field name stands
	// for the type's own field ("publicationTitle" is a conference paper's
	// "proceedingsTitle"). A date is stored as Zotero stores it, parsed.
	Fields map[string]string
	// Creators in order.
	Creators []Creator
	// Tags and Collections (collection keys).
	Tags        []string
	Collections []string
	// Attachments and Notes are the item's children.
	Attachments []Attachment
	Notes       []string
	// Trashed puts the item in the trash.
	Trashed bool
	// Added is when the item was added; a time after the items before it
	// when zero.
	Added time.Time
}

// Creator is a person (First and Last) or, with Name, a single-field name.
type Creator struct {
	Type        string // "author" when empty
	First, Last string
	Name        string
}

// Attachment is a child (or standalone) attachment.
type Attachment struct {
	// Key is the attachment's key; one is made up when empty.
	Key string
	// Mode is "imported_file" (the default), "imported_url" (a snapshot),
	// "linked_file" or "linked_url".
	Mode string
	// ContentType is the MIME type; from the file name when empty.
	ContentType string
	// Filename is an imported file's name in storage/<Key>/.
	Filename string
	// Content is an imported file's bytes; a PDF naming the file when nil.
	Content []byte
	// Path is a linked file's path as Zotero stores it: absolute, or
	// "attachments:<path>" relative to the linked attachment base directory.
	Path string
	// URL is a link's (or a snapshot's) URL.
	URL string
	// Title is the attachment's title; "Full Text PDF" or the like when empty.
	Title   string
	Trashed bool
}

// DatabaseName is the database's file name in a data directory.
const DatabaseName = "zotero.sqlite"

// Build makes a Zotero data directory in dir: zotero.sqlite holding lib,
// and storage/ with the imported files. An existing database in dir is
// replaced.
func Build(dir string, lib Library) error {
	if err := os.MkdirAll(filepath.Join(dir, "storage"), 0o755); err != nil {
		return err
	}
	dbPath := filepath.Join(dir, DatabaseName)
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		if err := os.Remove(dbPath + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	journal := "wal"
	if lib.Legacy {
		journal = "delete"
	}
	db, err := open(dbPath, journal)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx := context.Background()
	if err := initSchema(ctx, db, lib.Legacy); err != nil {
		return fmt.Errorf("zoterotest: schema: %w", err)
	}
	return save(ctx, db, dir, func(s *session) error {
		if lib.Legacy && lib.SyncedVersion > 0 {
			s.synced = true
			if _, err := s.tx.Exec("UPDATE libraries SET version=?, lastSync=1 WHERE libraryID=1", lib.SyncedVersion); err != nil {
				return err
			}
		}
		if err := s.addCollections(lib.Collections); err != nil {
			return err
		}
		for _, e := range lib.Items {
			if err := s.addItem(e); err != nil {
				return err
			}
		}
		for _, n := range lib.Notes {
			if _, err := s.addNote(0, n); err != nil {
				return err
			}
		}
		for _, a := range lib.Attachments {
			if err := s.addAttachment(0, a); err != nil {
				return err
			}
		}
		return nil
	})
}

// Update replaces the item with e.Key (its fields, creators, tags,
// collections and children) or adds e when there is none, in one
// transaction that bumps the library's version, as an edit in Zotero does.
func Update(dir string, e Entry) error {
	if e.Type == "" {
		e.Type = "journalArticle"
	}
	return change(dir, func(s *session) error {
		id, err := s.itemID(e.Key)
		if err != nil {
			return err
		}
		if id == 0 {
			return s.addItem(e)
		}
		if err := s.eraseChildren(id); err != nil {
			return err
		}
		for _, q := range []string{"DELETE FROM itemData WHERE itemID=?", "DELETE FROM itemCreators WHERE itemID=?",
			"DELETE FROM itemTags WHERE itemID=?", "DELETE FROM collectionItems WHERE itemID=?", "DELETE FROM deletedItems WHERE itemID=?"} {
			if _, err := s.tx.Exec(q, id); err != nil {
				return err
			}
		}
		typeID, ok := s.itemTypes[e.Type]
		if !ok {
			return fmt.Errorf("zoterotest: unknown item type %q", e.Type)
		}
		if _, err := s.tx.Exec("UPDATE items SET itemTypeID=?, dateModified=?, clientDateModified=?, synced=0 WHERE itemID=?",
			typeID, s.now, s.now, id); err != nil {
			return err
		}
		if err := s.touch("items", "itemID", id); err != nil {
			return err
		}
		return s.fillItem(id, e)
	})
}

// Trash moves the item with key to the trash.
func Trash(dir, key string) error {
	return change(dir, func(s *session) error {
		id, err := s.mustItemID(key)
		if err != nil {
			return err
		}
		if _, err := s.tx.Exec("INSERT OR IGNORE INTO deletedItems (itemID) VALUES (?)", id); err != nil {
			return err
		}
		if _, err := s.tx.Exec("UPDATE items SET synced=0 WHERE itemID=?", id); err != nil {
			return err
		}
		return s.touch("items", "itemID", id)
	})
}

// Delete erases the item with key and its children, files included, as
// Zotero does when the trash is emptied: the rows go, the key is logged
// in syncDeleteLog, and the library's version is bumped.
func Delete(dir, key string) error {
	return change(dir, func(s *session) error {
		id, err := s.mustItemID(key)
		if err != nil {
			return err
		}
		if err := s.eraseChildren(id); err != nil {
			return err
		}
		return s.erase(id, key)
	})
}

// Version is the library's version as a reader sees it: clientVersion
// (Zotero 10), or the synced version of a legacy database.
func Version(dir string) (int, error) {
	db, err := open(filepath.Join(dir, DatabaseName), "")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var v int
	err = db.QueryRow("SELECT clientVersion FROM libraries WHERE libraryID=1").Scan(&v)
	if err != nil {
		err = db.QueryRow("SELECT version FROM libraries WHERE libraryID=1").Scan(&v)
	}
	return v, err
}

// open opens (creating) a database for writing; journal "" keeps its mode.
func open(dbPath, journal string) (*sql.DB, error) {
	abs, err := filepath.Abs(dbPath)
	if err != nil {
		return nil, err
	}
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // C:/x is file:///C:/x
	}
	q := "?_pragma=foreign_keys(1)&_pragma=busy_timeout(10000)"
	if journal != "" {
		q += "&_pragma=journal_mode(" + journal + ")"
	}
	db, err := sql.Open("sqlite3", (&url.URL{Scheme: "file", Path: p}).String()+q)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// initSchema does what Zotero does for a new database
// (Zotero.Schema._initializeSchema, chrome/content/zotero/xpcom/schema.js):
// the system, userdata and triggers SQL, then the item types, fields and
// creator types of schema.json (_updateGlobalSchema) and the "Combined"
// tables custom types join (_updateCustomTables), then the user library.
func initSchema(ctx context.Context, db *sql.DB, legacy bool) error {
	userdata := userdataSQL
	if legacy {
		userdata = userdataLegacySQL
	}
	if _, err := db.ExecContext(ctx, "PRAGMA page_size=4096"); err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit
	for _, s := range []string{systemSQL, userdata, triggersSQL} {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	var gs struct {
		Version   int `json:"version"`
		ItemTypes []struct {
			ItemType string `json:"itemType"`
			Fields   []struct {
				Field     string `json:"field"`
				BaseField string `json:"baseField"`
			} `json:"fields"`
			CreatorTypes []struct {
				CreatorType string `json:"creatorType"`
				Primary     bool   `json:"primary"`
			} `json:"creatorTypes"`
		} `json:"itemTypes"`
	}
	if err := json.Unmarshal(schemaJSON, &gs); err != nil {
		return err
	}
	fieldIDs := map[string]int{}
	creatorIDs := map[string]int{}
	fieldID := func(name string) (int, error) {
		if id, ok := fieldIDs[name]; ok {
			return id, nil
		}
		id := len(fieldIDs) + 1
		fieldIDs[name] = id
		_, err := tx.ExecContext(ctx, "INSERT INTO fields VALUES (?, ?, NULL)", id, name)
		return id, err
	}
	for i, t := range gs.ItemTypes {
		typeID := i + 1
		if _, err := tx.ExecContext(ctx, "INSERT INTO itemTypes VALUES (?, ?, NULL, 1)", typeID, t.ItemType); err != nil {
			return err
		}
		for j, f := range t.Fields {
			id, err := fieldID(f.Field)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, "INSERT INTO itemTypeFields VALUES (?, ?, 0, ?)", typeID, id, j); err != nil {
				return err
			}
			if f.BaseField != "" {
				base, err := fieldID(f.BaseField)
				if err != nil {
					return err
				}
				if _, err := tx.ExecContext(ctx, "INSERT INTO baseFieldMappings VALUES (?, ?, ?)", typeID, base, id); err != nil {
					return err
				}
			}
		}
		for _, c := range t.CreatorTypes {
			id, ok := creatorIDs[c.CreatorType]
			if !ok {
				id = len(creatorIDs) + 1
				creatorIDs[c.CreatorType] = id
				if _, err := tx.ExecContext(ctx, "INSERT INTO creatorTypes VALUES (?, ?)", id, c.CreatorType); err != nil {
					return err
				}
			}
			primary := 0
			if c.Primary {
				primary = 1
			}
			if _, err := tx.ExecContext(ctx, "INSERT INTO itemTypeCreatorTypes VALUES (?, ?, ?)", typeID, id, primary); err != nil {
				return err
			}
		}
	}
	const offset = 10000 // Zotero.ItemTypes.customIDOffset
	for _, q := range []string{
		"INSERT INTO itemTypesCombined SELECT itemTypeID, typeName, display, 0 AS custom FROM itemTypes UNION " +
			"SELECT customItemTypeID + " + strconv.Itoa(offset) + " AS itemTypeID, typeName, display, 1 AS custom FROM customItemTypes",
		"INSERT INTO fieldsCombined SELECT fieldID, fieldName, NULL AS label, fieldFormatID, 0 AS custom FROM fields UNION " +
			"SELECT customFieldID + " + strconv.Itoa(offset) + " AS fieldID, fieldName, label, NULL, 1 AS custom FROM customFields",
		"INSERT INTO itemTypeFieldsCombined SELECT itemTypeID, fieldID, hide, orderIndex FROM itemTypeFields",
		"INSERT INTO baseFieldMappingsCombined SELECT itemTypeID, baseFieldID, fieldID FROM baseFieldMappings",
		"INSERT INTO libraries (libraryID, type, editable, filesEditable) VALUES (1, 'user', 1, 1)",
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	versions := map[string]int{"globalSchema": gs.Version}
	for name, s := range map[string]string{"system": systemSQL, "userdata": userdata, "triggers": triggersSQL} {
		first, _, _ := strings.Cut(s, "\n")
		v, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(first, "--")))
		if err != nil {
			return fmt.Errorf("%s.sql has no version line: %q", name, first)
		}
		versions[name] = v
	}
	for name, v := range versions {
		if _, err := tx.ExecContext(ctx, "REPLACE INTO version VALUES (?, ?)", name, v); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// session is one write transaction on a built database.
type session struct {
	tx     *sql.Tx
	dir    string
	now    string
	legacy bool
	synced bool // a legacy build that counts as synced
	// version is the library's new version (Zotero 10), bumped once per
	// transaction as Zotero does (Zotero.Library.incrementClientVersion).
	version    int
	itemTypes  map[string]int
	fields     map[string]int         // field name → fieldID
	typeFields map[int]map[int]bool   // itemTypeID → its fieldIDs
	baseFields map[int]map[string]int // itemTypeID → base field name → the type's fieldID
	creators   map[string]int         // creator type → creatorTypeID
	keys       map[string]bool        // keys in use
	nextKey    int
	added      time.Time
	files      []func() error // files to write once committed
}

func change(dir string, fn func(*session) error) error {
	db, err := open(filepath.Join(dir, DatabaseName), "")
	if err != nil {
		return err
	}
	defer db.Close()
	return save(context.Background(), db, dir, fn)
}

func save(ctx context.Context, db *sql.DB, dir string, fn func(*session) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit
	s := &session{tx: tx, dir: dir, now: time.Now().UTC().Format(time.DateTime)}
	if err := s.load(); err != nil {
		return err
	}
	if err := fn(s); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	for _, w := range s.files {
		if err := w(); err != nil {
			return err
		}
	}
	return nil
}

func (s *session) load() error {
	var n int
	if err := s.tx.QueryRow("SELECT count(*) FROM pragma_table_info('libraries') WHERE name='clientVersion'").Scan(&n); err != nil {
		return err
	}
	s.legacy = n == 0
	if !s.legacy {
		if _, err := s.tx.Exec("UPDATE libraries SET clientVersion=clientVersion+1 WHERE libraryID=1"); err != nil {
			return err
		}
		if err := s.tx.QueryRow("SELECT clientVersion FROM libraries WHERE libraryID=1").Scan(&s.version); err != nil {
			return err
		}
	}
	s.itemTypes = map[string]int{}
	if err := s.rows("SELECT typeName, itemTypeID FROM itemTypes", func(r *sql.Rows) error {
		var name string
		var id int
		err := r.Scan(&name, &id)
		s.itemTypes[name] = id
		return err
	}); err != nil {
		return err
	}
	s.fields = map[string]int{}
	if err := s.rows("SELECT fieldName, fieldID FROM fields", func(r *sql.Rows) error {
		var name string
		var id int
		err := r.Scan(&name, &id)
		s.fields[name] = id
		return err
	}); err != nil {
		return err
	}
	s.typeFields = map[int]map[int]bool{}
	if err := s.rows("SELECT itemTypeID, fieldID FROM itemTypeFields", func(r *sql.Rows) error {
		var t, f int
		err := r.Scan(&t, &f)
		if s.typeFields[t] == nil {
			s.typeFields[t] = map[int]bool{}
		}
		s.typeFields[t][f] = true
		return err
	}); err != nil {
		return err
	}
	s.baseFields = map[int]map[string]int{}
	if err := s.rows("SELECT m.itemTypeID, f.fieldName, m.fieldID FROM baseFieldMappings m JOIN fields f ON f.fieldID=m.baseFieldID", func(r *sql.Rows) error {
		var t, f int
		var base string
		err := r.Scan(&t, &base, &f)
		if s.baseFields[t] == nil {
			s.baseFields[t] = map[string]int{}
		}
		s.baseFields[t][base] = f
		return err
	}); err != nil {
		return err
	}
	s.creators = map[string]int{}
	if err := s.rows("SELECT creatorType, creatorTypeID FROM creatorTypes", func(r *sql.Rows) error {
		var name string
		var id int
		err := r.Scan(&name, &id)
		s.creators[name] = id
		return err
	}); err != nil {
		return err
	}
	s.keys = map[string]bool{}
	if err := s.rows("SELECT key FROM items UNION SELECT key FROM collections", func(r *sql.Rows) error {
		var k string
		err := r.Scan(&k)
		s.keys[k] = true
		return err
	}); err != nil {
		return err
	}
	var last sql.NullString
	if err := s.tx.QueryRow("SELECT max(dateAdded) FROM items").Scan(&last); err != nil {
		return err
	}
	s.added = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	if t, err := time.Parse(time.DateTime, last.String); err == nil {
		s.added = t
	}
	return nil
}

func (s *session) rows(q string, fn func(*sql.Rows) error) error {
	rows, err := s.tx.Query(q)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// key is k, or a new key when k is empty.
func (s *session) key(k string) (string, error) {
	if k != "" {
		if !keyPattern.MatchString(k) {
			return "", fmt.Errorf("zoterotest: %q is not a Zotero key (8 of %s)", k, keyChars)
		}
		if s.keys[k] {
			return "", fmt.Errorf("zoterotest: key %s is used twice", k)
		}
		s.keys[k] = true
		return k, nil
	}
	for {
		s.nextKey++
		k = Key(s.nextKey + 500_000)
		if !s.keys[k] {
			s.keys[k] = true
			return k, nil
		}
	}
}

const keyChars = "23456789ABCDEFGHIJKLMNPQRSTUVWXYZ"

var keyPattern = regexp.MustCompile(`^[23456789ABCDEFGHIJKLMNPQRSTUVWXYZ]{8}$`)

// Key is the i-th of a run of valid Zotero keys: tests name items with it.
func Key(i int) string {
	b := make([]byte, 8)
	n := i
	if n < 0 {
		n = -n
	}
	for j := 7; j >= 0; j-- {
		b[j] = keyChars[n%len(keyChars)]
		n /= len(keyChars)
	}
	return string(b)
}

// touch gives an object the transaction's version, as Zotero's save does.
func (s *session) touch(table, idCol string, id int64) error {
	if s.legacy {
		return nil
	}
	_, err := s.tx.Exec("UPDATE "+table+" SET clientVersion=? WHERE "+idCol+"=?", s.version, id) //nolint:gosec // names from the code, values bound
	return err
}

func (s *session) syncedFlag() int {
	if s.synced {
		return 1
	}
	return 0
}

func (s *session) addCollections(cols []Collection) error {
	ids := map[string]int64{}
	if err := s.rows("SELECT key, collectionID FROM collections", func(r *sql.Rows) error {
		var k string
		var id int64
		err := r.Scan(&k, &id)
		ids[k] = id
		return err
	}); err != nil {
		return err
	}
	// Parents first, whatever the order given.
	pending := slices.Clone(cols)
	for len(pending) > 0 {
		var next []Collection
		for _, c := range pending {
			var parent any
			if c.Parent != "" {
				id, ok := ids[c.Parent]
				if !ok {
					next = append(next, c)
					continue
				}
				parent = id
			}
			key, err := s.key(c.Key)
			if err != nil {
				return err
			}
			res, err := s.tx.Exec(`INSERT INTO collections (collectionName, parentCollectionID, clientDateModified, libraryID, key, version, synced)
				VALUES (?, ?, ?, 1, ?, 0, ?)`, c.Name, parent, s.now, key, s.syncedFlag())
			if err != nil {
				return err
			}
			id, err := res.LastInsertId()
			if err != nil {
				return err
			}
			if err := s.touch("collections", "collectionID", id); err != nil {
				return err
			}
			if c.Trashed {
				if _, err := s.tx.Exec("INSERT INTO deletedCollections (collectionID) VALUES (?)", id); err != nil {
					return err
				}
			}
			ids[key] = id
		}
		if len(next) == len(pending) {
			return fmt.Errorf("zoterotest: collection %s has a parent that is not in the library", next[0].Key)
		}
		pending = next
	}
	return nil
}

// insertItem adds a row to items.
func (s *session) insertItem(itemType, key string, added time.Time) (int64, error) {
	typeID, ok := s.itemTypes[itemType]
	if !ok {
		return 0, fmt.Errorf("zoterotest: unknown item type %q", itemType)
	}
	if added.IsZero() {
		s.added = s.added.Add(time.Second)
		added = s.added
	}
	a := added.UTC().Format(time.DateTime)
	res, err := s.tx.Exec(`INSERT INTO items (itemTypeID, dateAdded, dateModified, clientDateModified, libraryID, key, version, synced)
		VALUES (?, ?, ?, ?, 1, ?, 0, ?)`, typeID, a, a, s.now, key, s.syncedFlag())
	if err != nil {
		return 0, err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, err
	}
	return id, s.touch("items", "itemID", id)
}

func (s *session) addItem(e Entry) error {
	if e.Type == "" {
		e.Type = "journalArticle"
	}
	if e.Type == "note" || e.Type == "attachment" || e.Type == "annotation" {
		return fmt.Errorf("zoterotest: an Entry is a regular item, not a %s", e.Type)
	}
	key, err := s.key(e.Key)
	if err != nil {
		return err
	}
	e.Key = key
	id, err := s.insertItem(e.Type, key, e.Added)
	if err != nil {
		return err
	}
	return s.fillItem(id, e)
}

// fillItem writes an item's data, creators, tags, collections, trash and
// children.
func (s *session) fillItem(id int64, e Entry) error {
	typeID := s.itemTypes[e.Type]
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range e.Fields {
			if !yield(k) {
				return
			}
		}
	})
	for _, name := range names {
		v := e.Fields[name]
		if v == "" {
			continue
		}
		fid, ok := s.baseFields[typeID][name]
		if !ok {
			fid, ok = s.fields[name]
			if !ok || !s.typeFields[typeID][fid] {
				return fmt.Errorf("zoterotest: %s has no field %q", e.Type, name)
			}
		}
		if name == "date" || s.isDateField(fid) {
			v = multipart(v)
		}
		if err := s.setField(id, fid, v); err != nil {
			return err
		}
	}
	for i, c := range e.Creators {
		if err := s.addCreator(id, i, c); err != nil {
			return err
		}
	}
	for _, t := range e.Tags {
		if _, err := s.tx.Exec("INSERT OR IGNORE INTO tags (name) VALUES (?)", t); err != nil {
			return err
		}
		if _, err := s.tx.Exec("INSERT OR IGNORE INTO itemTags (itemID, tagID, type) SELECT ?, tagID, 0 FROM tags WHERE name=?", id, t); err != nil {
			return err
		}
	}
	for i, k := range e.Collections {
		res, err := s.tx.Exec("INSERT INTO collectionItems (collectionID, itemID, orderIndex) SELECT collectionID, ?, ? FROM collections WHERE key=?", id, i, k)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("zoterotest: no collection %s for item %s", k, e.Key)
		}
	}
	for _, a := range e.Attachments {
		if err := s.addAttachment(id, a); err != nil {
			return err
		}
	}
	for _, n := range e.Notes {
		if _, err := s.addNote(id, n); err != nil {
			return err
		}
	}
	if e.Trashed {
		if _, err := s.tx.Exec("INSERT INTO deletedItems (itemID) VALUES (?)", id); err != nil {
			return err
		}
	}
	return nil
}

func (s *session) isDateField(fid int) bool {
	for _, name := range []string{"dateDecided", "dateEnacted", "issueDate", "filingDate", "originalDate", "priorityDate"} {
		if s.fields[name] == fid {
			return true
		}
	}
	return false
}

func (s *session) setField(itemID int64, fieldID int, value string) error {
	if _, err := s.tx.Exec("INSERT OR IGNORE INTO itemDataValues (value) VALUES (?)", value); err != nil {
		return err
	}
	_, err := s.tx.Exec("INSERT INTO itemData (itemID, fieldID, valueID) SELECT ?, ?, valueID FROM itemDataValues WHERE value=?", itemID, fieldID, value)
	return err
}

func (s *session) addCreator(itemID int64, order int, c Creator) error {
	typ := c.Type
	if typ == "" {
		typ = "author"
	}
	typeID, ok := s.creators[typ]
	if !ok {
		return fmt.Errorf("zoterotest: unknown creator type %q", typ)
	}
	first, last, mode := c.First, c.Last, 0
	if c.Name != "" {
		first, last, mode = "", c.Name, 1
	}
	if _, err := s.tx.Exec("INSERT OR IGNORE INTO creators (firstName, lastName, fieldMode) VALUES (?, ?, ?)", first, last, mode); err != nil {
		return err
	}
	_, err := s.tx.Exec(`INSERT INTO itemCreators (itemID, creatorID, creatorTypeID, orderIndex)
		SELECT ?, creatorID, ?, ? FROM creators WHERE firstName=? AND lastName=? AND fieldMode=?`,
		itemID, typeID, order, first, last, mode)
	return err
}

func (s *session) addNote(parent int64, note string) (int64, error) {
	key, err := s.key("")
	if err != nil {
		return 0, err
	}
	id, err := s.insertItem("note", key, time.Time{})
	if err != nil {
		return 0, err
	}
	var p any
	if parent != 0 {
		p = parent
	}
	title, _, _ := strings.Cut(note, "\n")
	_, err = s.tx.Exec("INSERT INTO itemNotes (itemID, parentItemID, note, title) VALUES (?, ?, ?, ?)", id, p, "<p>"+note+"</p>", title)
	return id, err
}

var linkModes = map[string]int{"imported_file": 0, "imported_url": 1, "linked_file": 2, "linked_url": 3}

func (s *session) addAttachment(parent int64, a Attachment) error {
	if a.Mode == "" {
		a.Mode = "imported_file"
	}
	mode, ok := linkModes[a.Mode]
	if !ok {
		return fmt.Errorf("zoterotest: unknown link mode %q", a.Mode)
	}
	key, err := s.key(a.Key)
	if err != nil {
		return err
	}
	id, err := s.insertItem("attachment", key, time.Time{})
	if err != nil {
		return err
	}
	var stored any
	name := a.Filename
	switch a.Mode {
	case "imported_file", "imported_url":
		if name == "" || strings.ContainsAny(name, `/\`) {
			return fmt.Errorf("zoterotest: an imported attachment needs a file name without a folder, not %q", name)
		}
		stored = "storage:" + name
		content := a.Content
		if content == nil && strings.EqualFold(path.Ext(name), ".pdf") {
			content = PDF(name)
		}
		dir := filepath.Join(s.dir, "storage", key)
		s.files = append(s.files, func() error {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, name), content, 0o644)
		})
	case "linked_file":
		stored = a.Path
		name = a.Path
	}
	ct := a.ContentType
	if ct == "" {
		ct = contentType(name)
	}
	var p any
	if parent != 0 {
		p = parent
	}
	if _, err := s.tx.Exec("INSERT INTO itemAttachments (itemID, parentItemID, linkMode, contentType, path) VALUES (?, ?, ?, ?, ?)",
		id, p, mode, ct, stored); err != nil {
		return err
	}
	title := a.Title
	if title == "" {
		title = map[string]string{"application/pdf": "Full Text PDF", "text/html": "Snapshot", "application/epub+zip": "EPUB"}[ct]
		if title == "" {
			title = "Attachment"
		}
	}
	typeID := s.itemTypes["attachment"]
	for name, v := range map[string]string{"title": title, "url": a.URL} {
		if v == "" {
			continue
		}
		fid := s.fields[name]
		if !s.typeFields[typeID][fid] {
			continue
		}
		if err := s.setField(id, fid, v); err != nil {
			return err
		}
	}
	if a.Trashed {
		if _, err := s.tx.Exec("INSERT INTO deletedItems (itemID) VALUES (?)", id); err != nil {
			return err
		}
	}
	return nil
}

func contentType(name string) string {
	switch strings.ToLower(path.Ext(filepath.ToSlash(name))) {
	case ".pdf":
		return "application/pdf"
	case ".html", ".htm":
		return "text/html"
	case ".epub":
		return "application/epub+zip"
	case ".txt":
		return "text/plain"
	case ".png":
		return "image/png"
	}
	return "application/octet-stream"
}

func (s *session) itemID(key string) (int64, error) {
	var id int64
	err := s.tx.QueryRow("SELECT itemID FROM items WHERE libraryID=1 AND key=?", key).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return id, err
}

func (s *session) mustItemID(key string) (int64, error) {
	id, err := s.itemID(key)
	if err == nil && id == 0 {
		err = fmt.Errorf("zoterotest: no item %s", key)
	}
	return id, err
}

// eraseChildren erases an item's attachments (their files too) and notes.
func (s *session) eraseChildren(parent int64) error {
	type child struct {
		id  int64
		key string
	}
	var children []child
	rows, err := s.tx.Query(`SELECT i.itemID, i.key FROM items i WHERE i.itemID IN
		(SELECT itemID FROM itemAttachments WHERE parentItemID=?1 UNION SELECT itemID FROM itemNotes WHERE parentItemID=?1)`, parent)
	if err != nil {
		return err
	}
	for rows.Next() {
		var c child
		if err := rows.Scan(&c.id, &c.key); err != nil {
			rows.Close()
			return err
		}
		children = append(children, c)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	for _, c := range children {
		if err := s.erase(c.id, c.key); err != nil {
			return err
		}
	}
	return nil
}

// erase removes one item's rows (the schema's ON DELETE CASCADE takes
// its data), logs its key for sync and removes its storage folder.
func (s *session) erase(id int64, key string) error {
	if _, err := s.tx.Exec("DELETE FROM items WHERE itemID=?", id); err != nil {
		return err
	}
	if _, err := s.tx.Exec("INSERT OR REPLACE INTO syncDeleteLog (syncObjectTypeID, libraryID, key, dateDeleted) VALUES (3, 1, ?, ?)", key, s.now); err != nil {
		return err
	}
	dir := filepath.Join(s.dir, "storage", key)
	s.files = append(s.files, func() error { return os.RemoveAll(dir) })
	return nil
}

// multipart is a date as Zotero stores it (Zotero.Date.strToMultipart):
// "YYYY-MM-DD" of what could be parsed (zeros for the rest), a space, the
// date as typed.
func multipart(v string) string {
	y, m, d := 0, 0, 0
	if t := isoDate.FindStringSubmatch(v); t != nil {
		y, _ = strconv.Atoi(t[1])
		if t[2] != "" {
			m, _ = strconv.Atoi(t[2])
		}
		if t[3] != "" {
			d, _ = strconv.Atoi(t[3])
		}
	} else if t := year.FindString(v); t != "" {
		y, _ = strconv.Atoi(t)
		lower := strings.ToLower(v)
		for i, name := range []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"} {
			if strings.Contains(lower, name) {
				m = i + 1
				break
			}
		}
	}
	return fmt.Sprintf("%04d-%02d-%02d %s", y, m, d, v)
}

var (
	isoDate = regexp.MustCompile(`^(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?`)
	year    = regexp.MustCompile(`\b\d{4}\b`)
)
