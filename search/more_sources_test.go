package search

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// route serves recorded bodies by path; unknown paths are 404.
type routeBody struct {
	status int
	ctype  string
	body   []byte
}

func serveRoutes(t *testing.T, routes map[string]routeBody) (*httptest.Server, *[]*http.Request) {
	t.Helper()
	var reqs []*http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reqs = append(reqs, r.Clone(context.Background()))
		rb, ok := routes[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", rb.ctype)
		w.WriteHeader(rb.status)
		w.Write(rb.body)
	}))
	t.Cleanup(srv.Close)
	return srv, &reqs
}

func noWaitClient(srvURL string) *Client {
	c := NewClient(ClientOptions{BaseBackoff: time.Millisecond, Timeout: 5 * time.Second, Retries: -1})
	c.SetHostLimit(hostOf(srvURL), 0)
	return c
}

func TestPubMedSearchAndFetch(t *testing.T) {
	t.Parallel()
	srv, reqs := serveRoutes(t, map[string]routeBody{
		"/esearch.fcgi": {200, "application/json", []byte(`{"header":{"type":"esearch"},"esearchresult":{"count":"2","idlist":["11700088","11748933"]}}`)},
		"/efetch.fcgi":  {200, "text/xml", fixture(t, "pubmed/efetch-pubmed-id-11748933_11700088.xml")},
	})
	src := NewPubMed(noWaitClient(srv.URL), srv.URL, "KEY123", "me@example.org")
	recs, err := src.Search(context.Background(), "cryopreservation sperm", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].PMID != "11700088" || recs[1].PMID != "11748933" {
		t.Fatalf("order not kept: %+v", recs)
	}
	r := recs[1]
	if r.DOI != "10.1006/cryo.2001.2328" || r.Year != 2001 || r.Venue != "Cryobiology" || r.Key != "doi:10.1006/cryo.2001.2328" {
		t.Errorf("record: %+v", r)
	}
	if len(r.Authors) != 8 || r.Authors[0] != "A R Taddei" || !strings.HasPrefix(r.Abstract, "This study subdivides") || r.URL != "https://pubmed.ncbi.nlm.nih.gov/11748933/" {
		t.Errorf("authors/abstract: %q %q", r.Authors, r.Abstract[:40])
	}
	// PubMed files names itself, and gives the issue and pages
	if len(r.AuthorsFiled) != 8 || r.AuthorsFiled[0] != "Taddei, A R" ||
		!reflect.DeepEqual(r.Publication, Publication{ItemType: "article-journal", Volume: "42", Issue: "4", Pages: "244–255"}) {
		t.Errorf("filed %q, publication %+v", r.AuthorsFiled, r.Publication)
	}
	q := (*reqs)[0].URL.Query()
	if q.Get("api_key") != "KEY123" || q.Get("db") != "pubmed" || q.Get("retmode") != "json" || q.Get("term") != "cryopreservation sperm" {
		t.Errorf("esearch query: %v", q)
	}
	if id := (*reqs)[1].URL.Query().Get("id"); id != "11700088,11748933" {
		t.Errorf("efetch ids %q", id)
	}
	// NCBI_API_KEY raises the host's limit to 10/s
	if st := noWaitClient("http://x"); st != nil {
		c := NewClient(ClientOptions{})
		NewPubMed(c, "", "k", "")
		if got := c.HostStatus(DefaultPubMedURL + "/esearch.fcgi").Every; got != 100*time.Millisecond {
			t.Errorf("keyed NCBI rate: %v", got)
		}
		c2 := NewClient(ClientOptions{})
		NewPubMed(c2, "", "", "")
		if got := c2.HostStatus(DefaultPubMedURL).Every; got < 300*time.Millisecond {
			t.Errorf("keyless NCBI rate: %v", got)
		}
	}
}

