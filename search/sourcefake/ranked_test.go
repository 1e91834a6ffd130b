package sourcefake_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/search/sourcefake"
)

// TestRankedPoolRanksByTheQuery: with a pool, Semantic Scholar's search
// answers as the real API does: the papers that hold the query's words,
// best first, a page at a time.
func TestRankedPoolRanksByTheQuery(t *testing.T) {
	s := sourcefake.NewWith(sourcefake.Options{Pool: "turing"})
	defer s.Close()
	c := search.NewClient(search.ClientOptions{BaseBackoff: time.Millisecond})
	ss := search.NewSemanticScholar(c, s.SemanticScholarURL(), "")
	recs, err := ss.Search(context.Background(), "Turing test", 10)
	if err != nil || len(recs) != 10 {
		t.Fatalf("%v, %d records; want 10 (the limit)", err, len(recs))
	}
	for _, r := range recs[:5] {
		if !strings.Contains(strings.ToLower(r.Title), "test") {
			t.Errorf("among the best five for \"Turing test\": %q", r.Title)
		}
	}
	other, err := ss.Search(context.Background(), "Turing patterns reaction diffusion", 10)
	if err != nil || len(other) == 0 || recs[0].Title == other[0].Title {
		t.Fatalf("another query, the same best paper (%q): the pool is not ranked by the query (%v)", recs[0].Title, err)
	}
	none, err := ss.Search(context.Background(), "kubernetes", 10)
	if err != nil || len(none) != 0 {
		t.Errorf("a word no paper holds: %d records (%v); want none", len(none), err)
	}

	page := func(q string) map[string]any {
		resp, err := http.Get(s.SemanticScholarURL() + "/graph/v1/paper/search?" + q)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v: %s", q, err, b)
		}
		return m
	}
	first, second := page("query=turing+machine&offset=0&limit=5"), page("query=turing+machine&offset=5&limit=5")
	if first["next"] != float64(5) || second["offset"] != float64(5) || first["total"] != second["total"] {
		t.Errorf("pages: %v / %v", first["next"], second["offset"])
	}
	a, b := first["data"].([]any), second["data"].([]any)
	if len(a) != 5 || len(b) != 5 || a[0].(map[string]any)["paperId"] == b[0].(map[string]any)["paperId"] {
		t.Errorf("offset not honoured: %d and %d papers", len(a), len(b))
	}
}
