// Package search owns everything that finds and reads sources: the shared
// HTTP client (rate limits, retries, caps), the scholarly and web sources,
// document fetching (PDF and HTML to text) and sentence-aware chunking.
// It imports none of the other researchtui packages.
package search

import (
	"context"
	"strings"

	"github.com/researchtui/researchtui/textkit"
)

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
	// Cut names the fields that were longer than any real metadata and
	// were cut ("title cut to 600 characters").
	Cut     []string `json:"cut,omitempty"`
	Authors []string `json:"authors,omitempty"` // "Given Family" as the source wrote them
	// AuthorsFiled are the same authors filed as "Family, Given" (an
	// organisation's name whole), when the record's source says which
	// words are the family name: a reference library, Crossref, PubMed.
	// The reference then needs no guess ("García Márquez, G.").
	AuthorsFiled []string `json:"authors_filed,omitempty"`
	Year         int      `json:"year,omitempty"`
	Venue        string   `json:"venue,omitempty"`
	// JournalRef is arXiv's free-text reference when it does not read as a
	// journal's ("In Proc. ISSTA 2020, pages 14-26"): kept as a note, not
	// printed as a journal name.
	JournalRef string `json:"journal_ref,omitempty"`
	Publication
	Abstract  string `json:"abstract,omitempty"`
	URL       string `json:"url,omitempty"`     // landing page
	PDFURL    string `json:"pdf_url,omitempty"` // best open-access PDF
	Citations int    `json:"citations,omitempty"`
	// Data holds structured properties (Materials Project: band gap,
	// formation energy, ...). Records with Data are facts, not prose: the
	// pipeline passes them to the writer as a data block and never filters
	// them by vector similarity.
	Data map[string]any `json:"data,omitempty"`
	// Path is the file a local-corpus record was read from (for an item
	// of the person's library, its attachment; empty when it has none).
	Path string `json:"path,omitempty"`
	// Library and LibraryID name an item of the person's reference
	// library (corpus's library import): the library ("zotero",
	// "refs.bib") and the item's ID in it. Its metadata came from the
	// library, its text from the person's own file.
	Library   string `json:"library,omitempty"`
	LibraryID string `json:"library_id,omitempty"`
	// Collections are the library collections (and "#tags") the item is
	// filed in, and "corpus" for a loose document of `corpus add`.
	Collections []string `json:"collections,omitempty"`
	// References are the OpenAlex IDs of the works this one cites, when
	// the source reports them (OpenAlex's referenced_works), for citation
	// chasing.
	References []string `json:"references,omitempty"`
	// Retracted says a source reported the work retracted or withdrawn
	// (OpenAlex is_retracted; Crossref updated-by/update-to of type
	// retraction or withdrawal, or relation is-retracted-by). A retracted
	// work is shown as such and is not used as support for claims unless
	// the question is about it. Retraction notices count too: OpenAlex
	// flags them the same way, and a notice is no support for the claims
	// of the paper it retracts.
	Retracted bool `json:"retracted,omitempty"`
	// Updates are the corrections, errata, retractions, expressions of
	// concern ... that the sources link to this work, so a reader can open
	// the notice itself.
	Updates []Update `json:"updates,omitempty"`
}

// Publication is how a work was published beyond its venue, as the
// person's reference library records it: what a full APA reference and a
// lossless export to a reference manager need.
type Publication struct {
	// ItemType is the CSL type the library gave ("book", "chapter",
	// "paper-conference", "article-journal", "thesis", "report" ...);
	// empty for works found online, whose type is guessed from the rest.
	ItemType  string `json:"item_type,omitempty"`
	Volume    string `json:"volume,omitempty"`
	Issue     string `json:"issue,omitempty"`
	Pages     string `json:"pages,omitempty"` // "1–10", with an en dash
	Publisher string `json:"publisher,omitempty"`
	// Editors are the editors of the book a chapter or paper is in, filed
	// as "Family, Given" (an organisation whole), for APA's "In E. Editor
	// (Ed.), *Book*".
	Editors []string `json:"editors,omitempty"`
}

// fillFrom takes the fields p lacks from src.
func (p *Publication) fillFrom(src Publication) {
	if len(p.Editors) == 0 && len(src.Editors) > 0 {
		p.Editors = append([]string(nil), src.Editors...)
	}
	fill(&p.ItemType, src.ItemType)
	fill(&p.Volume, src.Volume)
	fill(&p.Issue, src.Issue)
	fill(&p.Pages, src.Pages)
	fill(&p.Publisher, src.Publisher)
}

// Update is one editorial notice linked to a work.
type Update struct {
	// Type is the notice's kind in Crossref's words, lower case with
	// underscores: "retraction", "correction", "erratum", "corrigendum",
	// "expression_of_concern", "withdrawal", "addendum", "new_version" ...
	Type string `json:"type"`
	// DOI is the other side of the link: the notice's DOI when the work
	// is updated by it, the updated work's DOI when Notice is set.
	DOI string `json:"doi,omitempty"`
	// Date is when the update was made, "2015-05-04" (or "2015-05",
	// "2015"), as the source gives it.
	Date string `json:"date,omitempty"`
	// Source is who asserted the link: "publisher" or "retraction-watch"
	// (Crossref's source field), or the API that reported it ("openalex").
	Source string `json:"source,omitempty"`
	// Notice is set when this record is itself the notice (Crossref's
	// update-to): then DOI names the work it corrects or retracts.
	Notice bool `json:"notice,omitempty"`
}

// retractionTypes are the update kinds that take a work out of the
// literature; corrections and expressions of concern do not.
var retractionTypes = map[string]bool{
	"retraction": true, "withdrawal": true, "removal": true, "partial_retraction": true,
}

// IsRetraction reports whether the update withdraws the work.
func (u Update) IsRetraction() bool { return retractionTypes[u.Type] }

// Corrected reports whether a notice corrects this work without
// retracting it (a correction, erratum, corrigendum ...). New versions
// and expressions of concern are not corrections.
func (r Record) Corrected() bool {
	for _, u := range r.Updates {
		if !u.Notice && u.IsCorrection() {
			return true
		}
	}
	return false
}

// IsCorrection reports whether the update corrects the work without
// withdrawing it.
func (u Update) IsCorrection() bool {
	switch u.Type {
	case "correction", "erratum", "corrigendum", "addendum", "clarification":
		return true
	}
	return false
}

// normalizeUpdateType folds "Expression of Concern", "expression-of-concern"
// and "expression_of_concern" to one spelling.
func normalizeUpdateType(t string) string {
	t = strings.ToLower(textkit.CleanLine(t))
	t = strings.NewReplacer(" ", "_", "-", "_").Replace(t)
	return t
}

// mergeUpdates adds the updates of src that dst lacks (same type, DOI and
// direction), keeping dst's order.
func mergeUpdates(dst, src []Update) []Update {
	for _, u := range src {
		dup := false
		for i, d := range dst {
			if d.Type == u.Type && d.Notice == u.Notice && (d.DOI == u.DOI || d.DOI == "" || u.DOI == "") {
				if d.DOI == "" {
					dst[i].DOI = u.DOI
				}
				if dst[i].Date == "" {
					dst[i].Date = u.Date
				}
				dup = true
				break
			}
		}
		if !dup {
			dst = append(dst, u)
		}
	}
	return dst
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

// Collection is a source whose whole collection is at hand, as the local
// corpus is: Empty says it holds nothing, so a planner choosing sources
// by itself need not search it (nor name it as searched).
type Collection interface {
	Empty() bool
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
