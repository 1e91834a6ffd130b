package search

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// serve replays one recorded body with a status.
func serve(t *testing.T, status int, ctype string, body []byte) (*httptest.Server, *[]string) {
	t.Helper()
	var reqs []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reqs = append(reqs, r.URL.RequestURI())
		w.Header().Set("Content-Type", ctype)
		w.WriteHeader(status)
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv, &reqs
}

func testClient() *Client {
	return NewClient(ClientOptions{BaseBackoff: time.Millisecond, Timeout: 5 * time.Second})
}

func TestArxivCurrentFeed(t *testing.T) {
	t.Parallel()
	srv, reqs := serve(t, 200, "application/atom+xml", fixture(t, "arxiv/query-all-testing-max10.atom.xml"))
	recs, err := NewArxiv(testClient(), srv.URL+"/api/query").Search(context.Background(), "testing", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 10 {
		t.Fatalf("got %d records", len(recs))
	}
	r := recs[0]
	if r.ArxivID != "2202.12139" || r.Title != "Testing Deep Learning Models: A First Comparative Study of Multiple Testing Techniques" {
		t.Errorf("first record: %+v", r)
	}
	if r.PDFURL != "https://arxiv.org/pdf/2202.12139v1" || r.Year != 2022 || r.Key != "doi:10.1109/icstw55395.2022.00035" {
		t.Errorf("pdf/year/key: %q %d %q", r.PDFURL, r.Year, r.Key)
	}
	if !strings.HasPrefix(r.Abstract, "Deep Learning (DL) has revolutionized") || strings.Contains(r.Abstract, "\n") {
		t.Errorf("abstract: %q", r.Abstract)
	}
	dois := 0
	for _, r := range recs {
		if r.DOI != "" {
			dois++
			if r.DOI != strings.ToLower(r.DOI) {
				t.Errorf("DOI not lower-case: %s", r.DOI)
			}
		}
		if len(r.Authors) == 0 || r.Venue == "" {
			t.Errorf("missing authors/venue: %+v", r)
		}
	}
	if dois != 6 {
		t.Errorf("%d records with DOI, want 6", dois)
	}
	q := (*reqs)[0]
	if !strings.Contains(q, "search_query=all%3Atesting") || !strings.Contains(q, "max_results=10") || !strings.Contains(q, "sortBy=relevance") {
		t.Errorf("query: %s", q)
	}
}

func TestArxivLegacyFeed(t *testing.T) {
	t.Parallel()
	recs, err := ParseArxivFeed(fixture(t, "arxiv/legacy-2016-id_list-1111.2011v2.atom.xml"))
	if err != nil || len(recs) != 1 {
		t.Fatal(err, len(recs))
	}
	r := recs[0]
	want := Record{Key: "doi:10.1103/physrevb.85.115117", ArxivID: "1111.2011", DOI: "10.1103/physrevb.85.115117",
		Title: "Quantum Criticality for Extended Nodes on a Bethe Lattice in the Large Connectivity Limit",
		Year:  2012, Venue: "Phys. Rev. B", PDFURL: "https://arxiv.org/pdf/1111.2011v2", URL: "https://arxiv.org/abs/1111.2011v2"}
	if r.Key != want.Key || r.ArxivID != want.ArxivID || r.DOI != want.DOI || r.Title != want.Title || r.Year != want.Year ||
		r.Venue != want.Venue || r.PDFURL != want.PDFURL || r.URL != want.URL || r.Volume != "85" || r.Pages != "115117" {
		t.Errorf("got %+v", r)
	}
	if strings.Join(r.Authors, ";") != "James M. Murray;Adrian Del Maestro;Zlatko Tesanovic" {
		t.Errorf("authors %v", r.Authors)
	}
	recs, err = ParseArxivFeed(fixture(t, "arxiv/legacy-2016-search_query-au-del_maestro.atom.xml"))
	if err != nil || len(recs) != 10 {
		t.Fatal(err, len(recs))
	}
	for _, r := range recs {
		if r.ArxivID == "" || r.PDFURL == "" || r.Title == "" {
			t.Errorf("incomplete: %+v", r)
		}
	}
	recs, err = ParseArxivFeed(fixture(t, "arxiv/id_list-astro-ph-0601001.atom.xml"))
	if err != nil || len(recs) != 1 || recs[0].ArxivID != "astro-ph/0601001" {
		t.Fatalf("old-style id: %v %+v", err, recs)
	}
}

func TestArxivEmptyAndError(t *testing.T) {
	t.Parallel()
	srv, _ := serve(t, 200, "application/atom+xml", fixture(t, "arxiv/id_list-0000.0000-empty.atom.xml"))
	recs, err := NewArxiv(testClient(), srv.URL).Search(context.Background(), "x", 5)
	if err != nil || len(recs) != 0 {
		t.Fatalf("empty: %v %v", recs, err)
	}
	srv, reqs := serve(t, 400, "application/atom+xml", fixture(t, "arxiv/id_list-abc-error-400.atom.xml"))
	_, err = NewArxiv(testClient(), srv.URL).Search(context.Background(), "x", 5)
	if err == nil || !strings.Contains(err.Error(), "incorrect id format for abc") {
		t.Fatalf("error feed: %v", err)
	}
	if len(*reqs) != 1 {
		t.Errorf("400 retried: %d requests", len(*reqs))
	}
}

func TestArxivQuery(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"graph neural networks":                 "all:graph AND all:neural AND all:networks",
		`"large language models" for chemistry`: `all:"large language models" AND all:chemistry`,
		"au:del_maestro":                        "au:del_maestro",
	}
	for in, want := range cases {
		if got := ArxivQuery(in); got != want {
			t.Errorf("ArxivQuery(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOpenAlexList(t *testing.T) {
	t.Parallel()
	srv, reqs := serve(t, 200, "application/json", fixture(t, "openalex/works-filter-title.search-augmenting-llms-chemistry-tools.json"))
	recs, err := NewOpenAlex(testClient(), srv.URL, "me@example.org").Search(context.Background(), "chemistry tools", 5)
	if err != nil || len(recs) != 2 {
		t.Fatal(err, len(recs))
	}
	j := recs[0]
	if j.DOI != "10.1038/s42256-024-00832-8" || j.OpenAlexID != "W4396723768" || j.PMID != "38799228" ||
		j.Year != 2024 || j.Venue != "Nature Machine Intelligence" || j.Citations != 236 ||
		j.PDFURL != "https://www.nature.com/articles/s42256-024-00832-8.pdf" || len(j.Authors) != 6 {
		t.Errorf("journal record: %+v", j)
	}
	// Rebuilt from the inverted index, without the "Abstract" label
	// OpenAlex's text starts with (CleanAbstract).
	if !strings.HasPrefix(j.Abstract, "Large language models (LLMs) have shown strong performance") {
		t.Errorf("abstract rebuild: %q", j.Abstract[:min(120, len(j.Abstract))])
	}
	a := recs[1]
	if a.ArxivID != "2304.05376" || a.Key != "arxiv:2304.05376" || a.PDFURL != "http://arxiv.org/pdf/2304.05376" {
		t.Errorf("arXiv version: %+v", a)
	}
	if !strings.HasPrefix(a.Abstract, "Over the last decades, excellent") {
		t.Errorf("abstract: %q", a.Abstract[:80])
	}
	q := (*reqs)[0]
	if !strings.HasPrefix(q, "/works?") || !strings.Contains(q, "search=chemistry+tools") || !strings.Contains(q, "per-page=5") || !strings.Contains(q, "mailto=") {
		t.Errorf("request %s", q)
	}
}

func TestOpenAlexSingleWorkAndPaperQA(t *testing.T) {
	t.Parallel()
	recs, err := ParseOpenAlex(fixture(t, "openalex/work-doi-10.1073-pnas.1414271111.json"))
	if err != nil || len(recs) != 1 {
		t.Fatal(err, len(recs))
	}
	if recs[0].DOI != "10.1073/pnas.1414271111" || recs[0].Abstract == "" {
		t.Errorf("single work: %+v", recs[0])
	}
	recs, err = ParseOpenAlex(fixture(t, "openalex/works-filter-title.search-paperqa.json"))
	if err != nil || len(recs) != 1 || !strings.HasPrefix(recs[0].Title, "PaperQA") {
		t.Fatalf("paperqa: %v %+v", err, recs)
	}
}

func TestRebuildAbstract(t *testing.T) {
	t.Parallel()
	idx := map[string][]int{"world": {1}, "hello": {0, 2}}
	if got := RebuildAbstract(idx); got != "hello world hello" {
		t.Errorf("got %q", got)
	}
}

func TestOpenAlexHTML404(t *testing.T) {
	t.Parallel()
	srv, _ := serve(t, 404, "text/html; charset=utf-8", fixture(t, "openalex/error-404-work-not-found.html"))
	_, err := NewOpenAlex(testClient(), srv.URL, "").Search(context.Background(), "x", 5)
	if err == nil || !strings.Contains(err.Error(), "not found") || strings.Contains(err.Error(), "<") {
		t.Fatalf("404: %v", err)
	}
	var he *HTTPError
	if errors.As(err, &he) {
		t.Logf("wrapped HTTPError kept: %v", he)
	}
	// an HTML body with status 200 is an error too
	if _, err := ParseOpenAlex(fixture(t, "openalex/error-404-work-not-found.html")); err == nil {
		t.Error("HTML parsed as OpenAlex JSON")
	}
}

func TestHostileFieldsCleaned(t *testing.T) {
	t.Parallel()
	feed := strings.Replace(string(fixture(t, "arxiv/legacy-2016-id_list-1111.2011v2.atom.xml")),
		"<name>James M. Murray</name>", "<name>James \x1b]0;pwned\x07M. \x1b[31mMurray\x1b[0m</name>", 1)
	feed = strings.Replace(feed, "Theoretical description", "Theoretical \x1b[2J\x1b[Hdescription", 1)
	recs, err := ParseArxivFeed([]byte(feed))
	if err != nil {
		// raw ESC and BEL are not legal XML 1.0 characters; use the JSON path instead
		t.Logf("xml rejected control characters: %v", err)
	} else if recs[0].Authors[0] != "James M. Murray" || !strings.HasPrefix(recs[0].Abstract, "Theoretical description") {
		t.Errorf("not cleaned: %q %q", recs[0].Authors[0], recs[0].Abstract[:30])
	}
	js := strings.Replace(string(fixture(t, "openalex/works-filter-title.search-paperqa.json")),
		`"display_name": "PaperQA`, `"display_name": "\u001b]0;pwned\u0007\u009b31mPaperQA`, 1)
	recs, err = ParseOpenAlex([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		for _, s := range append([]string{r.Title, r.Abstract, r.Venue, r.URL}, r.Authors...) {
			if strings.ContainsAny(s, "\x1b\x07\u009b") {
				t.Errorf("control sequence survived: %q", s)
			}
		}
	}
	if !strings.HasPrefix(recs[0].Title, "PaperQA") {
		t.Errorf("title %q", recs[0].Title)
	}
}

func fixtureBytes(path string) []byte {
	b, _ := os.ReadFile(path)
	return b
}
