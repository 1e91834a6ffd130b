package zotero_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/researchtui/researchtui/search/bib"
	"github.com/researchtui/researchtui/search/zotero"
)

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// FuzzAPI serves arbitrary bytes as one of the local API's answers (the
// collections, the items, the attachments, or a file URL) and checks that
// Library never panics and that whatever it returns is clean.
func FuzzAPI(f *testing.F) {
	for _, name := range []string{"pyzotero-collections_doc.json", "pyzotero-items_doc.json", "pyzotero-attachments_doc.json"} {
		b, err := readFixtureF(name)
		if err != nil {
			f.Fatal(err)
		}
		for which := range 3 {
			f.Add(uint8(which), b)
		}
	}
	att := localAttachment("PDFKEY22", "PQKBRC33", "imported_file", "application/pdf", "a.pdf", "file:///tmp/a%20b/a.pdf")
	f.Add(uint8(2), append(append([]byte("["), att...), ']'))
	lnk := localAttachment("LNKREL22", "PQKBRC33", "linked_file", "application/pdf", "attachments:x/../../y.pdf", "")
	f.Add(uint8(2), append(append([]byte("["), lnk...), ']'))
	f.Add(uint8(3), []byte("file:///tmp/x%00y.pdf"))
	f.Add(uint8(1), []byte(`[{"key":"AAAAAAAA","data":{"itemType":"book","title":"\u001b[31mx","creators":[{"name":5}],"tags":"x","DOI":"doi:10.1/X"},"meta":{"parsedDate":"2019-13-40"}}]`))
	f.Add(uint8(1), []byte(`[{"key":"AAAAAAAA","data":{"itemType":"journalArticle","extra":"DOI: 10.5555/Ab\nx","date":"99999-1-1","pages":"1--2"}}]`))
	f.Add(uint8(0), []byte(`[{"key":"A","data":{"name":"a","parentCollection":"A"}},{"key":"B","data":{"name":"b","parentCollection":"A"}}]`))

	item := []byte(`[{"key":"PQKBRC33","data":{"itemType":"journalArticle","title":"T","collections":["N7W92H48"]}}]`)
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		which %= 4
		answers := [4][]byte{[]byte(`[{"key":"N7W92H48","data":{"name":"LoC","parentCollection":false}}]`), item,
			append(append([]byte("["), lnk...), ']'), []byte("file:///tmp/linked.pdf")}
		answers[which] = body
		client := &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
			var b []byte
			switch {
			case strings.HasSuffix(r.URL.Path, "/collections"):
				b = answers[0]
			case strings.HasSuffix(r.URL.Path, "/items/top"):
				b = answers[1]
			case strings.HasSuffix(r.URL.Path, "/items"):
				b = answers[2]
			default:
				b = answers[3]
			}
			h := http.Header{"Last-Modified-Version": {"7"}}
			return &http.Response{StatusCode: 200, Header: h, Body: io.NopCloser(bytes.NewReader(b)), Request: r}, nil
		})}
		api := &zotero.API{Base: "http://127.0.0.1:23119/api/users/0/", Client: client}
		type result struct {
			lib zotero.Library
			err error
		}
		done := make(chan result, 1)
		go func() {
			lib, _, err := api.Library(context.Background(), 0)
			done <- result{lib, err}
		}()
		var res result
		select {
		case res = <-done:
		case <-time.After(10 * time.Second):
			buf := make([]byte, 1<<20)
			t.Fatalf("Library still running after 10 s on which=%d body=%q\n%s", which, body, buf[:runtime.Stack(buf, true)])
		}
		lib, err := res.lib, res.err
		if err != nil {
			return
		}
		for _, c := range lib.Collections {
			checkLine(t, "collection name", c.Name)
		}
		for _, it := range lib.Items {
			checkItem(t, it)
		}
	})
}

func readFixtureF(name string) ([]byte, error) {
	return os.ReadFile(filepath.Join("testdata", name))
}

// checkItem fails on anything a terminal would execute or could not show.
func checkItem(t *testing.T, it bib.Item) {
	t.Helper()
	for _, s := range []string{it.ID, it.Type, it.Title, it.Date, it.Venue, it.Volume, it.Issue, it.Pages,
		it.Publisher, it.DOI, it.ISBN, it.ISSN, it.URL, it.Language} {
		checkLine(t, "field", s)
	}
	for _, l := range strings.Split(it.Abstract, "\n") {
		checkLine(t, "abstract line", l)
	}
	for _, n := range append(append([]bib.Name(nil), it.Authors...), it.Editors...) {
		for _, s := range []string{n.Family, n.Given, n.Literal, n.Suffix} {
			checkLine(t, "name", s)
		}
	}
	for _, list := range [][]string{it.Tags, it.Collections, it.Files} {
		for _, s := range list {
			checkLine(t, "list entry", s)
		}
	}
	for _, p := range it.Files {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p {
			t.Errorf("file path %q is not clean and absolute", p)
		}
	}
	if it.DOI != "" && (it.DOI != strings.ToLower(it.DOI) || !strings.HasPrefix(it.DOI, "10.")) {
		t.Errorf("DOI %q", it.DOI)
	}
	if it.Year < 0 || it.Year > 9999 {
		t.Errorf("year %d", it.Year)
	}
	if it.Type == "" {
		t.Error("no type")
	}
}

func checkLine(t *testing.T, what, s string) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Errorf("%s %q is not valid UTF-8", what, s)
	}
	for _, r := range s {
		if unicode.IsControl(r) || r == '\u202e' || r == '\ufeff' {
			t.Errorf("%s %q has the control %U", what, s, r)
		}
	}
}
