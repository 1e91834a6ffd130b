// Package sourcefake is the test fake of the scholarly APIs: an in-process
// HTTP server (search/replay's) that replays real recorded arXiv,
// OpenAlex, Semantic Scholar, PubMed and Crossref responses (its own
// testdata; see testdata/ATTRIBUTION.md), with the faults, latencies and
// helpers tests need (FailArxiv, FailOpenAlex, FailCitations, Latency,
// ArxivSpacing, a served PDF, AddOpenAlexWork, Requests). It is a normal
// (non-test) package so other packages' tests, pipeline/pipelinetest and
// tools/fakeserve can import it; shipped code does not (ARCHITECTURE.md
// §2): the eval's frozen worlds replay their own recordings through
// search/replay.
//
// Bodies are served byte-identical: links inside them still point at
// arxiv.org, nature.com, ..., so full-text fetches of those links fail
// offline and the pipeline falls back to the abstracts.
package sourcefake

import (
	"bytes"
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/researchtui/researchtui/search/replay"
)

//go:embed testdata
var files embed.FS

// recordings are the recorded answers, by their path under testdata/.
var recordings, _ = fs.Sub(files, "testdata")

func body(name string) []byte { return replay.Body(recordings, name) }

// Server is the fake. Point the sources at ArxivURL() and OpenAlexURL().
type Server struct {
	URL string

	srv *replay.Server
	opt Options

	mu            sync.Mutex
	requests      []string
	arxivFail     int
	arxivNext     time.Time // ArxivSpacing: when arXiv may answer next
	citationsFail bool
	openAlexFail  int
	openAlexNew   []map[string]any // works published since the recording (AddOpenAlexWork)
}

// New starts a fake server; Close it when done.
func New() *Server { return NewWith(Options{}) }

// Options shape the fake's world.
type Options struct {
	// Latency delays every answer, as a real API's round trip does (~300 ms).
	Latency time.Duration
	// ArxivSpacing spaces arXiv's answers at least this far apart, as the
	// real API asks of its clients (3 s), whoever the client is.
	ArxivSpacing time.Duration
	// PDF, when set, is served at /pdf/<anything> after DocLatency, and the
	// arXiv feeds' PDF links (https://arxiv.org/pdf/...) point there. The
	// client must then be allowed to fetch from loopback.
	PDF        []byte
	DocLatency time.Duration
	// Pool, when set, makes Semantic Scholar's search rank that recorded
	// pool (a key of Pools) by the query and honour offset and limit, as
	// the real API does (ranked.go); unset, every search answers the
	// recorded "turing" page whole.
	Pool string
}

// NewWith starts a fake server with options; Close it when done.
func NewWith(opt Options) *Server {
	s := &Server{opt: opt}
	var s2Search http.Handler = replay.Recorded(recordings, "semanticscholar/paper-search-turing-allfields-limit100.json", replay.JSON)
	if opt.Pool != "" {
		s2Search = pool(opt.Pool)
	}
	mux := replay.Routes{
		Arxiv:                 http.HandlerFunc(s.arxiv),
		OpenAlexList:          http.HandlerFunc(s.openAlexList),
		OpenAlexWork:          http.HandlerFunc(s.openAlexWork),
		SemanticScholarSearch: s2Search,
		SemanticScholarGraph: s.failingCitations(replay.SemanticScholarGraph(recordings,
			"semanticscholar/paper-references-ssrn.2250500-fields-title-offset0.json",
			"semanticscholar/paper-citations-corpusid-14514057-fields-title-offset0.json")),
		PubMedSearch: http.HandlerFunc(s.pubmedSearch),
		PubMedFetch:  replay.Recorded(recordings, "pubmed/efetch-pubmed-id-11748933_11700088.xml", replay.XML),
		Crossref:     replay.Recorded(recordings, "crossref/works-query-ecology-rows2.json", replay.JSON),
	}.Mux()
	mux.HandleFunc("/pdf/", s.pdf)
	s.srv = replay.Serve(s.log(mux))
	s.URL = s.srv.URL
	return s
}

