// Package bib reads and writes the files reference managers exchange
// (BibTeX/BibLaTeX, CSL-JSON, RIS) as one Item type, so that an import
// (corpus's library) and an export (pipeline/history) meet in the
// same fields, and an export read back gives what was written.
//
// It imports nothing of researchtui's: its input is untrusted bytes and
// its output plain values.
package bib

// Item is one work as a reference manager holds it: what a BibTeX entry, a
// CSL-JSON item, a RIS record or a Zotero item says of it.
type Item struct {
	// ID names the item in its library: a BibTeX citation key, a CSL-JSON
	// id, a RIS ID, a Zotero item key. Stable across exports of the same
	// library, so a second import recognises the item.
	ID string `json:"id"`
	// Type is the CSL item type: article-journal, paper-conference, book,
	// chapter, thesis, report, webpage, manuscript, article (a preprint),
	// dataset, ... ("document" when unknown).
	Type    string `json:"type"`
	Title   string `json:"title"`
	Authors []Name `json:"authors,omitempty"`
	Editors []Name `json:"editors,omitempty"`
	// Year is the year of Date (0 when unknown); Date is the date as the
	// library gives it, ISO-like ("2019", "2019-03", "2019-03-04").
	Year int    `json:"year,omitempty"`
	Date string `json:"date,omitempty"`
	// Venue is the container: the journal, the proceedings, the book.
	Venue  string `json:"venue,omitempty"`
	Volume string `json:"volume,omitempty"`
	Issue  string `json:"issue,omitempty"`
	// Pages is a range with an en dash ("1–10"), as CSL and Zotero write
	// it, whatever dash the file used; anything else ("e1002") as given.
	Pages     string `json:"pages,omitempty"`
	Publisher string `json:"publisher,omitempty"`
	// DOI is lower case without a resolver prefix ("10.1000/xyz").
	DOI      string `json:"doi,omitempty"`
	ISBN     string `json:"isbn,omitempty"`
	ISSN     string `json:"issn,omitempty"`
	URL      string `json:"url,omitempty"`
	Abstract string `json:"abstract,omitempty"`
	Language string `json:"language,omitempty"`
	// Tags are the item's keywords or tags.
	Tags []string `json:"tags,omitempty"`
	// Collections are the names of the collections (Zotero) or groups
	// (JabRef) the item is filed in; a sub-collection is "Parent/Child".
	Collections []string `json:"collections,omitempty"`
	// Files are the attachments: paths as the file or library gives them
	// (absolute, or relative to the file that names them; a reader of a
	// file resolves them against its directory when it can).
	Files []string `json:"files,omitempty"`
}

// Name is a person (Family and Given) or an organisation (Literal).
// Particles ("van", "von", "de") stay in Family, as a person files them.
type Name struct {
	Family  string `json:"family,omitempty"`
	Given   string `json:"given,omitempty"`
	Literal string `json:"literal,omitempty"`
	// Suffix is "Jr.", "III": BibTeX's "Family, Jr., Given", CSL's suffix
	// and RIS's third part, kept so that an export gives it back.
	Suffix string `json:"suffix,omitempty"`
}

// String is the name as it is read: "Given Family Suffix", or the literal.
func (n Name) String() string {
	s := n.Given + " " + n.Family
	switch {
	case n.Literal != "":
		return n.Literal
	case n.Given == "":
		s = n.Family
	case n.Family == "":
		s = n.Given
	}
	if n.Suffix != "" {
		s += " " + n.Suffix
	}
	return s
}