func TestPubMedEmptySearchAndNoAbstract(t *testing.T) {
	t.Parallel()
	// the real "no items found" answer (XML, with an ErrorList) is no results, not an error
	ids, err := ParsePubMedSearch(fixture(t, "pubmed/esearch-protein-term-abcXYZ-no-results.xml"))
	if err != nil || len(ids) != 0 {
		t.Fatalf("empty search: %v %v", ids, err)
	}
	srv, reqs := serveRoutes(t, map[string]routeBody{
		"/esearch.fcgi": {200, "text/xml", fixture(t, "pubmed/esearch-protein-term-abcXYZ-no-results.xml")},
	})
	recs, err := NewPubMed(noWaitClient(srv.URL), srv.URL, "", "").Search(context.Background(), "abcXYZ", 5)
	if err != nil || len(recs) != 0 || len(*reqs) != 1 {
		t.Fatalf("search: %v %v (%d requests)", recs, err, len(*reqs))
	}
	ids, err = ParsePubMedSearch(fixture(t, "pubmed/esearch-term-Darwin-au.json"))
	if err != nil || len(ids) != 20 || ids[0] != "36374290" {
		t.Errorf("json esearch: %v %v", ids, err)
	}
	ids, err = ParsePubMedSearch(fixture(t, "pubmed/esearch-pubmed-term-biopython.xml"))
	if err != nil || len(ids) != 20 {
		t.Errorf("xml esearch: %d %v", len(ids), err)
	}
	recs, err = ParsePubMedArticles(fixture(t, "pubmed/efetch-pubmed-id-12091962_9997-abstract.xml"))
	if err != nil || len(recs) != 2 {
		t.Fatal(recs, err)
	}
	if recs[0].Abstract != "" || recs[0].Year != 1990 || recs[0].Key != "pmid:12091962" || recs[0].Title != "The treatment of AIDS behind the walls of correctional facilities." {
		t.Errorf("no-abstract article: %+v", recs[0])
	}
	if recs[1].DOI != "10.1016/0005-2795(76)90109-4" || !strings.Contains(recs[1].Abstract, "(S = 1/2)") {
		t.Errorf("second: %+v", recs[1])
	}
	if _, err := ParsePubMedSearch([]byte(`{"esearchresult":{"ERROR":"Invalid query"}}`)); err == nil {
		t.Error("esearch ERROR accepted")
	}
}

func TestPubMedMathMLAbstract(t *testing.T) {
	t.Parallel()
	recs, err := ParsePubMedArticles(fixture(t, "pubmed/efetch-pubmed-id-30108519-html-mathml-in-abstract.xml"))
	if err != nil || len(recs) != 1 {
		t.Fatal(recs, err)
	}
	r := recs[0]
	for _, bad := range []string{"<i>", "<sub", "<sup", "<mml", "mml:", "\n", "  "} {
		if strings.Contains(r.Abstract, bad) || strings.Contains(r.Title, bad) {
			t.Errorf("markup %q left in %q / %q", bad, r.Title, r.Abstract)
		}
	}
	for _, want := range []string{"maximal oxygen uptake ( V\u0307O2max ) 67.6", "15.0 ± 1.1 km·h⁻¹", "(LEmin)", "(P < 0.001; ES: 3.54)"} {
		if !strings.Contains(r.Abstract, want) {
			t.Errorf("abstract lacks %q:\n%s", want, r.Abstract)
		}
	}
	if r.Title != `A "Blood Relationship" Between the Overlooked Minimum Lactate Equivalent and Maximal Lactate Steady State in Trained Runners. Back to the Old Days?` {
		t.Errorf("title %q", r.Title)
	}
	if r.DOI != "10.3389/fphys.2018.01034" || r.Year != 2018 || len(r.Authors) != 2 {
		t.Errorf("record %+v", r)
	}
}