// ArxivURL is the base URL for search.NewArxiv (or RESEARCHTUI_ARXIV_URL).
func (s *Server) ArxivURL() string { return s.srv.ArxivURL() }

// SemanticScholarURL is the base URL for search.NewSemanticScholar (or
// RESEARCHTUI_SEMANTICSCHOLAR_URL). Every search answers with the recorded
// "turing" search: 100 papers, most of them namesakes of one another (the
// Turing test, Turing machines, Turing patterns, an NVIDIA GPU, catalysts).
// /paper/{id}/references and /citations answer the recorded pages (50
// references of a microfinance paper; 100 citing works in development
// economics), whatever the paper; /citations answers the recorded 504
// while FailCitations is on.
func (s *Server) SemanticScholarURL() string { return s.srv.SemanticScholarURL() }

// failingCitations answers /citations with the recorded 504 while
// FailCitations is on, and passes the rest to graph.
func (s *Server) failingCitations(graph http.Handler) http.Handler {
	timeout := body("semanticscholar/error-504-citations-timeout.json")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		fail := s.citationsFail
		s.mu.Unlock()
		if fail && strings.HasSuffix(r.URL.Path, "/citations") {
			replay.Write(w, http.StatusGatewayTimeout, replay.JSON, timeout)
			return
		}
		graph.ServeHTTP(w, r)
	})
}

// FailCitations makes Semantic Scholar's /citations answer its recorded
// 504 ("Endpoint request timed out").
func (s *Server) FailCitations(on bool) {
	s.mu.Lock()
	s.citationsFail = on
	s.mu.Unlock()
}

// OpenAlexURL is the base URL for search.NewOpenAlex (or RESEARCHTUI_OPENALEX_URL).
func (s *Server) OpenAlexURL() string { return s.srv.OpenAlexURL() }

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Requests returns the request URIs served so far (path and query), in order.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// FailArxiv makes arXiv answer every request with status (0 restores it).
// 400 serves the real arXiv error feed; other statuses a short text body.
func (s *Server) FailArxiv(status int) {
	s.mu.Lock()
	s.arxivFail = status
	s.mu.Unlock()
}

// FailOpenAlex makes OpenAlex answer every request with status (0 restores
// it). 404 serves OpenAlex's real HTML 404 page.
func (s *Server) FailOpenAlex(status int) {
	s.mu.Lock()
	s.openAlexFail = status
	s.mu.Unlock()
}

