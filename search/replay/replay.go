// Package replay serves recorded answers of the scholarly APIs (arXiv,
// OpenAlex, Semantic Scholar, PubMed, Crossref) over a loopback HTTP
// server, from an fs.FS of recordings: the eval's frozen worlds
// (pipeline/eval, shipped in `researchtui eval`, with its own embedded
// recordings) and the test fake (search/sourcefake, with its testdata and
// the fault injection tests need) are both built on it. It also searches
// a recorded Semantic Scholar pool as the real API searches (ranked.go).
//
// Which request gets which recording is its users' choice (Routes); this
// package knows the APIs' paths and how to answer from a recording. Bodies
// are served byte-identical: links inside them still point at arxiv.org,
// doi.org, ..., so full-text fetches of those links fail offline and the
// pipeline falls back to the abstracts. It imports only the standard
// library (ARCHITECTURE.md §2).
package replay

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
)

// The paths each API is served under on a Server: a source's base URL is
// the server's URL followed by its path (Server.ArxivURL, ...).
const (
	ArxivPath           = "/arxiv/api/query"
	OpenAlexPath        = "/openalex"
	SemanticScholarPath = "/s2"
	PubMedPath          = "/pubmed"
	CrossrefPath        = "/crossref"
)

// The content types the real APIs answer with.
const (
	Atom = "application/atom+xml; charset=UTF-8" // arXiv
	JSON = "application/json"                    // OpenAlex, Semantic Scholar, Crossref, PubMed's esearch
	HTML = "text/html; charset=utf-8"            // OpenAlex's 404 page
	XML  = "text/xml"                            // PubMed's efetch
)

// Routes are a world's handlers, each served at its API's path; a nil
// one is not served (404).
type Routes struct {
	Arxiv        http.Handler // /arxiv/api/query
	OpenAlexList http.Handler // /openalex/works
	OpenAlexWork http.Handler // /openalex/works/{id}
	// SemanticScholarSearch answers /s2/graph/v1/paper/search (a Pool
	// ranks by the query, Recorded answers one page whole);
	// SemanticScholarGraph every other path under /s2/graph/v1/paper/
	// (references, citations, POST /paper/batch; SemanticScholarGraph).
	SemanticScholarSearch http.Handler
	SemanticScholarGraph  http.Handler
	PubMedSearch          http.Handler // /pubmed/esearch.fcgi
	PubMedFetch           http.Handler // /pubmed/efetch.fcgi
	Crossref              http.Handler // /crossref/works
}

// Mux is a ServeMux with each route at its path; its user may add its
// own (the test fake's PDFs).
func (r Routes) Mux() *http.ServeMux {
	mux := http.NewServeMux()
	for path, h := range map[string]http.Handler{
		ArxivPath:                r.Arxiv,
		OpenAlexPath + "/works":  r.OpenAlexList,
		OpenAlexPath + "/works/": r.OpenAlexWork,
		SemanticScholarPath + "/graph/v1/paper/search": r.SemanticScholarSearch,
		SemanticScholarPath + "/graph/v1/paper/":       r.SemanticScholarGraph,
		PubMedPath + "/esearch.fcgi":                   r.PubMedSearch,
		PubMedPath + "/efetch.fcgi":                    r.PubMedFetch,
		CrossrefPath + "/works":                        r.Crossref,
	} {
		if h != nil {
			mux.Handle(path, h)
		}
	}
	return mux
}

// Server is a loopback HTTP server (httptest's: 127.0.0.1, a free port).
// Close it when done.
type Server struct {
	URL string // http://127.0.0.1:port
	srv *httptest.Server
}

// Serve starts a server answering with h.
func Serve(h http.Handler) *Server {
	srv := httptest.NewServer(h)
	return &Server{URL: srv.URL, srv: srv}
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Host is the server's host:port, for search.Client.SetHostLimit.
func (s *Server) Host() string { return strings.TrimPrefix(s.URL, "http://") }

// ArxivURL is the base URL for search.NewArxiv (or RESEARCHTUI_ARXIV_URL).
func (s *Server) ArxivURL() string { return s.URL + ArxivPath }

// OpenAlexURL is the base URL for search.NewOpenAlex (or RESEARCHTUI_OPENALEX_URL).
func (s *Server) OpenAlexURL() string { return s.URL + OpenAlexPath }

// SemanticScholarURL is the base URL for search.NewSemanticScholar (or
// RESEARCHTUI_SEMANTICSCHOLAR_URL).
func (s *Server) SemanticScholarURL() string { return s.URL + SemanticScholarPath }

// PubMedURL is the base URL for search.NewPubMed (or RESEARCHTUI_PUBMED_URL).
func (s *Server) PubMedURL() string { return s.URL + PubMedPath }

// CrossrefURL is the base URL for search.NewCrossref (or RESEARCHTUI_CROSSREF_URL).
func (s *Server) CrossrefURL() string { return s.URL + CrossrefPath }

// Body is the recording name in rec. The recordings are their user's own
// embedded data, so a missing one is a bug of the program, not a condition
// to answer: Body panics, and the first test that serves it says so.
func Body(rec fs.FS, name string) []byte {
	b, err := fs.ReadFile(rec, name)
	if err != nil {
		panic("replay: no recording " + name + ": " + err.Error())
	}
	return b
}

// Write writes a recorded body as contentType with status (0 is 200). A
// client that went away gets nothing more; there is no one to tell.
func Write(w http.ResponseWriter, status int, contentType string, body []byte) {
	w.Header().Set("Content-Type", contentType)
	if status != 0 {
		w.WriteHeader(status)
	}
	_, _ = w.Write(body)
}

// Recorded answers every request with the recording name (read now) as
// contentType.
func Recorded(rec fs.FS, name, contentType string) http.Handler {
	b := Body(rec, name)
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { Write(w, 0, contentType, b) })
}

// SemanticScholarGraph answers /paper/{id}/references and /citations with
// the recorded pages references and citations (read now), whatever the
// paper, and any other path (a paper, POST /paper/batch) with the API's
// 404.
func SemanticScholarGraph(rec fs.FS, references, citations string) http.Handler {
	refs, cites := Body(rec, references), Body(rec, citations)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/references"):
			Write(w, 0, JSON, refs)
		case strings.HasSuffix(r.URL.Path, "/citations"):
			Write(w, 0, JSON, cites)
		default:
			Write(w, http.StatusNotFound, JSON, []byte(`{"error":"Paper with id 0 not found"}`+"\n"))
		}
	})
}