func TestSemanticScholarSearch(t *testing.T) {
	t.Parallel()
	srv, reqs := serveRoutes(t, map[string]routeBody{
		"/graph/v1/paper/search": {200, "application/json", fixture(t, "semanticscholar/paper-search-turing-allfields-limit100.json")},
	})
	recs, err := NewSemanticScholar(noWaitClient(srv.URL), srv.URL, "S2KEY").Search(context.Background(), "turing", 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 100 {
		t.Fatalf("%d records", len(recs))
	}
	r := recs[0]
	if r.Title != "Large Language Models Pass the Turing Test" || r.ArxivID != "2503.23674" || r.Key != "arxiv:2503.23674" ||
		r.S2ID != "66e350075a66ca5fd0c09f20d76aaad2c5c6860c" || r.Year != 2025 || r.PDFURL != "https://arxiv.org/pdf/2503.23674" {
		t.Errorf("first: %+v", r)
	}
	if r.Volume != "" { // S2 gives arXiv papers a "volume" of abs/2503.23674
		t.Errorf("an arXiv paper's volume: %q", r.Volume)
	}
	abstracts, dois, pdfs := 0, 0, 0
	for _, r := range recs {
		if r.Abstract != "" {
			abstracts++
		}
		if r.DOI != "" {
			dois++
		}
		if r.PDFURL != "" {
			pdfs++
		}
	}
	if abstracts != 68 || dois != 87 || pdfs < 47 {
		t.Errorf("abstracts %d dois %d pdfs %d (SOURCES.md: 68, 87, ≥47)", abstracts, dois, pdfs)
	}
	req := (*reqs)[0]
	if req.Header.Get("x-api-key") != "S2KEY" || !strings.Contains(req.URL.Query().Get("fields"), "openAccessPdf") {
		t.Errorf("request: %v %v", req.Header, req.URL)
	}
	// the empty answer has no data key
	recs, err = ParseSemanticScholar(fixture(t, "semanticscholar/paper-search-empty.json"))
	if err != nil || len(recs) != 0 {
		t.Errorf("empty: %v %v", recs, err)
	}
}

func TestSemanticScholarErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file   string
		status int
		want   string
	}{
		{"error-400-offset-limit-unavailable.json", 400, "HTTP 400: Requested data for this limit and/or offset is not available"},
		{"error-400-unrecognized-fields.json", 400, "HTTP 400: Unrecognized or unsupported fields: [unknown]"},
		{"error-404-paper-not-found.json", 404, "HTTP 404: Paper with id 0 not found"},
	} {
		srv, _ := serve(t, tc.status, "application/json", fixture(t, "semanticscholar/"+tc.file))
		_, err := NewSemanticScholar(noWaitClient(srv.URL), srv.URL, "").Search(context.Background(), "x", 5)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "semanticscholar: ") {
			t.Errorf("%s: %v", tc.file, err)
		}
	}
}

func TestSemanticScholar429RetryAfterThenCooldown(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	body := fixture(t, "semanticscholar/error-429-too-many-requests.json")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Retry-After", "60")
		w.WriteHeader(429)
		w.Write(body)
	}))
	defer srv.Close()
	c := NewClient(ClientOptions{BaseBackoff: time.Millisecond, MaxRetryAfter: time.Second})
	c.SetHostLimit(hostOf(srv.URL), 0)
	src := NewSemanticScholar(c, srv.URL, "")
	start := time.Now()
	_, err := src.Search(context.Background(), "turing", 5)
	var rl *RateLimitedError
	if !errors.As(err, &rl) || rl.RetryAfter != time.Minute || !strings.Contains(err.Error(), "SEMANTIC_SCHOLAR_API_KEY") {
		t.Fatalf("err %v", err)
	}
	// a minute-long Retry-After is not waited out: the search fails at once
	if el := time.Since(start); el > 10*time.Second { // not the minute asked for
		t.Errorf("waited %v", el)
	}
	// and the host cools down: the next searches fail fast without a request
	for range 3 {
		if _, err := src.Search(context.Background(), "other", 5); !errors.As(err, &rl) {
			t.Fatalf("cooling: %v", err)
		}
	}
	if n.Load() != 1 {
		t.Errorf("%d requests during the cool-down", n.Load())
	}
	if st := c.HostStatus(srv.URL); st.CoolingFor < 50*time.Second {
		t.Errorf("status %+v", st)
	}
}

