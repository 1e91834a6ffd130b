package zotero_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/researchtui/researchtui/search/bib"
	"github.com/researchtui/researchtui/search/zotero"
)

// fakeZotero serves a library the way Zotero's local API does
// (chrome/content/zotero/xpcom/server/server_localAPI.js): the recorded
// answers of testdata/ (see ATTRIBUTION.md) as the objects, paged with
// start and limit, Total-Results and Link headers, Last-Modified-Version,
// 304 for If-Modified-Since-Version, and items/<key>/file/view/url
// answering an attachment's file:// URL as text. It fails the test on a
// request a reader should not make.
type fakeZotero struct {
	t           *testing.T
	version     int
	collections []json.RawMessage
	top         []json.RawMessage
	attachments []json.RawMessage
	fileURLs    map[string]string // attachment key → file URL
	pageSize    int               // the limit every list request must ask for
	noTotal     bool              // leave Total-Results out: paging by Link only
	// bumpAfter changes the version once, after that many list requests
	// (0: never).
	bumpAfter int

	mu       sync.Mutex
	requests []*http.Request
	lists    int
}

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func rawList(t *testing.T, b []byte) []json.RawMessage {
	t.Helper()
	var l []json.RawMessage
	if err := json.Unmarshal(b, &l); err != nil {
		t.Fatal(err)
	}
	return l
}

// localAttachment is an attachment object as Zotero's local API writes it
// (Zotero.Item.prototype.toJSON and toResponseJSON, item.js): data.linkMode
// by name, data.filename for a stored file, data.path for a linked one,
// and links.enclosure (a file:// URL) for an imported one.
func localAttachment(key, parent, linkMode, contentType, name, enclosure string) json.RawMessage {
	data := map[string]any{
		"key": key, "version": 1234, "itemType": "attachment", "parentItem": parent,
		"linkMode": linkMode, "title": "Full Text", "contentType": contentType, "charset": "",
		"tags": []any{}, "relations": map[string]any{},
	}
	switch linkMode {
	case "linked_file":
		data["path"] = name
	case "imported_file", "imported_url":
		data["filename"] = name
		data["md5"], data["mtime"] = nil, nil
	case "linked_url":
		data["url"] = name
	}
	links := map[string]any{
		"self": map[string]string{"href": "http://localhost:23119/api/users/0/items/" + key, "type": "application/json"},
		"up":   map[string]string{"href": "http://localhost:23119/api/users/0/items/" + parent, "type": "application/json"},
	}
	if enclosure != "" {
		links["enclosure"] = map[string]any{"href": enclosure, "type": contentType, "title": name, "length": 1234}
	}
	b, _ := json.Marshal(map[string]any{
		"key": key, "version": 1234,
		"library": map[string]any{"type": "user", "id": 0, "name": "My Library"},
		"links":   links, "meta": map[string]any{"numChildren": 0}, "data": data,
	})
	return b
}

