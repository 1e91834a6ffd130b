package search

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func TestMergeArxivAndOpenAlex(t *testing.T) {
	t.Parallel()
	ax, err := ParseArxivFeed(fixture(t, "arxiv/legacy-2016-id_list-1111.2011v2.atom.xml"))
	if err != nil {
		t.Fatal(err)
	}
	ax[0].PDFURL = "https://arxiv.org/pdf/1111.2011v2"
	oa := Record{Source: "openalex", FoundBy: []string{"openalex"}, DOI: "10.1103/PhysRevB.85.115117", OpenAlexID: "W1",
		Title: "Quantum criticality for extended nodes on a Bethe lattice in the large connectivity limit", Year: 2012,
		Venue: "Physical Review B", Citations: 12}
	other := Record{Source: "openalex", Title: "Unrelated", Year: 2020, OpenAlexID: "W2"}
	got := Merge([]Record{ax[0], other, oa})
	if len(got) != 2 {
		t.Fatalf("got %d records: %+v", len(got), got)
	}
	m := got[0]
	if m.DOI != "10.1103/physrevb.85.115117" || m.ArxivID != "1111.2011" || m.PDFURL == "" || m.OpenAlexID != "W1" ||
		m.Citations != 12 || strings.Join(m.FoundBy, ",") != "arxiv,openalex" || m.Key != "doi:10.1103/physrevb.85.115117" {
		t.Errorf("merged: %+v", m)
	}
	if got[1].Title != "Unrelated" {
		t.Errorf("order: %+v", got[1])
	}

	// the OpenAlex arXiv version of ChemCrow merges with an arXiv record by
	// arXiv ID, and with its published version by title and first author
	oaRecs, _ := ParseOpenAlex(fixture(t, "openalex/works-filter-title.search-augmenting-llms-chemistry-tools.json"))
	arx := Record{Source: "arxiv", ArxivID: "2304.05376", Title: "ChemCrow: Augmenting large-language models with chemistry tools",
		Year: 2023, PDFURL: "https://arxiv.org/pdf/2304.05376v5", Abstract: "short"}
	got = Merge(append([]Record{arx}, oaRecs...))
	if len(got) != 1 || got[0].ArxivID != "2304.05376" || got[0].OpenAlexID != "W4365597205" || len(got[0].Abstract) < 100 || got[0].DOI != "10.1038/s42256-024-00832-8" {
		t.Errorf("chemcrow merge: %+v", got)
	}
	// title + year fallback, and transitive merging
	a := Record{Source: "crossref", Title: "Deep  Learning: a Survey!", Year: 2019, DOI: "10.1/x"}
	b := Record{Source: "web", Title: "deep learning — a survey", Year: 2019}
	c := Record{Source: "s2", S2ID: "abc", DOI: "10.1/X"}
	if got := Merge([]Record{a, b, c}); len(got) != 1 || got[0].S2ID != "abc" || len(got[0].FoundBy) != 3 {
		t.Errorf("title merge: %+v", got)
	}
}

func TestNormalizeTitleAndKey(t *testing.T) {
	t.Parallel()
	if got := NormalizeTitle("  Économie: the “Résumé”—Part II. "); got != "economie the resume part ii" {
		t.Errorf("NormalizeTitle: %q", got)
	}
	for _, c := range []struct {
		r    Record
		want string
	}{
		{Record{DOI: "https://doi.org/10.1/ABC", ArxivID: "1"}, "doi:10.1/abc"},
		{Record{DOI: "10.48550/arXiv.2304.05376"}, "arxiv:2304.05376"},
		{Record{PMID: "9", S2ID: "s"}, "pmid:9"},
		{Record{S2ID: "s", OpenAlexID: "W1"}, "s2:s"},
		{Record{OpenAlexID: "W1", Title: "t"}, "openalex:W1"},
		{Record{Title: "A Title", Year: 2001}, "title:a title|2001"},
	} {
		AssignKey(&c.r)
		if c.r.Key != c.want {
			t.Errorf("key %q, want %q", c.r.Key, c.want)
		}
	}
}