func TestCrossrefSearch(t *testing.T) {
	t.Parallel()
	srv, reqs := serveRoutes(t, map[string]routeBody{
		"/works": {200, "application/json", fixture(t, "crossref/works-query-ecology-rows2.json")},
	})
	recs, err := NewCrossref(noWaitClient(srv.URL), srv.URL, "me@example.org").Search(context.Background(), "ecology", 2)
	if err != nil || len(recs) != 2 {
		t.Fatal(recs, err)
	}
	r := recs[0]
	if r.DOI != "10.1093/obo/9780199830060-0238" || r.Title != "Communicating Ecology" || r.Year != 2022 || r.Venue != "Ecology" {
		t.Errorf("record %+v", r)
	}
	if !strings.HasPrefix(r.Abstract, "Communication is perhaps the most important") || strings.Contains(r.Abstract, "<") {
		t.Errorf("abstract %q", r.Abstract)
	}
	q := (*reqs)[0].URL.Query()
	if q.Get("mailto") != "me@example.org" || q.Get("rows") != "2" || !strings.Contains((*reqs)[0].Header.Get("User-Agent"), "mailto:me@example.org") {
		t.Errorf("polite pool not joined: %v", (*reqs)[0].URL)
	}
	// JATS abstract
	recs, err = ParseCrossref(fixture(t, "crossref/works-query-widget-cursor-star.json"))
	if err != nil || len(recs) != 20 {
		t.Fatal(len(recs), err)
	}
	found := false
	for _, r := range recs {
		if r.DOI == "10.59350/7mtwq-q3661" {
			found = true
			if r.Abstract != "In addition to this Swing-based screenshot of JChemPaint , here's a SWT widget in action (lower right corner):" || r.Authors[0] != "Egon Willighagen" || r.Year != 2008 {
				t.Errorf("JATS record: %+v", r)
			}
		}
	}
	if !found {
		t.Error("JATS record missing")
	}
	// a single work and a select= projection
	if recs, err := ParseCrossref(fixture(t, "crossref/work-doi-10.1371-journal.pone.0033693.json")); err != nil || len(recs) != 1 || recs[0].DOI != "10.1371/journal.pone.0033693" {
		t.Errorf("single work: %v %v", recs, err)
	} else if want := (Publication{ItemType: "article-journal", Volume: "7", Issue: "3", Pages: "e33693", Publisher: "Public Library of Science (PLoS)"}); !reflect.DeepEqual(recs[0].Publication, want) {
		t.Errorf("single work's publication: %+v, want %+v", recs[0].Publication, want)
	} else if f := recs[0].AuthorsFiled; len(f) != len(recs[0].Authors) || f[0] != "Sadasivan, Shankar" || f[1] != "Pond, Brooks B." {
		t.Errorf("Crossref's filing of the names: %q", f)
	}
	if recs, err := ParseCrossref(fixture(t, "crossref/works-query-ecology-select-DOI-title.json")); err != nil || len(recs) == 0 || recs[0].Title == "" {
		t.Errorf("select: %v", err)
	}
}

func TestCrossrefErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file, ctype string
		status      int
		want        string
	}{
		{"error-404-work-not-found.txt", "text/plain", 404, "crossref: HTTP 404: Resource not found."},
		{"error-400-query-on-single-doi.json", "application/json", 400, "crossref: HTTP 400: validation-failure: This route does not support field query parameters"},
		{"error-404-bad-cursor.json", "application/json", 404, "crossref: HTTP 404: resource-failure: Cursor specified but it is invalid"},
	} {
		srv, _ := serve(t, tc.status, tc.ctype, fixture(t, "crossref/"+tc.file))
		_, err := NewCrossref(noWaitClient(srv.URL), srv.URL, "").Search(context.Background(), "x", 5)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v", tc.file, err)
		}
	}
}

func TestWebSearxNGBraveTavily(t *testing.T) {
	t.Parallel()
	var tavilyReq map[string]any
	var braveToken, tavilyAuth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/searx/search":
			if r.URL.Query().Get("format") != "json" {
				w.WriteHeader(403)
				return
			}
			w.Write(fixture(t, "searxng/search-q-python-format-json.json"))
		case "/brave":
			braveToken = r.Header.Get("X-Subscription-Token")
			w.Write(fixture(t, "brave/web-search-q-python.json"))
		case "/tavily":
			tavilyAuth = r.Header.Get("Authorization")
			json.NewDecoder(r.Body).Decode(&tavilyReq)
			// hand-written in Tavily's documented shape (no recording exists)
			w.Write([]byte(`{"query":"python","results":[{"title":"Python (programming language)","url":"https://en.wikipedia.org/wiki/Python_(programming_language)","content":"Python is a high-level language.","score":0.9,"published_date":"2024-01-02"}]}`))
		}
	}))
	defer srv.Close()
	c := noWaitClient(srv.URL)
	one := NewWeb(c, WebOptions{SearxNGURL: srv.URL + "/searx"})
	recs, err := one.Search(context.Background(), "python", 30)
	if err != nil || len(recs) < 25 {
		t.Fatalf("searxng: %d %v", len(recs), err)
	}
	if recs[0].URL != "https://www.python.org/" || recs[0].Title != "Welcome to Python.org" || recs[0].Source != "web" || recs[0].Venue != "python.org" || !strings.HasPrefix(recs[0].Key, "url:") {
		t.Errorf("first: %+v", recs[0])
	}
	all := NewWeb(c, WebOptions{SearxNGURL: srv.URL + "/searx", BraveKey: "BK", BraveURL: srv.URL + "/brave", TavilyKey: "TK", TavilyURL: srv.URL + "/tavily"})
	recs, err = all.Search(context.Background(), "python", 60)
	if err != nil {
		t.Fatal(err)
	}
	if braveToken != "BK" || tavilyAuth != "Bearer TK" || tavilyReq["query"] != "python" {
		t.Errorf("keys: %q %q %v", braveToken, tavilyAuth, tavilyReq)
	}
	urls := map[string]int{}
	wiki := false
	for _, r := range recs {
		urls[NormalizeURL(r.URL)]++
		wiki = wiki || strings.Contains(r.URL, "wikipedia.org/wiki/Python_(programming")
	}
	for u, n := range urls {
		if n > 1 {
			t.Errorf("%s listed %d times", u, n)
		}
	}
	if !wiki || urls["python.org"] != 1 {
		t.Errorf("merge: wiki %v python.org %d", wiki, urls["python.org"])
	}
	brave, _ := ParseBrave(fixture(t, "brave/web-search-q-python.json"))
	if len(brave) != 20 || brave[0].Title != "Welcome to Python.org" || brave[0].Year != 2023 || strings.Contains(brave[0].Abstract, "<strong>") || !strings.Contains(brave[0].Abstract, "Calculations are simple") {
		t.Errorf("brave: %d %+v", len(brave), brave[0])
	}
	// no engine configured: no source
	if NewWeb(c, WebOptions{}) != nil {
		t.Error("web source without engines")
	}
	// one engine down, another answering: results, no error
	broken := NewWeb(c, WebOptions{SearxNGURL: srv.URL + "/nope", TavilyKey: "TK", TavilyURL: srv.URL + "/tavily"})
	if recs, err := broken.Search(context.Background(), "python", 5); err != nil || len(recs) != 1 {
		t.Errorf("degraded: %v %v", recs, err)
	}
}

