package replay_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/researchtui/researchtui/search/replay"
)

var recordings = fstest.MapFS{
	"arxiv/feed.atom.xml":   {Data: []byte(`<feed xmlns="http://www.w3.org/2005/Atom"></feed>`)},
	"s2/references.json":    {Data: []byte(`{"data":[{"citedPaper":{"paperId":"r1","title":"A reference"}}]}`)},
	"s2/citations.json":     {Data: []byte(`{"data":[{"citingPaper":{"paperId":"c1","title":"A citing work"}}]}`)},
	"s2/search-pool.json":   {Data: []byte(pool)},
	"crossref/ecology.json": {Data: []byte(`{"message":{"items":[]}}`)},
}

const pool = `{"total": 4, "data": [
 {"paperId": "p1", "title": "Turing machines and computability", "abstract": "A Turing machine computes."},
 {"paperId": "p2", "title": "The Turing test", "abstract": "Can machines think? The imitation game as a test."},
 {"paperId": "p3", "title": "Turing patterns in chemistry", "abstract": null},
 {"paperId": "p4", "title": "Kubernetes autoscaling", "abstract": "Pods scale."}]}`

func get(t *testing.T, u string) (int, string, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// TestRoutesServeTheRecordings: each route answers at its API's path,
// byte for byte, with the API's content type; a route not given is not
// served; Semantic Scholar's graph answers references and citations of
// any paper with the recorded pages and anything else with its 404.
func TestRoutesServeTheRecordings(t *testing.T) {
	t.Parallel()
	s := replay.Serve(replay.Routes{
		Arxiv:                replay.Recorded(recordings, "arxiv/feed.atom.xml", replay.Atom),
		SemanticScholarGraph: replay.SemanticScholarGraph(recordings, "s2/references.json", "s2/citations.json"),
		Crossref:             replay.Recorded(recordings, "crossref/ecology.json", replay.JSON),
	}.Mux())
	defer s.Close()
	if !strings.HasPrefix(s.URL, "http://127.0.0.1:") || s.Host() != strings.TrimPrefix(s.URL, "http://") {
		t.Errorf("not loopback: %s (host %s)", s.URL, s.Host())
	}
	for _, c := range []struct {
		url, ctype, body string
		status           int
	}{
		{s.ArxivURL() + "?search_query=all:anything", replay.Atom, string(recordings["arxiv/feed.atom.xml"].Data), 200},
		{s.SemanticScholarURL() + "/graph/v1/paper/DOI:10.1/x/references?limit=5", replay.JSON, string(recordings["s2/references.json"].Data), 200},
		{s.SemanticScholarURL() + "/graph/v1/paper/CorpusID:1/citations", replay.JSON, string(recordings["s2/citations.json"].Data), 200},
		{s.SemanticScholarURL() + "/graph/v1/paper/batch", replay.JSON, `{"error":"Paper with id 0 not found"}` + "\n", 404},
		{s.CrossrefURL() + "/works?query=ecology", replay.JSON, string(recordings["crossref/ecology.json"].Data), 200},
	} {
		status, ctype, body := get(t, c.url)
		if status != c.status || ctype != c.ctype || body != c.body {
			t.Errorf("%s: %d %q %q; want %d %q %q", c.url, status, ctype, body, c.status, c.ctype, c.body)
		}
	}
	for _, u := range []string{s.OpenAlexURL() + "/works?search=x", s.PubMedURL() + "/esearch.fcgi", s.SemanticScholarURL() + "/graph/v1/paper/search?query=x"} {
		if status, _, _ := get(t, u); status != http.StatusNotFound {
			t.Errorf("%s, a route not given: %d", u, status)
		}
	}
}

// TestMissingRecordingPanics: a world that names a recording it does not
// embed fails when it is built, not in a handler.
func TestMissingRecordingPanics(t *testing.T) {
	t.Parallel()
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "nothing.json") {
			t.Errorf("recovered %v; want a panic naming the recording", r)
		}
	}()
	replay.Recorded(recordings, "nothing.json", replay.JSON)
}

func search(t *testing.T, p *replay.Pool, q url.Values) (int, map[string]any) {
	t.Helper()
	rec := httptest.NewRecorder()
	p.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/s2/graph/v1/paper/search?"+q.Encode(), nil))
	var page map[string]any
	if rec.Code == http.StatusOK {
		if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil {
			t.Fatalf("%v: %s", err, rec.Body)
		}
	}
	return rec.Code, page
}

func ids(page map[string]any) []string {
	var out []string
	for _, d := range page["data"].([]any) {
		out = append(out, d.(map[string]any)["paperId"].(string))
	}
	return out
}

// TestPoolRanksByTheQuery: the papers holding the query's words, best
// first (a title word counts twice), a page at a time, with total and
// next; a page the real API refuses is a 400.
func TestPoolRanksByTheQuery(t *testing.T) {
	t.Parallel()
	p, err := replay.NewPool([]byte(pool))
	if err != nil {
		t.Fatal(err)
	}
	_, page := search(t, p, url.Values{"query": {"Turing test"}})
	if got := ids(page); len(got) != 3 || got[0] != "p2" || page["total"] != float64(3) || page["next"] != nil {
		t.Errorf(`"Turing test": %v (total %v, next %v); want p2 first of the three Turing papers, no next`, got, page["total"], page["next"])
	}
	_, first := search(t, p, url.Values{"query": {"turing"}, "limit": {"2"}})
	_, second := search(t, p, url.Values{"query": {"turing"}, "offset": {"2"}, "limit": {"2"}})
	if a, b := ids(first), ids(second); len(a) != 2 || len(b) != 1 || first["next"] != float64(2) || second["offset"] != float64(2) || a[0] == b[0] {
		t.Errorf("pages: %v (next %v), %v (offset %v)", a, first["next"], b, second["offset"])
	}
	if _, none := search(t, p, url.Values{"query": {"the of and"}}); len(ids(none)) != 0 || none["total"] != float64(0) {
		t.Errorf("stop words only: %v", none)
	}
	for _, q := range []url.Values{{"query": {"turing"}, "limit": {"101"}}, {"query": {"turing"}, "offset": {"-1"}}} {
		if code, _ := search(t, p, q); code != http.StatusBadRequest {
			t.Errorf("%v: %d; want 400", q, code)
		}
	}
	if _, err := replay.NewPool([]byte("<html>")); err == nil {
		t.Error("a pool of HTML parsed")
	}
}

// FuzzPool: whatever the recorded bytes and the query, a pool answers a
// search with JSON or refuses it, never panics.
func FuzzPool(f *testing.F) {
	f.Add([]byte(pool), "turing test", 0, 10)
	f.Add([]byte(`{"data":[1,"x",null,{"title":7}]}`), "x", 3, 100)
	f.Add([]byte(`{"data":null}`), "", -1, 0)
	f.Fuzz(func(t *testing.T, recorded []byte, query string, offset, limit int) {
		p, err := replay.NewPool(recorded)
		if err != nil {
			return
		}
		rec := httptest.NewRecorder()
		q := url.Values{"query": {query}, "offset": {strconv.Itoa(offset)}, "limit": {strconv.Itoa(limit)}}
		p.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/search?"+q.Encode(), nil))
		if rec.Code == http.StatusOK && !json.Valid(rec.Body.Bytes()) {
			t.Errorf("not JSON: %s", rec.Body)
		}
	})
}