func TestFetchRefusesLoopback(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("secret")) }))
	defer srv.Close()
	f := NewFetcher(testClient(), FetchOptions{})
	if _, err := f.Fetch(context.Background(), srv.URL); !errors.Is(err, ErrBlockedAddress) {
		t.Fatalf("loopback fetched: %v", err)
	}
	// the dial-time guard, bypassing the early literal check
	if err := guardControl("tcp", strings.TrimPrefix(srv.URL, "http://"), nil); !errors.Is(err, ErrBlockedAddress) {
		t.Errorf("guard: %v", err)
	}
	for _, a := range []string{"10.0.0.1:80", "169.254.169.254:80", "[::1]:80", "0.0.0.0:80", "[fe80::1]:80", "[::ffff:127.0.0.1]:80"} {
		if err := guardControl("tcp", a, nil); err == nil {
			t.Errorf("%s allowed", a)
		}
	}
	if err := guardControl("tcp", "93.184.216.34:443", nil); err != nil {
		t.Errorf("public refused: %v", err)
	}
}

func TestFetchRedirectToLoopbackRefused(t *testing.T) {
	t.Parallel()
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("secret")) }))
	defer target.Close()
	// a name that "resolves" to loopback: the dial-time guard must refuse it
	f := NewFetcher(testClient(), FetchOptions{})
	tr := f.hc.Transport.(*http.Transport)
	guarded := &net.Dialer{Control: guardControl}
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return guarded.DialContext(ctx, network, target.Listener.Addr().String())
	}
	if _, err := f.Fetch(context.Background(), "http://public.example/paper"); !errors.Is(err, ErrBlockedAddress) {
		t.Fatalf("name resolving to loopback fetched: %v", err)
	}
	// a public page (simulated: its dial skips the guard) redirecting to loopback
	redir := httptest.NewServer(http.RedirectHandler(target.URL+"/x", http.StatusFound))
	defer redir.Close()
	plain := &net.Dialer{}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr == "public.example:80" {
			return plain.DialContext(ctx, network, redir.Listener.Addr().String())
		}
		return guarded.DialContext(ctx, network, addr)
	}
	_, err := f.Fetch(context.Background(), "http://public.example/paper")
	if !errors.Is(err, ErrBlockedAddress) {
		t.Fatalf("redirect to loopback followed: %v", err)
	}
}

func TestFetchAllowPrivateHTML(t *testing.T) {
	t.Parallel()
	page := `<!doctype html><html><head><title>Fixture Article</title></head><body>
<nav><a href="/">Home</a> <a href="/about">About us</a> <a href="/login">Login navigation menu</a></nav>
<article><h1>Fixture Article</h1>` + strings.Repeat(`<p>Readable paragraph about Bethe lattices and quantum criticality, with enough words to count as content for the readability scorer. It continues here.</p>`, 6) +
		`</article><footer>Copyright footer text</footer></body></html>`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream") // not trusted
		w.Write([]byte(page))
	}))
	defer srv.Close()
	f := NewFetcher(testClient(), FetchOptions{AllowPrivate: true})
	doc, err := f.Fetch(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if doc.ContentType != "text/html" || doc.Title != "Fixture Article" || !strings.Contains(doc.Text, "Bethe lattices") {
		t.Errorf("doc: %+v", doc)
	}
	if strings.Contains(doc.Text, "Login navigation menu") {
		t.Errorf("nav kept: %q", doc.Text)
	}
	// plain text and empty documents
	if d, err := ExtractDocument("x", []byte("just \x1b[31mtext\x1b[0m")); err != nil || d.Text != "just text" || d.ContentType != "text/plain" {
		t.Errorf("text: %+v %v", d, err)
	}
	if _, err := ExtractDocument("x", []byte("   \n ")); !errors.Is(err, ErrNoText) {
		t.Errorf("empty: %v", err)
	}
	if _, err := ExtractDocument("x", []byte("%PDF-1.4 garbage")); err == nil {
		t.Error("broken PDF accepted")
	}
}

var wordRe = regexp.MustCompile(`[a-z0-9]+`)

func words(s string) []string { return wordRe.FindAllString(strings.ToLower(s), -1) }

func lcs(a, b []string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			switch {
			case a[i-1] == b[j-1]:
				cur[j] = prev[j-1] + 1
			case prev[j] > cur[j-1]:
				cur[j] = prev[j]
			default:
				cur[j] = cur[j-1]
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