func TestMaterialsProject(t *testing.T) {
	t.Parallel()
	var key string
	var q map[string][]string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/materials/summary/" {
			http.NotFound(w, r)
			return
		}
		key, q = r.Header.Get("X-API-KEY"), r.URL.Query()
		w.Write(fixture(t, "materials/summary-Fe2O3.json"))
	}))
	defer srv.Close()
	if NewMaterialsProject(testClient(), srv.URL, "") != nil {
		t.Error("materials source without a key")
	}
	src := NewMaterialsProject(noWaitClient(srv.URL), srv.URL, "MPKEY")
	recs, err := src.Search(context.Background(), "band gap of hematite Fe2O3 photoanodes", 5)
	if err != nil || len(recs) != 2 {
		t.Fatal(recs, err)
	}
	if key != "MPKEY" || q["formula"][0] != "Fe2O3" || !strings.Contains(q["_fields"][0], "band_gap") {
		t.Errorf("request: %q %v", key, q)
	}
	r := recs[0]
	if !r.HasData() || r.Data["band_gap"] != 2.05 || r.Data["material_id"] != "mp-19770" || r.Source != "materials" {
		t.Errorf("data: %+v", r)
	}
	if !strings.Contains(r.Abstract, "band gap 2.05 eV") || !strings.Contains(r.Abstract, "Trigonal") || r.URL != "https://next-gen.materialsproject.org/materials/mp-19770" {
		t.Errorf("summary %q", r.Abstract)
	}
	if recs[0].Key == recs[1].Key {
		t.Error("two materials share a key")
	}
	// a question naming no material asks nothing
	if recs, err := src.Search(context.Background(), "how do transformers handle long context", 5); err != nil || recs != nil {
		t.Errorf("no formula: %v %v", recs, err)
	}
	for q, want := range map[string]string{
		"GaN LEDs":                    "GaN",
		"LiFePO4 cathodes":            "LiFePO4",
		"HIV and DFT studies In 2020": "",
		"Li-Fe-O phase diagram":       "chemsys:Li-Fe-O",
		"graphene band structure":     "C",
	} {
		f, s := MaterialsTerms(q)
		got := strings.Join(f, ",")
		if len(s) > 0 {
			got = "chemsys:" + strings.Join(s, ",")
		}
		if got != want {
			t.Errorf("MaterialsTerms(%q) = %q, want %q", q, got, want)
		}
	}
}

