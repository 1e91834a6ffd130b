package zotero

import (
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/researchtui/researchtui/search/bib"
	"github.com/researchtui/researchtui/textkit"
)

// Library is a person's Zotero library (the user library, "My Library";
// group libraries are not read) as bib.Items.
type Library struct {
	// Version is the library's version: it changes whenever anything in
	// the library changes, so an import that finds the version it saw last
	// time can skip the work. 0 means unknown: always import. Zotero 10
	// counts every local change; Zotero 7 to 9 count synced changes only
	// (see ReadDatabase and API.Library).
	Version     int
	Collections []Collection
	Items       []bib.Item
}

// Collection is one collection; Parent is the key of the collection it is
// in ("" at the top).
type Collection struct {
	Key    string `json:"key"`
	Name   string `json:"name"`
	Parent string `json:"parent,omitempty"`
}

// record is an item as either source gives it, before it becomes a
// bib.Item: the database and the API name fields the same way (Zotero's
// field names, type-specific ones included).
type record struct {
	key         string
	itemType    string
	fields      map[string]string
	creators    []creator
	tags        []string
	collections []string // collection keys
	// parsedDate is the date as SQL ("2019-03-00", "2019-03"), from the
	// API's meta.parsedDate or the database's multipart date; "" when
	// unknown.
	parsedDate string
	files      []file
}

type creator struct {
	typ         string
	first, last string
	name        string // a single-field name (an organisation)
}

// file is a child attachment of an item, resolved to a path on disk.
type file struct {
	path        string
	contentType string
	order       int // the attachment's position among the children (date added)
}

// Link modes of attachments, as the database stores them (itemAttachments.linkMode)
// and the API names them (data.linkMode).
const (
	linkImportedFile = 0
	linkImportedURL  = 1
	linkLinkedFile   = 2
	linkLinkedURL    = 3
	linkEmbedded     = 4
)

var linkModeNames = map[string]int{
	"imported_file":  linkImportedFile,
	"imported_url":   linkImportedURL,
	"linked_file":    linkLinkedFile,
	"linked_url":     linkLinkedURL,
	"embedded_image": linkEmbedded,
}

// storagePrefix and basePrefix start an attachment's stored path: an
// imported file's name inside storage/<key>/, a linked file's path
// relative to the linked attachment base directory.
const (
	storagePrefix = "storage:"
	basePrefix    = "attachments:"
)