func fileURL(p string) string { return (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String() }

// newFakeZotero serves the recorded library, with local attachments of
// files under root: an imported PDF (enclosure), a linked file relative to
// the base directory (asked for with /file/view/url), a linked EPUB with an
// absolute path, an imported file whose enclosure is the web API's (asked
// for too), a link, an image, and the recorded web API attachment, whose
// parent is not in the library.
func newFakeZotero(t *testing.T, root string) (*fakeZotero, map[string]string) {
	t.Helper()
	paths := map[string]string{
		"PDFKEY22": filepath.Join(root, "Zotero", "storage", "PDFKEY22", "Buck - 1980 - Sherlock Holmes in Babylon.pdf"),
		"LNKREL22": filepath.Join(root, "Papers", "Plasma", "diagnostic.pdf"),
		"LNKABS22": filepath.Join(root, "elsewhere", "biscrolling.epub"),
		"WEBENC22": filepath.Join(root, "Zotero", "storage", "WEBENC22", "asero.html"),
	}
	f := &fakeZotero{
		t:           t,
		version:     1234,
		collections: rawList(t, readFixture(t, "pyzotero-collections_doc.json")),
		top:         rawList(t, readFixture(t, "pyzotero-items_doc.json")),
		pageSize:    100,
		fileURLs:    map[string]string{"LNKREL22": fileURL(paths["LNKREL22"]), "WEBENC22": fileURL(paths["WEBENC22"])},
	}
	f.attachments = []json.RawMessage{
		json.RawMessage(readFixture(t, "pyzotero-attachments_doc.json")),
		localAttachment("PDFKEY22", "PQKBRC33", "imported_file", "application/pdf", filepath.Base(paths["PDFKEY22"]), fileURL(paths["PDFKEY22"])),
		localAttachment("LNKURL22", "PQKBRC33", "linked_url", "", "https://www.jstor.org/stable/2321200", ""),
		localAttachment("LNKREL22", "R39UWNFK", "linked_file", "application/pdf", "attachments:Plasma/diagnostic.pdf", ""),
		localAttachment("LNKABS22", "33TK9NH9", "linked_file", "application/epub+zip", paths["LNKABS22"], ""),
		localAttachment("WEBENC22", "3EWF3P9V", "imported_url", "text/html", "asero.html", "https://api.zotero.org/users/475425/items/WEBENC22/file/view"),
		localAttachment("IMAGE222", "3EWF3P9V", "imported_file", "image/png", "figure.png", fileURL(filepath.Join(root, "figure.png"))),
	}
	return f, paths
}

func (f *fakeZotero) fail(w http.ResponseWriter, format string, args ...any) {
	f.t.Errorf("fake Zotero: "+format, args...)
	http.Error(w, "bad request", http.StatusBadRequest)
}

func (f *fakeZotero) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, r)
	h := w.Header()
	h.Set("Zotero-API-Version", "3")
	h.Set("Zotero-Schema-Version", "41")
	if r.Method != http.MethodGet {
		f.fail(w, "%s %s: a reader only reads", r.Method, r.URL)
		return
	}
	if r.Header.Get("Zotero-API-Version") != "3" {
		f.fail(w, "%s without Zotero-API-Version: 3", r.URL)
		return
	}
	p, ok := strings.CutPrefix(r.URL.Path, "/api/users/0/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	if key, ok := strings.CutSuffix(strings.TrimPrefix(p, "items/"), "/file/view/url"); ok && strings.HasPrefix(p, "items/") {
		// [200, 'text/plain', item.getLocalFileURL()] (server_localAPI.js)
		u, ok := f.fileURLs[key]
		if !ok {
			f.fail(w, "asked for the file of %s, which a reader knows already or needs not", key)
			return
		}
		h.Set("Content-Type", "text/plain")
		fmt.Fprint(w, u)
		return
	}
	var objs []json.RawMessage
	switch p {
	case "collections":
		objs = f.collections
	case "items/top":
		objs = f.top
		if q.Get("sort") != "dateAdded" || q.Get("direction") != "asc" {
			f.fail(w, "items/top not in a stable order: %s", r.URL.RawQuery)
			return
		}
	case "items":
		if q.Get("itemType") != "attachment" {
			f.fail(w, "items of every type asked for: %s", r.URL.RawQuery)
			return
		}
		objs = f.attachments
	default:
		f.fail(w, "unexpected request %s", r.URL)
		return
	}
	f.lists++
	if f.bumpAfter > 0 && f.lists == f.bumpAfter+1 {
		f.version++
	}
	if q.Get("format") != "json" {
		f.fail(w, "%s: format=%q", r.URL, q.Get("format"))
		return
	}
	limit, err := strconv.Atoi(q.Get("limit"))
	if err != nil || limit != f.pageSize {
		f.fail(w, "%s: limit %q, want %d", r.URL, q.Get("limit"), f.pageSize)
		return
	}
	start, err := strconv.Atoi(q.Get("start"))
	if err != nil || start < 0 || start%limit != 0 {
		f.fail(w, "%s: start %q", r.URL, q.Get("start"))
		return
	}
	h.Set("Last-Modified-Version", strconv.Itoa(f.version))
	if since := r.Header.Get("If-Modified-Since-Version"); since != "" {
		n, err := strconv.Atoi(since)
		if err != nil || n <= 0 {
			f.fail(w, "If-Modified-Since-Version: %q", since)
			return
		}
		if p != "collections" || start != 0 {
			f.fail(w, "If-Modified-Since-Version on %s start %d: only the first request asks", p, start)
			return
		}
		if f.version <= n {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	total := len(objs)
	page := objs[min(start, total):min(start+limit, total)]
	if !f.noTotal {
		h.Set("Total-Results", strconv.Itoa(total))
	}
	if start+limit < total {
		next := *r.URL
		nq := next.Query()
		nq.Set("start", strconv.Itoa(start+limit))
		next.RawQuery = nq.Encode()
		h.Set("Link", fmt.Sprintf(`<http://localhost:23119%s>; rel="next"`, next.String()))
	}
	h.Set("Content-Type", "application/json")
	b, _ := json.MarshalIndent(page, "", "    ")
	w.Write(b)
}

// requested lists the requests made, as "path?query".
func (f *fakeZotero) requested() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, r := range f.requests {
		out = append(out, strings.TrimPrefix(r.URL.Path, "/api/users/0/")+"?"+r.URL.RawQuery)
	}
	return out
}

