package report

import "github.com/researchtui/researchtui/search"

// CitedSource is one entry of a report's reference list: the source behind
// [N], with the metadata the References line was built from and the quote
// that supports the claims citing it.
type CitedSource struct {
	N       int      `json:"n"`
	Key     string   `json:"key"`
	Title   string   `json:"title"`
	Authors []string `json:"authors,omitempty"`
	// AuthorsFiled are the authors as the person's library files them
	// (search.Record.AuthorsFiled), for exports to a reference manager.
	AuthorsFiled []string `json:"authors_filed,omitempty"`
	Year         int      `json:"year,omitempty"`
	Venue        string   `json:"venue,omitempty"`
	// Publication (type, volume, issue, pages, publisher) comes from the
	// person's library when the work is an item of it.
	search.Publication
	DOI     string `json:"doi,omitempty"`
	ArxivID string `json:"arxiv_id,omitempty"`
	URL     string `json:"url,omitempty"`
	PDFURL  string `json:"pdf_url,omitempty"`
	Source  string `json:"source"`
	// Library is the person's reference library the work is an item of
	// ("zotero", "refs"): it was read from the person's own copy and its
	// reference comes from the library's metadata.
	Library   string `json:"library,omitempty"`
	LibraryID string `json:"library_id,omitempty"` // the item's key in it (a BibTeX key, a Zotero item key)
	Quote     string `json:"quote,omitempty"`
	Reference string `json:"reference"` // the APA line as printed
	// Read is how the run read the source: ReadFullText or ReadAbstract;
	// empty when the report does not record it (older reports).
	Read string `json:"read,omitempty"`
	// Retracted and Updates come from the source's record
	// (search.Record): the sources pane marks a retracted source and a
	// corrected one, and the details view lists the notices.
	Retracted bool            `json:"retracted,omitempty"`
	Updates   []search.Update `json:"updates,omitempty"`
}

// How a cited source was read.
const (
	ReadFullText = "full_text"
	ReadAbstract = "abstract"
)
