package sourcefake

import "net/http"

// PubMedURL is the base URL for search.NewPubMed (or
// RESEARCHTUI_PUBMED_URL): every search finds the two papers of the
// recorded efetch answer (cryopreservation of sperm, 2001).
func (s *Server) PubMedURL() string { return s.srv.PubMedURL() }

// CrossrefURL is the base URL for search.NewCrossref (or
// RESEARCHTUI_CROSSREF_URL): every search answers the recorded "ecology"
// page (2 works with abstracts).
func (s *Server) CrossrefURL() string { return s.srv.CrossrefURL() }

// pubmedSearch answers esearch with the PMIDs of the recorded efetch
// answer, as PubMed's search would list them: the client keeps only the
// records esearch named, in its order.
func (s *Server) pubmedSearch(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"header":{"type":"esearch","version":"0.3"},"esearchresult":{"count":"2","retmax":"2","retstart":"0","idlist":["11700088","11748933"]}}`))
}