func serve(t *testing.T, h http.Handler) *zotero.API {
	t.Helper()
	srv := httptest.NewServer(h) // on loopback
	t.Cleanup(srv.Close)
	return &zotero.API{Base: srv.URL + "/api/users/0/", Client: srv.Client()}
}

func TestAPILibrary(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	fake, paths := newFakeZotero(t, root)
	fake.pageSize = 7
	api := serve(t, fake)
	api.PageSize = 7
	lib, unchanged, err := api.Library(context.Background(), 0)
	if err != nil || unchanged {
		t.Fatalf("Library: %v, unchanged %v", err, unchanged)
	}
	if lib.Version != 1234 {
		t.Errorf("version %d, want the Last-Modified-Version 1234", lib.Version)
	}
	if len(lib.Collections) != 15 {
		t.Errorf("%d collections, want the 15 recorded", len(lib.Collections))
	}
	if i := slices.IndexFunc(lib.Collections, func(c zotero.Collection) bool { return c.Key == "TVPC4XK4" }); i < 0 ||
		lib.Collections[i] != (zotero.Collection{Key: "TVPC4XK4", Name: "sherlock films", Parent: "QM6T3KHX"}) {
		t.Errorf("sub-collection: %+v", lib.Collections)
	}
	if len(lib.Items) != 20 {
		t.Fatalf("%d items, want the 20 recorded", len(lib.Items))
	}
	for _, it := range lib.Items {
		checkItem(t, it)
	}
	items := byID(lib.Items)
	buck := items["PQKBRC33"]
	want := bib.Item{
		ID:          "PQKBRC33",
		Type:        "article-journal",
		Title:       "Sherlock Holmes in Babylon",
		Authors:     []bib.Name{{Family: "R. Creighton Buck"}},
		Year:        1980,
		Date:        "1980-05-01",
		Venue:       "The American Mathematical Monthly",
		Volume:      "87",
		Issue:       "5",
		Pages:       "335–345",
		DOI:         "10.2307/2321200",
		ISSN:        "00029890",
		URL:         "http://www.jstor.org/stable/2321200",
		Collections: []string{"Sherlock Holmes"},
		Files:       []string{paths["PDFKEY22"]},
	}
	if !reflect.DeepEqual(buck, want) {
		t.Errorf("journal article:\n got %+v\nwant %+v", buck, want)
	}
	for _, c := range []struct {
		id, typ, title, venue, doi, date string
		year                             int
		authors                          []bib.Name
		files                            []string
	}{
		{"R39UWNFK", "paper-conference", "Diagnostic of vacuum subsonic and supersonic plasma flows with enthalpy probe, schlieren and high speed camera methods",
			"IEEE Conference Record - Abstracts. 2002 IEEE International Conference on Plasma Science (Cat. No.02CH37340)",
			"10.1109/plasma.2002.1030588", "", 0, nil, []string{paths["LNKREL22"]}},
		{"33TK9NH9", "article-journal", "Biscrolling Nanotube Sheets and Functional Guests into Yarns", "Science",
			"10.1126/science.1195912", "2011-01-07", 2011, nil, []string{paths["LNKABS22"]}},
		{"X42A7DEE", "book", "", "", "", "1993", 1993, []bib.Name{{Literal: "Institute of Physics (Great Britain)"}}, nil},
		{"6MCAN2NC", "graphic", "Sherlock Holmes", "", "", "2008-12-14", 2008, []bib.Name{{Family: "Fanatico", Given: "Cine"}}, nil},
		{"3EWF3P9V", "article-journal", "", "International archives of allergy and immunology", "", "2011", 2011, nil, []string{paths["WEBENC22"]}},
		{"GIFZST3I", "book", "Cell recognition during neuronal development", "", "", "1993", 1993, nil, nil},
		{"NM66T6EF", "webpage", `HowStuffWorks "How Earthquakes Work"`, "", "", "", 0, nil, nil},
	} {
		it := items[c.id]
		if it.Type != c.typ || c.title != "" && it.Title != c.title || it.Venue != c.venue || it.DOI != c.doi ||
			it.Date != c.date || it.Year != c.year || c.authors != nil && !reflect.DeepEqual(it.Authors, c.authors) ||
			!slices.Equal(it.Files, c.files) {
			t.Errorf("%s: %+v", c.id, it)
		}
	}
	if got := items["X42A7DEE"]; got.ISBN != "0750303212" || got.Publisher != "Institute of Physics Pub" ||
		!slices.Equal(got.Tags, []string{"Analysis", "Congresses", "Electron microscopy", "Materials", "Microscopy"}) ||
		!slices.Equal(got.Collections, []string{"Sciences (miscellaneous)", "Sherlock Holmes"}) {
		t.Errorf("book: %+v", got)
	}
	if got := items["6MCAN2NC"].Collections; !slices.Equal(got, []string{"Non-English items", "Non-English items/sherlock films", "Sherlock Holmes"}) {
		t.Errorf("collections of the artwork: %q", got)
	}
	if got := items["GIFZST3I"].Authors; !reflect.DeepEqual(got, []bib.Name{{Family: "Goodman", Given: "C."}, {Family: "Jiménez", Given: "F."}}) {
		t.Errorf("authors: %+v", got)
	}
	if got := items["AGTZDBRQ"]; got.Authors != nil {
		t.Errorf("contributors are not authors: %+v", got.Authors)
	}

	reqs := fake.requested()
	want2 := []string{
		"collections?format=json&limit=7&start=0", "collections?format=json&limit=7&start=7", "collections?format=json&limit=7&start=14",
		"items/top?direction=asc&format=json&limit=7&sort=dateAdded&start=0",
		"items/top?direction=asc&format=json&limit=7&sort=dateAdded&start=7",
		"items/top?direction=asc&format=json&limit=7&sort=dateAdded&start=14",
		"items?direction=asc&format=json&itemType=attachment&limit=7&sort=dateAdded&start=0",
		"items/LNKREL22/file/view/url?", "items/WEBENC22/file/view/url?",
	}
	if !slices.Equal(reqs, want2) {
		t.Errorf("requests:\n%s\nwant\n%s", strings.Join(reqs, "\n"), strings.Join(want2, "\n"))
	}
	for _, r := range fake.requests {
		if r.Header.Get("If-Modified-Since-Version") != "" {
			t.Errorf("%s sent If-Modified-Since-Version with no version known", r.URL)
		}
	}
}

