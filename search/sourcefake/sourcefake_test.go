package sourcefake_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/search/sourcefake"
)

func TestFakeServesRecordedResponses(t *testing.T) {
	s := sourcefake.New()
	defer s.Close()
	c := search.NewClient(search.ClientOptions{BaseBackoff: time.Millisecond})
	ctx := context.Background()
	recs, err := search.NewArxiv(c, s.ArxivURL()).Search(ctx, "testing", 10)
	if err != nil || len(recs) != 10 {
		t.Fatalf("arxiv: %v %d", err, len(recs))
	}
	recs, err = search.NewArxiv(c, s.ArxivURL()).Search(ctx, "au:del_maestro", 10)
	if err != nil || len(recs) != 10 || !strings.Contains(strings.Join(recs[0].Authors, ","), "Maestro") {
		t.Fatalf("legacy: %v %+v", err, recs)
	}
	recs, err = search.NewOpenAlex(c, s.OpenAlexURL(), "").Search(ctx, "chemistry tools", 10)
	if err != nil || len(recs) != 2 {
		t.Fatalf("openalex: %v %d", err, len(recs))
	}
	s.FailArxiv(400)
	if _, err := search.NewArxiv(c, s.ArxivURL()).Search(ctx, "x", 1); err == nil {
		t.Error("FailArxiv(400) ignored")
	}
	s.FailOpenAlex(404)
	if _, err := search.NewOpenAlex(c, s.OpenAlexURL(), "").Search(ctx, "x", 1); err == nil {
		t.Error("FailOpenAlex(404) ignored")
	}
	if n := len(s.Requests()); n != 5 {
		t.Errorf("%d requests logged: %v", n, s.Requests())
	}
}

// The fake PubMed and Crossref answer the real clients with their
// recordings, so fakeserve's world has every source that needs no key.
func TestPubMedAndCrossrefAnswer(t *testing.T) {
	s := sourcefake.New()
	defer s.Close()
	c := search.NewClient(search.ClientOptions{})
	for _, src := range []search.Source{search.NewPubMed(c, s.PubMedURL(), "", ""), search.NewCrossref(c, s.CrossrefURL(), "")} {
		recs, err := src.Search(context.Background(), "ecology", 5)
		if err != nil || len(recs) != 2 || recs[0].Title == "" {
			t.Errorf("%s: %d records, %v", src.Name(), len(recs), err)
		}
	}
}

// Semantic Scholar's graph answers the recorded references and citing
// works of any paper, and the recorded 504 for citations while
// FailCitations is on (the references still answer).
func TestCitationsFailOnDemand(t *testing.T) {
	t.Parallel()
	s := sourcefake.New()
	defer s.Close()
	c := search.NewClient(search.ClientOptions{BaseBackoff: time.Millisecond, Retries: -1})
	ss := search.NewSemanticScholar(c, s.SemanticScholarURL(), "").(search.CitationGraph)
	rec := search.Record{S2ID: "0123456789abcdef0123456789abcdef01234567"}
	ctx := context.Background()
	refs, err := ss.References(ctx, rec, 100)
	if err != nil || len(refs) == 0 {
		t.Fatalf("references: %d, %v", len(refs), err)
	}
	if cites, err := ss.CitedBy(ctx, rec, 100); err != nil || len(cites) == 0 {
		t.Fatalf("citations: %d, %v", len(cites), err)
	}
	s.FailCitations(true)
	if _, err := ss.CitedBy(ctx, rec, 100); err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Errorf("citations while failing: %v; want the recorded 504", err)
	}
	if again, err := ss.References(ctx, rec, 100); err != nil || len(again) != len(refs) {
		t.Errorf("references while citations fail: %d, %v", len(again), err)
	}
}
