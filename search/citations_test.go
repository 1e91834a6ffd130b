package search

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

func TestParseS2EdgesRecordedPages(t *testing.T) {
	t.Parallel()
	refs, err := ParseS2Edges(readTestdata(t, "semanticscholar/paper-references-ssrn.2250500-fields-title-offset0.json"))
	if err != nil {
		t.Fatal(err)
	}
	// 50 references, 10 of them unresolved (paperId null) but titled.
	if len(refs) != 50 {
		t.Fatalf("%d references, want 50", len(refs))
	}
	for _, r := range refs {
		if r.Title == "" || r.Key == "" {
			t.Errorf("reference without title or key: %+v", r)
		}
	}
	cits, err := ParseS2Edges(readTestdata(t, "semanticscholar/paper-citations-corpusid-14514057-fields-title-offset0.json"))
	if err != nil || len(cits) != 100 {
		t.Fatalf("%d citing works, %v; want 100", len(cits), err)
	}
	// A full item (all fields) carries identifiers, so chasing merges it
	// with the same work found by search.
	item := readTestdata(t, "semanticscholar/reference-item-all-fields.json")
	one, err := ParseS2Edges([]byte(`{"data": [` + string(item) + `]}`))
	if err != nil || len(one) != 1 || one[0].ArxivID != "1402.0030" || one[0].Abstract == "" || one[0].Year == 0 {
		t.Fatalf("full reference item: %+v %v", one, err)
	}
	cit := readTestdata(t, "semanticscholar/citation-item-all-fields.json")
	got, err := ParseS2Edges([]byte(`{"data": [` + string(cit) + `]}`))
	if err != nil || len(got) != 1 || got[0].Title == "" {
		t.Fatalf("full citation item: %+v %v", got, err)
	}
	if p := got[0].Publication; p.Volume != "8" || p.Pages != "576–583" {
		t.Errorf("the journal's volume and pages: %+v", p)
	}
}

func TestS2CitationsTimeoutIsAnErrorForThatWorkOnly(t *testing.T) {
	t.Parallel()
	body := readTestdata(t, "semanticscholar/error-504-citations-timeout.json")
	refs := readTestdata(t, "semanticscholar/paper-references-ssrn.2250500-fields-title-offset0.json")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/citations") {
			w.WriteHeader(http.StatusGatewayTimeout)
			w.Write(body)
			return
		}
		w.Write(refs)
	}))
	defer srv.Close()
	c := NewClient(ClientOptions{Retries: -1})
	s := NewSemanticScholar(c, srv.URL, "").(CitationGraph)
	rec := Record{DOI: "10.2139/ssrn.2250500"}
	if _, err := s.CitedBy(context.Background(), rec, 50); err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Errorf("504: %v, want the service's message", err)
	}
	got, err := s.References(context.Background(), rec, 20)
	if err != nil || len(got) != 20 {
		t.Errorf("references after a 504 elsewhere: %d, %v", len(got), err)
	}
	if _, err := s.References(context.Background(), Record{Title: "no ids"}, 20); err != ErrNoGraphID {
		t.Errorf("no identifier: %v", err)
	}
}

func TestOpenAlexReferencedWorksAndCites(t *testing.T) {
	t.Parallel()
	recs, err := ParseOpenAlex(readTestdata(t, "openalex/work-doi-10.1073-pnas.1414271111.json"))
	if err != nil || len(recs) != 1 {
		t.Fatal(recs, err)
	}
	if len(recs[0].References) == 0 {
		t.Fatal("the recorded work's referenced_works were not kept")
	}
	var asked []string
	list := readTestdata(t, "openalex/works-filter-title.search-paperqa.json")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.Query().Get("filter"))
		w.Write(list)
	}))
	defer srv.Close()
	o := NewOpenAlex(NewClient(ClientOptions{Retries: -1}), srv.URL, "").(CitationGraph)
	if _, err := o.References(context.Background(), recs[0], 10); err != nil {
		t.Fatal(err)
	}
	if _, err := o.CitedBy(context.Background(), recs[0], 10); err != nil {
		t.Fatal(err)
	}
	if len(asked) != 2 || !strings.HasPrefix(asked[0], "openalex_id:W") || strings.Count(asked[0], "|") != 9 || asked[1] != "cites:"+recs[0].OpenAlexID {
		t.Errorf("filters asked: %q", asked)
	}
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
