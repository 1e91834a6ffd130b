package search

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// TestS2BatchFindsAbstracts replays Semantic Scholar's recorded answer to a
// POST /paper/batch of four IDs (the first unknown: null): the works asked
// by paper ID and by DOI come back with their abstracts, the unknown one is
// left out, and a work whose answer names another work (the answer is
// positional, and a changed order must not attach a stranger's abstract)
// gets nothing.
func TestS2BatchFindsAbstracts(t *testing.T) {
	t.Parallel()
	body, err := os.ReadFile("testdata/semanticscholar/paper-batch-4ids-allfields.json")
	if err != nil {
		t.Fatal(err)
	}
	var asked [][]string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ IDs []string }
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &req)
		if r.Method != http.MethodPost || r.URL.Path != "/graph/v1/paper/batch" || !strings.Contains(r.URL.Query().Get("fields"), "abstract") {
			t.Errorf("request %s %s", r.Method, r.URL)
		}
		asked = append(asked, req.IDs)
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	defer srv.Close()
	c := NewClient(ClientOptions{})
	c.SetHostLimit(strings.TrimPrefix(srv.URL, "http://"), 0)
	s2 := NewSemanticScholar(c, srv.URL, "").(AbstractFinder)

	recs := []Record{
		{Title: "an unknown work", DOI: "10.9999/not-there"},
		{Title: "How Much Should We Trust Differences-in-Differences Estimates?", S2ID: "c31c87c591a25c64fbaa82e8ac6a81831b6ac7ce"},
		{Title: "The Miracle of Microfinance?", DOI: "10.2139/SSRN.2250500"},
		{Title: "Improving Third-Party Audits", S2ID: "0f40b1f08821e22e859c6050916cec3667778613"},
		{Title: "no identifier at all"},
	}
	found, err := s2.FindAbstracts(t.Context(), recs)
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || len(asked[0]) != 4 || asked[0][2] != "DOI:10.2139/SSRN.2250500" {
		t.Errorf("asked %q; want one request for the four works with an identifier", asked)
	}
	if len(found) != len(recs) || found[0].Abstract != "" || found[4].Abstract != "" {
		t.Fatalf("found %+v; want one entry per work asked, none for the unknown work and the one without an identifier", found)
	}
	if !strings.HasPrefix(found[1].Abstract, "Most Difference-in-Difference (DD) papers") || found[2].Year != 2013 ||
		!strings.HasPrefix(found[2].Abstract, "Microcredit has spread") || !strings.HasPrefix(found[3].Abstract, "Researchers: Esther Duflo") {
		t.Errorf("found %+v", found)
	}

	// The same answer to works asked in another order matches none.
	shuffled := []Record{recs[3], recs[2], recs[1], recs[0]}
	found, err = s2.FindAbstracts(t.Context(), shuffled)
	for _, f := range found {
		if f.Abstract != "" {
			t.Errorf("an answer for other works attached an abstract: %q to %q", f.Abstract[:40], f.Title)
		}
	}
	if err != nil {
		t.Error(err)
	}
}

// TestOpenAlexFindsAbstractsByDOI replays OpenAlex's recorded list of two
// works (the journal and arXiv versions of "Augmenting large language
// models with chemistry tools") to a filter by DOI: each work asked by one
// of those DOIs gets its own abstract, whatever the order of the answer;
// a DOI OpenAlex does not list and a work without a DOI get nothing, and
// the DOIs go in one request.
func TestOpenAlexFindsAbstractsByDOI(t *testing.T) {
	t.Parallel()
	body, err := os.ReadFile("testdata/openalex/works-filter-title.search-augmenting-llms-chemistry-tools.json")
	if err != nil {
		t.Fatal(err)
	}
	var filters []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		filters = append(filters, r.URL.Query().Get("filter"))
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	defer srv.Close()
	c := NewClient(ClientOptions{})
	c.SetHostLimit(strings.TrimPrefix(srv.URL, "http://"), 0)
	oa := NewOpenAlex(c, srv.URL, "").(AbstractFinder)
	recs := []Record{
		{Title: "ChemCrow", DOI: "10.48550/arXiv.2304.05376"},
		{Title: "an unknown work", DOI: "10.9999/not-there"},
		{Title: "Augmenting large language models with chemistry tools", DOI: "https://doi.org/10.1038/S42256-024-00832-8"},
		{Title: "no identifier at all"},
	}
	found, err := oa.FindAbstracts(t.Context(), recs)
	if err != nil {
		t.Fatal(err)
	}
	if len(filters) != 1 || strings.Count(filters[0], "|") != 2 || !strings.HasPrefix(filters[0], "doi:") {
		t.Errorf("filters %q; want one request naming the three DOIs", filters)
	}
	if len(found) != 4 || found[1].Abstract != "" || found[3].Abstract != "" {
		t.Fatalf("found %+v; want nothing for the unknown DOI and the work without one", found)
	}
	if found[0].Abstract == "" || found[2].Abstract == "" || found[0].Abstract == found[2].Abstract && found[0].DOI == found[2].DOI {
		t.Errorf("each version must get its own record: %q / %q", found[0].DOI, found[2].DOI)
	}
	if NormalizeDOI(found[0].DOI) != NormalizeDOI(recs[0].DOI) || NormalizeDOI(found[2].DOI) != NormalizeDOI(recs[2].DOI) {
		t.Errorf("matched by position, not by DOI: %q, %q", found[0].DOI, found[2].DOI)
	}
}