// The same paper from arXiv, OpenAlex and Semantic Scholar is one source
// with its DOI, its arXiv ID and a PDF link.
func TestMergeThreeSources(t *testing.T) {
	t.Parallel()
	arx := Record{Source: "arxiv", ArxivID: "2304.05376", Title: "Augmenting large language models with chemistry tools", Year: 2023,
		Venue: "arXiv", PDFURL: "https://arxiv.org/pdf/2304.05376v5", Abstract: "short"}
	oa, err := ParseOpenAlex(fixture(t, "openalex/works-filter-title.search-augmenting-llms-chemistry-tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	s2 := Record{Source: "semanticscholar", S2ID: "354dcdebf3f8b5feeed5c62090e0bc1f0c28db06", DOI: "10.1038/s42256-024-00832-8",
		ArxivID: "2304.05376", Title: "Augmenting large language models with chemistry tools", Year: 2024, Citations: 999}
	all := append([]Record{arx}, oa...)
	all = append(all, s2)
	merged := Merge(all)
	if len(merged) != 1 {
		for _, m := range merged {
			t.Logf("%s %s %s", m.Key, m.DOI, m.ArxivID)
		}
		t.Fatalf("%d sources, want 1", len(merged))
	}
	m := merged[0]
	if m.DOI != "10.1038/s42256-024-00832-8" || m.ArxivID != "2304.05376" || m.PDFURL == "" || m.S2ID == "" || m.OpenAlexID == "" {
		t.Errorf("merged: %+v", m)
	}
	if len(m.FoundBy) != 3 || m.Citations != 999 || len(m.Abstract) < 100 || m.Key != "doi:10.1038/s42256-024-00832-8" {
		t.Errorf("found by %v citations %d abstract %d key %s", m.FoundBy, m.Citations, len(m.Abstract), m.Key)
	}
	// OpenAlex's biblio of the journal version, for a full reference
	if !reflect.DeepEqual(m.Publication, Publication{Volume: "6", Issue: "5", Pages: "525–535"}) {
		t.Errorf("publication: %+v", m.Publication)
	}
	// PMID and PMC IDs match too, and a PMC PDF beats a landing page
	a := Record{Source: "pubmed", PMID: "123", PMCID: "PMC9", Title: "A", PDFURL: PMCPDFURL("PMC9")}
	b := Record{Source: "openalex", PMID: "123", Title: "A (journal)", PDFURL: "https://publisher.example/article/1"}
	c := Record{Source: "semanticscholar", PMCID: "PMC9", S2ID: "abc", Title: "other title"}
	if got := Merge([]Record{b, a, c}); len(got) != 1 || got[0].PDFURL != PMCPDFURL("PMC9") || got[0].S2ID != "abc" {
		t.Errorf("pmid/pmc merge: %+v", got)
	}
}

func TestInlineText(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"<jats:title>Abstract</jats:title><jats:p>We show <jats:italic>x</jats:italic> &amp; y.</jats:p>": "We show x & y.",
		"H<sub>2</sub>O at 10<sup>9</sup> Pa": "H₂O at 10⁹ Pa",
		"x<sup>ab</sup>":                      "x^(ab)",
		"plain &lt; text":                     "plain < text",
		"<p>unclosed <i>tag":                  "unclosed tag",
		"\x1b[31mred\x1b[0m <b>bold</b>":      "red bold",
	} {
		if got := InlineText(in); got != want {
			t.Errorf("InlineText(%q) = %q, want %q", in, got, want)
		}
	}
}

// A bibliographic detail of the wrong JSON type (a volume as a number, a
// page as an object) is read as text or dropped; the work is kept.
func TestPublicationDetailsOfTheWrongType(t *testing.T) {
	t.Parallel()
	recs, err := ParseCrossref([]byte(`{"status":"ok","message-type":"work","message":{"DOI":"10.1000/x","title":["A title"],"type":"book-chapter",` +
		`"container-title":["A Handbook"],"volume":6,"issue":null,"page":{"a":1},"publisher":"Springer",` +
		`"editor":[{"given":"Ann","family":"Editor"},{"name":"The Consortium"},{"family":5}]}}`))
	if err != nil || len(recs) != 1 {
		t.Fatalf("%v %v", recs, err)
	}
	if want := (Publication{ItemType: "chapter", Volume: "6", Publisher: "Springer", Editors: []string{"Editor, Ann", "The Consortium", "5,"}}); !reflect.DeepEqual(recs[0].Publication, want) {
		t.Errorf("%+v, want %+v", recs[0].Publication, want)
	}
}

// MEDLINE abbreviates page ranges; a reference writes them in full.
func TestMedlinePages(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"244-55": "244–255", "1021-9": "1021–1029", "117-123": "117–123", "e1002": "e1002", "S1-4, S10": "S1-4, S10", "12-12": "12–12", "": ""} {
		if got := medlinePages(in); got != want {
			t.Errorf("medlinePages(%q) = %q, want %q", in, got, want)
		}
	}
}
