package search

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path"
	"slices"
	"strings"
	"testing"
)

// recording is a recorded answer a source's server gives on a path that
// ends with suffix ("" any path).
type recording struct{ suffix, file string }

// recordings are what each source is replayed against: real answers of
// its API (testdata/ATTRIBUTION.md). A source added to Descriptors
// without one fails TestEverySourceReplaysItsRecording.
var recordings = map[string][]recording{
	"arxiv":           {{"", "arxiv/id_list-0808.05394-1707.08567.atom.xml"}},
	"openalex":        {{"/works", "openalex/works-filter-title.search-augmenting-llms-chemistry-tools.json"}},
	"pubmed":          {{"/esearch.fcgi", "pubmed/esearch-term-Darwin-au.json"}, {"/efetch.fcgi", "pubmed/efetch-pubmed-id-11748933_11700088.xml"}},
	"semanticscholar": {{"/paper/search", "semanticscholar/paper-search-turing-allfields-limit100.json"}},
	"crossref":        {{"/works", "crossref/works-query-ecology-rows2.json"}},
	"web":             {{"/search", "searxng/search-q-python-format-json.json"}},
	"materials":       {{"/materials/summary/", "materials/summary-Fe2O3.json"}},
}

// Every source in Descriptors, built from its descriptor as the command
// line builds it (its URL variable pointing at a server that replays its
// recording, a key where it needs one), finds works with titles; the
// local source searches the person's documents.
func TestEverySourceReplaysItsRecording(t *testing.T) {
	t.Parallel()
	for _, d := range Descriptors {
		t.Run(d.Name, func(t *testing.T) {
			vars := map[string]string{"MP_API_KEY": "key"}
			e := Env{Getenv: func(k string) string { return vars[k] }, ContactEmail: "me@example.org",
				LocalDocs: func() ([]LocalDoc, error) {
					return []LocalDoc{{Record: Record{Title: "The graphene notebook", Key: "local:notes"}, Text: "graphene grown on copper"}}, nil
				}}
			if d.Name != "local" {
				recs, ok := recordings[d.Name]
				if !ok {
					t.Fatalf("source %q has no recording to replay: add one to testdata and to recordings", d.Name)
				}
				srv := replay(t, recs)
				vars[d.URLEnv] = srv.URL
				e.Client = noWaitClient(srv.URL)
			}
			b := d.New(e)
			if b.Source == nil || b.Missing != "" {
				t.Fatalf("not built: %q", b.Missing)
			}
			if b.Source.Name() != d.Name {
				t.Errorf("built as %q", b.Source.Name())
			}
			q := d.Probe                      // what doctor asks: it must reach the server
			if q == "" || d.Name == "local" { // doctor counts the local documents
				q = "graphene"
			}
			got, err := b.Source.Search(context.Background(), q, 5)
			if err != nil || len(got) == 0 || got[0].Title == "" {
				t.Fatalf("search for doctor's probe %q: %d records, %v", q, len(got), err)
			}
		})
	}
}

// replay serves recs: each request the recording whose suffix ends its
// path (the longest that does).
func replay(t *testing.T, recs []recording) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		best := -1
		for i, rec := range recs {
			if strings.HasSuffix(r.URL.Path, rec.suffix) && (best < 0 || len(rec.suffix) > len(recs[best].suffix)) {
				best = i
			}
		}
		if best < 0 {
			http.NotFound(w, r)
			return
		}
		ctype := map[string]string{".json": "application/json", ".xml": "text/xml"}[path.Ext(recs[best].file)]
		w.Header().Set("Content-Type", ctype)
		w.Write(fixture(t, recs[best].file))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// Without their variables and keys, the sources that need them are off
// and say how to turn them on; the rest are built with their default URL.
func TestSourcesOffWithoutTheirKeys(t *testing.T) {
	t.Parallel()
	e := Env{Client: testClient(), Getenv: func(string) string { return "" }}
	for _, d := range Descriptors {
		b := d.New(e)
		switch d.Name {
		case "web", "materials", "local":
			if b.Source != nil && b.Missing == "" {
				t.Errorf("%s is on with nothing configured", d.Name)
			}
			if b.Missing == "" {
				t.Errorf("%s does not say how to turn it on", d.Name)
			}
		default:
			if b.Source == nil || b.Missing != "" || b.URL != d.DefaultURL {
				t.Errorf("%s: built %v, missing %q, URL %q", d.Name, b.Source != nil, b.Missing, b.URL)
			}
		}
	}
}

// The routes the descriptors give are the planner's routes as they were
// written out by hand: a biomedical question goes to PubMed first, a
// materials one to the Materials Project.
func TestRoutesFromTheDescriptors(t *testing.T) {
	t.Parallel()
	want := map[string][]string{
		IntentBiomedical: {"pubmed", "semanticscholar", "openalex", "crossref", "local", "arxiv", "web"},
		IntentCSPhysics:  {"arxiv", "semanticscholar", "openalex", "local", "crossref", "web"},
		IntentMaterials:  {"materials", "arxiv", "openalex", "semanticscholar", "crossref", "local", "web"},
		IntentGeneral:    {"web", "openalex", "semanticscholar", "crossref", "local", "arxiv", "pubmed"},
	}
	for intent, w := range want {
		if got := Route(intent); !slices.Equal(got, w) {
			t.Errorf("%s: %v, want %v", intent, got, w)
		}
	}
	if Route("astrology") != nil {
		t.Error("an unknown intent has a route")
	}
	if got := SourceNames(); !slices.Equal(got, []string{"arxiv", "openalex", "pubmed", "semanticscholar", "crossref", "web", "local", "materials"}) {
		t.Errorf("names %v", got)
	}
}
