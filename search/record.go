// Package search owns everything that finds and reads sources: the shared
// HTTP client (rate limits, retries, caps), the scholarly and web sources,
// document fetching (PDF and HTML to text) and sentence-aware chunking.
// It imports none of the other researchtui packages.
package search

import "context"

// Record is one work as every source reports it, normalised so that the
// pipeline never needs to know which API a paper came from.
type Record struct {
	// Key is the stable identity used for deduplication and storage:
	// "doi:10.1103/physrevb.85.115117", "arxiv:1111.2011", "pmid:123",
	// "s2:abcd", "openalex:W123" or "title:<normalised title>|<year>".
	Key        string   `json:"key"`
	Source     string   `json:"source"`             // the source that found it first: arxiv, openalex, ...
	FoundBy    []string `json:"found_by,omitempty"` // every source that returned it
	DOI        string   `json:"doi,omitempty"`      // lower-case, no https://doi.org/ prefix
	ArxivID    string   `json:"arxiv_id,omitempty"` // without version suffix
	PMID       string   `json:"pmid,omitempty"`
	S2ID       string   `json:"s2_id,omitempty"`
	OpenAlexID string   `json:"openalex_id,omitempty"`
	PMCID      string   `json:"pmcid,omitempty"` // "PMC1234567"
	Title      string   `json:"title"`
	Authors    []string `json:"authors,omitempty"` // "Given Family" as the source wrote them
	Year       int      `json:"year,omitempty"`
	Venue      string   `json:"venue,omitempty"`
	Abstract   string   `json:"abstract,omitempty"`
	URL        string   `json:"url,omitempty"`     // landing page
	PDFURL     string   `json:"pdf_url,omitempty"` // best open-access PDF
	Citations  int      `json:"citations,omitempty"`
	// Data holds structured properties (Materials Project: band gap,
	// formation energy, ...). Records with Data are facts, not prose: the
	// pipeline passes them to the writer as a data block and never filters
	// them by vector similarity.
	Data map[string]any `json:"data,omitempty"`
	// Path is the file a local-corpus record was read from.
	Path string `json:"path,omitempty"`
	// References are the OpenAlex IDs of the works this one cites, when
	// the source reports them (OpenAlex's referenced_works), for citation
	// chasing.
	References []string `json:"references,omitempty"`
}

// HasData reports whether r carries structured properties.
func (r Record) HasData() bool { return len(r.Data) > 0 }

// Source is one searchable provider of Records.
type Source interface {
	// Name is the short lower-case name used in --sources: arxiv, openalex, ...
	Name() string
	// Search returns at most limit records for the query. An empty result is
	// not an error; a malformed or failed answer is.
	Search(ctx context.Context, query string, limit int) ([]Record, error)
}

// parseUpTo parses an API answer and keeps at most limit records (APIs
// round page sizes up). Whatever records a parser salvaged from a partly
// malformed answer are kept along with its error.
func parseUpTo(parse func([]byte) ([]Record, error), body []byte, limit int) ([]Record, error) {
	recs, err := parse(body)
	if len(recs) > limit {
		recs = recs[:limit]
	}
	return recs, err
}
