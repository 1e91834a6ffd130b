package zoterotest

import (
	"database/sql"
	_ "embed"
	"errors"
	"fmt"
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

// Writing items: keys, collections, items and their fields, creators,
// notes and attachments, as Zotero stores them.

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