// fileKind ranks the attachments kept, PDFs first as Zotero's "best
// attachment" does, then EPUBs, then HTML snapshots; 0 is not kept.
func fileKind(contentType, name string) int {
	ct, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(contentType)), ";")
	switch strings.TrimSpace(ct) {
	case "application/pdf":
		return 1
	case "application/epub+zip", "application/epub":
		return 2
	case "text/html", "application/xhtml+xml":
		return 3
	case "":
		switch strings.ToLower(path.Ext(strings.ReplaceAll(name, `\`, "/"))) {
		case ".pdf":
			return 1
		case ".epub":
			return 2
		case ".html", ".htm", ".xhtml":
			return 3
		}
	}
	return 0
}

// storedPath resolves an attachment's stored path (itemAttachments.path,
// the API's data.path or data.filename) to an absolute path: an imported
// file is dataDir/storage/<key>/<name>, a linked file is absolute or
// relative to baseDir. "" when it cannot be resolved (a relative linked
// path without a base directory, a name that leaves its folder).
func storedPath(mode int, stored, key, dataDir, baseDir string) string {
	switch mode {
	case linkImportedFile, linkImportedURL:
		name := strings.TrimPrefix(stored, storagePrefix)
		// Zotero never stores a folder in the name; one that has one is
		// not followed out of the attachment's folder.
		if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) ||
			strings.HasPrefix(name, ".zotero") || dataDir == "" || !validKey(key) {
			return ""
		}
		return filepath.Join(dataDir, "storage", key, name)
	case linkLinkedFile:
		if rel, ok := strings.CutPrefix(stored, basePrefix); ok {
			if baseDir == "" || rel == "" {
				return ""
			}
			// Zotero stores the relative part with forward slashes.
			p := filepath.Join(baseDir, filepath.FromSlash(strings.ReplaceAll(rel, `\`, "/")))
			if !within(baseDir, p) {
				return ""
			}
			return p
		}
		if filepath.IsAbs(stored) {
			return filepath.Clean(stored)
		}
	}
	return ""
}

// within reports whether p is dir or inside it.
func within(dir, p string) bool {
	rel, err := filepath.Rel(filepath.Clean(dir), p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// validKey reports whether k is an object key as Zotero makes them: eight
// of 23456789ABCDEFGHIJKLMNPQRSTUVWXYZ (older keys may use any of A-Z0-9).
func validKey(k string) bool {
	if len(k) != 8 {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// skippedTypes are item types that are not works: they are never items of
// the library on their own.
var skippedTypes = map[string]bool{"note": true, "attachment": true, "annotation": true}

// item turns a record into a bib.Item. paths maps collection keys to their
// full names ("Parent/Child").
func (r *record) item(paths map[string]string) bib.Item {
	f := make(map[string]string, len(r.fields))
	for name, v := range r.fields {
		v = strings.TrimSpace(textkit.StripControls(v))
		if v == "" {
			continue
		}
		f[name] = v
		if base, ok := baseFields[name]; ok {
			f[base] = v
		}
	}
	it := bib.Item{
		ID:        r.key,
		Type:      cslType(r.itemType),
		Title:     f["title"],
		Volume:    f["volume"],
		Issue:     f["issue"],
		Pages:     bib.NormalizePages(f["pages"]),
		Publisher: f["publisher"],
		ISBN:      f["ISBN"],
		ISSN:      f["ISSN"],
		URL:       f["url"],
		Abstract:  f["abstractNote"],
		Language:  f["language"],
	}
	it.Venue = f["publicationTitle"]
	if it.Venue == "" {
		switch r.itemType {
		case "conferencePaper":
			it.Venue = f["conferenceName"]
		case "presentation":
			it.Venue = f["meetingName"]
		case "thesis":
			it.Venue = f["university"]
		case "report":
			it.Venue = f["institution"]
		}
	}
	it.DOI = bib.CleanDOI(f["DOI"])
	if it.DOI == "" {
		it.DOI = extraDOI(f["extra"])
	}
	it.Year, it.Date = itemDate(r.parsedDate, f["date"])

	primary := primaryCreators[r.itemType]
	for _, c := range r.creators {
		n := bib.Name{Family: c.last, Given: c.first, Literal: c.name}
		switch c.typ {
		case "author", primary:
			it.Authors = append(it.Authors, n)
		case "editor":
			it.Editors = append(it.Editors, n)
		}
	}
	it.Tags = append(it.Tags, r.tags...)
	slices.Sort(it.Tags)
	for _, k := range r.collections {
		if p, ok := paths[k]; ok {
			it.Collections = append(it.Collections, p)
		}
	}
	slices.Sort(it.Collections)
	files := slices.Clone(r.files)
	slices.SortStableFunc(files, func(a, b file) int {
		if ka, kb := fileKind(a.contentType, a.path), fileKind(b.contentType, b.path); ka != kb {
			return ka - kb
		}
		return a.order - b.order
	})
	for _, fl := range files {
		it.Files = append(it.Files, fl.path)
	}
	it.Clean()
	return it
}

// cslType is the CSL type of a Zotero item type ("document" for a type
// Zotero's schema does not map, such as a custom one).
func cslType(itemType string) string {
	if t, ok := cslTypes[itemType]; ok {
		return t
	}
	return "document"
}

// boundChains makes every collection's chain of parents end within
// maxDepth levels and maxPathBytes of names: a collection whose chain does
// not (a crafted database's chain of thousands, or a cycle) is put at the
// top. A reader of Parent links (the command line builds the paths
// again) then walks at most maxDepth of them for each.
func boundChains(cols []Collection) {
	parent := make(map[string]string, len(cols))
	size := make(map[string]int, len(cols))
	for _, c := range cols {
		parent[c.Key] = c.Parent
		size[c.Key] = len(c.Name) + 1
	}
	for i := range cols {
		depth, bytes := 1, size[cols[i].Key]
		for p := cols[i].Parent; p != ""; p = parent[p] {
			n, ok := size[p]
			if !ok {
				break // a parent that is not listed ends the chain
			}
			depth, bytes = depth+1, bytes+n
			if depth > maxDepth || bytes > maxPathBytes {
				cols[i].Parent = ""
				parent[cols[i].Key] = ""
				break
			}
		}
	}
}

// collectionPaths names every collection by its path from the top
// ("Parent/Child"). A parent that is missing (deleted, or a cycle in a
// damaged database) ends the path, and so do maxDepth levels or
// maxPathBytes of names (a crafted chain of thousands of collections would
// otherwise take time and memory quadratic in its length).
func collectionPaths(cols []Collection) map[string]string {
	byKey := make(map[string]Collection, len(cols))
	for _, c := range cols {
		byKey[c.Key] = c
	}
	paths := make(map[string]string, len(cols))
	for _, c := range cols {
		names := []string{c.Name}
		size := len(c.Name)
		seen := map[string]bool{c.Key: true}
		for p := c.Parent; p != "" && !seen[p] && len(names) < maxDepth && size < maxPathBytes; {
			pc, ok := byKey[p]
			if !ok {
				break
			}
			seen[p] = true
			names = append(names, pc.Name)
			size += len(pc.Name) + 1
			p = pc.Parent
		}
		slices.Reverse(names)
		paths[c.Key] = strings.Join(names, "/")
	}
	return paths
}

// itemDate is the year and ISO-like date of an item: the parsed date when
// Zotero gives one ("2019-03-00" is "2019-03"), else what can be read of
// the date as typed (an ISO date or a year in it).
func itemDate(parsed, typed string) (int, string) {
	if y, d := bib.ParseDate(parsed); d != "" {
		return y, d
	}
	if y, d := bib.ParseDate(typed); d != "" {
		return y, d
	}
	if y := bib.YearIn(typed); y > 0 {
		return y, strconv.Itoa(y)
	}
	return 0, ""
}

// multipartSQL is the SQL part of a date as the database stores it
// ("2019-03-00 March 2019" is "2019-03-00"), and the date as typed.
func multipartSQL(v string) (sql, typed string) {
	if len(v) >= 11 && v[10] == ' ' && v[4] == '-' && v[7] == '-' &&
		strings.Trim(v[:4]+v[5:7]+v[8:10], "0123456789") == "" {
		return v[:10], v[11:]
	}
	return "", v
}

// extraDOI is the DOI an item type without a DOI field keeps in Extra, on
// a line "DOI: 10.1000/xyz" (Zotero's convention for fields a type lacks).
func extraDOI(extra string) string {
	for line := range strings.Lines(extra) {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.EqualFold(strings.TrimSpace(k), "doi") {
			if d := bib.CleanDOI(v); d != "" {
				return d
			}
		}
	}
	return ""
}