func (s *Server) log(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r.URL.RequestURI())
		s.mu.Unlock()
		if !wait(r, s.opt.Latency) {
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (s *Server) fail(which *int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return *which
}

func (s *Server) pdf(w http.ResponseWriter, r *http.Request) {
	if s.opt.PDF == nil {
		http.NotFound(w, r)
		return
	}
	if !wait(r, s.opt.DocLatency) {
		return
	}
	w.Header().Set("Content-Type", "application/pdf")
	w.Write(s.opt.PDF)
}

// arxivTurn waits until arXiv may answer again (ArxivSpacing).
func (s *Server) arxivTurn(r *http.Request) bool {
	if s.opt.ArxivSpacing <= 0 {
		return true
	}
	s.mu.Lock()
	next := s.arxivNext
	if now := time.Now(); next.Before(now) {
		next = now
	}
	s.arxivNext = next.Add(s.opt.ArxivSpacing)
	s.mu.Unlock()
	return wait(r, time.Until(next))
}

func (s *Server) arxivBody(name string) []byte {
	b := body(name)
	if s.opt.PDF != nil {
		b = bytes.ReplaceAll(b, []byte("https://arxiv.org/pdf/"), []byte(s.URL+"/pdf/"))
		b = bytes.ReplaceAll(b, []byte("http://arxiv.org/pdf/"), []byte(s.URL+"/pdf/"))
	}
	return b
}

// wait sleeps d unless the client goes away first (false).
func wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

func (s *Server) arxiv(w http.ResponseWriter, r *http.Request) {
	if !s.arxivTurn(r) {
		return
	}
	w.Header().Set("Content-Type", "application/atom+xml; charset=UTF-8")
	if st := s.fail(&s.arxivFail); st != 0 {
		if st == http.StatusBadRequest {
			w.WriteHeader(st)
			w.Write(body("arxiv/id_list-abc-error-400.atom.xml"))
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(st)
		w.Write([]byte(http.StatusText(st)))
		return
	}
	q := strings.ToLower(r.URL.Query().Get("search_query") + " " + r.URL.Query().Get("id_list"))
	switch {
	case strings.Contains(q, "1111.2011"):
		w.Write(s.arxivBody("arxiv/legacy-2016-id_list-1111.2011v2.atom.xml"))
	case strings.Contains(q, "del_maestro"):
		w.Write(s.arxivBody("arxiv/legacy-2016-search_query-au-del_maestro.atom.xml"))
	case strings.Contains(q, "0000.0000") || strings.Contains(q, "noresults"):
		w.Write(s.arxivBody("arxiv/id_list-0000.0000-empty.atom.xml"))
	default:
		w.Write(s.arxivBody("arxiv/query-all-testing-max10.atom.xml"))
	}
}

func (s *Server) openAlexList(w http.ResponseWriter, r *http.Request) {
	if s.openAlexFailed(w) {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	q := strings.ToLower(r.URL.Query().Get("search") + " " + r.URL.Query().Get("filter"))
	if strings.Contains(q, "paperqa") {
		w.Write(body("openalex/works-filter-title.search-paperqa.json"))
		return
	}
	w.Write(s.withNewWorks(body("openalex/works-filter-title.search-augmenting-llms-chemistry-tools.json")))
}

func (s *Server) openAlexWork(w http.ResponseWriter, r *http.Request) {
	if s.openAlexFailed(w) {
		return
	}
	if strings.Contains(strings.ToLower(r.URL.Path), "pnas.1414271111") {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body("openalex/work-doi-10.1073-pnas.1414271111.json"))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusNotFound)
	w.Write(body("openalex/error-404-work-not-found.html"))
}

func (s *Server) openAlexFailed(w http.ResponseWriter) bool {
	st := s.fail(&s.openAlexFail)
	if st == 0 {
		return false
	}
	if st == http.StatusNotFound {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(st)
		w.Write(body("openalex/error-404-work-not-found.html"))
		return true
	}
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(st)
	w.Write([]byte(http.StatusText(st)))
	return true
}

// AddOpenAlexWork adds a work to every OpenAlex list answer from now on,
// in OpenAlex's own shape (the abstract as an inverted index): a paper
// published after the recording, for living-review updates.
func (s *Server) AddOpenAlexWork(id, doi, title string, year int, author, venue, abstract string) {
	index := map[string][]int{}
	for i, w := range strings.Fields(abstract) {
		index[w] = append(index[w], i)
	}
	work := map[string]any{
		"id": "https://openalex.org/" + id, "doi": "https://doi.org/" + doi, "title": title, "display_name": title,
		"publication_year": year, "type": "article", "cited_by_count": 0,
		"authorships":             []any{map[string]any{"author": map[string]any{"display_name": author}}},
		"primary_location":        map[string]any{"source": map[string]any{"display_name": venue}},
		"abstract_inverted_index": index,
	}
	s.mu.Lock()
	s.openAlexNew = append(s.openAlexNew, work)
	s.mu.Unlock()
}

// withNewWorks puts the added works first in a recorded list answer.
func (s *Server) withNewWorks(recorded []byte) []byte {
	s.mu.Lock()
	added := append([]map[string]any(nil), s.openAlexNew...)
	s.mu.Unlock()
	if len(added) == 0 {
		return recorded
	}
	var page map[string]any
	if json.Unmarshal(recorded, &page) != nil {
		return recorded
	}
	results, _ := page["results"].([]any)
	for i := len(added) - 1; i >= 0; i-- {
		results = append([]any{added[i]}, results...)
	}
	page["results"] = results
	out, err := json.Marshal(page)
	if err != nil {
		return recorded
	}
	return out
}