func TestAPILibraryBaseDirAndLinkPaging(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	fake, paths := newFakeZotero(t, root)
	fake.noTotal = true // page by Link: rel="next" alone
	fake.pageSize = 6
	delete(fake.fileURLs, "LNKREL22") // resolved against BaseDir: never asked
	// Standalone notes and attachments are top-level items too: left out.
	fake.top = append(fake.top,
		json.RawMessage(`{"key":"NOTE2222","version":1,"data":{"key":"NOTE2222","itemType":"note","note":"<p>hi</p>","tags":[],"collections":[]}}`),
		localAttachment("LOOSE222", "", "imported_file", "application/pdf", "loose.pdf", fileURL(filepath.Join(root, "loose.pdf"))))
	api := serve(t, fake)
	api.PageSize = 6
	api.BaseDir = filepath.Join(root, "Papers")
	lib, _, err := api.Library(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(lib.Items) != 20 || len(lib.Collections) != 15 {
		t.Fatalf("%d items, %d collections", len(lib.Items), len(lib.Collections))
	}
	if got := byID(lib.Items)["R39UWNFK"].Files; !slices.Equal(got, []string{paths["LNKREL22"]}) {
		t.Errorf("linked file under the base directory: %q", got)
	}
}

func TestAPIDefaultPageSize(t *testing.T) {
	t.Parallel()
	fake, _ := newFakeZotero(t, t.TempDir())
	api := serve(t, fake) // fake.pageSize 100: every list must ask limit=100
	if _, _, err := api.Library(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
}

func TestAPIUnchanged(t *testing.T) {
	t.Parallel()
	fake, _ := newFakeZotero(t, t.TempDir())
	api := serve(t, fake)
	lib, unchanged, err := api.Library(context.Background(), 1234)
	if err != nil || !unchanged || lib.Version != 1234 || lib.Items != nil {
		t.Fatalf("same version: %+v, unchanged %v, %v", lib, unchanged, err)
	}
	if len(fake.requests) != 1 || fake.requests[0].Header.Get("If-Modified-Since-Version") != "1234" {
		t.Errorf("requests %q: want one, with If-Modified-Since-Version: 1234", fake.requested())
	}
	fake.requests = nil
	lib, unchanged, err = api.Library(context.Background(), 1000)
	if err != nil || unchanged || lib.Version != 1234 || len(lib.Items) != 20 {
		t.Fatalf("older version: version %d, %d items, unchanged %v, %v", lib.Version, len(lib.Items), unchanged, err)
	}
	if got := fake.requests[0].Header.Get("If-Modified-Since-Version"); got != "1000" {
		t.Errorf("If-Modified-Since-Version %q, want 1000", got)
	}
}

func TestAPIChangedWhileReading(t *testing.T) {
	t.Parallel()
	fake, _ := newFakeZotero(t, t.TempDir())
	fake.bumpAfter = 1 // the second list request sees another version
	api := serve(t, fake)
	lib, _, err := api.Library(context.Background(), 0)
	if err != nil {
		t.Fatal(err) // the version changed once: the read started again
	}
	if lib.Version != 1235 || len(lib.Items) != 20 {
		t.Errorf("version %d, %d items", lib.Version, len(lib.Items))
	}

	fake, _ = newFakeZotero(t, t.TempDir())
	fake.bumpAfter = -1
	api = serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fake.mu.Lock()
		fake.version++ // every answer another version: a sync under way
		fake.mu.Unlock()
		fake.ServeHTTP(w, r)
	}))
	if _, _, err := api.Library(context.Background(), 0); err == nil || !strings.Contains(err.Error(), "changed while it was being read") {
		t.Errorf("a library that keeps changing: %v", err)
	}
}

