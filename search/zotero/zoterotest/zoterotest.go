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
	"path/filepath"
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