func TestAPINotRunning(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	api := &zotero.API{Base: "http://" + addr + "/api/users/0/"}
	_, _, err = api.Library(context.Background(), 0)
	if !errors.Is(err, zotero.ErrNotRunning) {
		t.Fatalf("connection refused: %v", err)
	}
	for _, want := range []string{"Zotero is not running", "Allow other applications on this computer to communicate with Zotero"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
}

func TestAPIBadAnswers(t *testing.T) {
	t.Parallel()
	collections := readFixture(t, "pyzotero-collections_doc.json")
	for _, c := range []struct {
		name, want string
		status     int
		header     map[string]string
		body       []byte
		notRunning bool
	}{
		{"local API off", "local API", 403, nil, []byte("Local API is not enabled"), true},
		{"no local API", "Zotero 7 or later", 404, nil, []byte("No endpoint found"), false},
		{"server error", "500", 500, nil, []byte("An error occurred\x1b]0;pwned\x07"), false},
		{"HTML", "not a list", 200, nil, []byte("<html><body>Zotero</body></html>"), false},
		{"truncated", "not a list", 200, nil, collections[:len(collections)/2], false},
		{"object", "not a list", 200, nil, []byte(`{"key":"X"}`), false},
		{"empty", "not a list", 200, nil, nil, false},
		{"bad version", "not a version number", 200, map[string]string{"Last-Modified-Version": "12abc"}, []byte("[]"), false},
		{"too large", "larger than", 200, nil, append([]byte("["), []byte(strings.Repeat(" ", 2<<20))...), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			api := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				for k, v := range c.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(c.status)
				w.Write(c.body)
			}))
			api.MaxBody = 1 << 20
			_, _, err := api.Library(context.Background(), 0)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one saying %q", err, c.want)
			}
			if errors.Is(err, zotero.ErrNotRunning) != c.notRunning {
				t.Errorf("ErrNotRunning %v, want %v", errors.Is(err, zotero.ErrNotRunning), c.notRunning)
			}
			if strings.ContainsAny(err.Error(), "\x1b\x07") {
				t.Errorf("the error carries controls: %q", err)
			}
		})
	}
}

func TestAPIContextCancelled(t *testing.T) {
	t.Parallel()
	fake, _ := newFakeZotero(t, t.TempDir())
	api := serve(t, fake)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := api.Library(ctx, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
