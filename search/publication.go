package search

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/researchtui/researchtui/search/bib"
	"github.com/researchtui/researchtui/textkit"
)

// Publication details from the scholarly APIs (OpenAlex's biblio and
// type, Crossref's volume, issue, page, publisher and type) in the names a
// reference library uses, so a work found online is cited as fully as one
// from the person's library and exports with its real type.

// openAlexTypes are the OpenAlex work types that name a CSL type. Its
// "article" covers journal articles, conference papers and more, so it
// names none: APA's default form fits them all. Preprints name none
// either: merged with the published version, the journal's type is right,
// and an export tells a preprint by its arXiv ID.
var openAlexTypes = map[string]string{
	"book": "book", "book-chapter": "chapter", "dissertation": "thesis", "dataset": "dataset",
	"report": "report", "reference-entry": "entry-encyclopedia",
}

// crossrefTypes are Crossref's work types as CSL types.
var crossrefTypes = map[string]string{
	"journal-article": "article-journal", "book-chapter": "chapter", "book": "book", "monograph": "book",
	"edited-book": "book", "reference-book": "book", "proceedings-article": "paper-conference",
	"dissertation": "thesis", "report": "report", "dataset": "dataset", "reference-entry": "entry-encyclopedia",
}

// inBook are the CSL types of works inside an edited volume, whose
// editors a reference names.
var inBook = map[string]bool{"chapter": true, "paper-conference": true, "entry-encyclopedia": true}

// pageRange is "first–last", or the one page given.
func pageRange(first, last string) string {
	first, last = textkit.CleanLine(first), textkit.CleanLine(last)
	switch {
	case first == "":
		return ""
	case last == "" || last == first:
		return first
	}
	return first + "–" + last
}

// medlinePages reads MEDLINE's abbreviated ranges in full: "244-55" is
// "244–255", "1021-9" is "1021–1029"; anything else ("e1002", "S1-4,
// S10") as NormalizePages leaves it.
func medlinePages(s string) string {
	s = textkit.CleanLine(s)
	first, last, ok := strings.Cut(s, "-")
	if !ok || !digits(first) || !digits(last) || len(last) >= len(first) {
		return bib.NormalizePages(s)
	}
	return first + "–" + first[:len(first)-len(last)] + last
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// publicationOf cleans what a source gave: pages with an en dash, values
// that are placeholders of an API ("null", "-") dropped.
func publicationOf(itemType, volume, issue, pages, publisher string) Publication {
	clean := func(s string) string {
		s = MetaText(s)
		if s == "-" || strings.EqualFold(s, "null") || strings.EqualFold(s, "n/a") {
			return ""
		}
		return s
	}
	return Publication{ItemType: itemType, Volume: clean(volume), Issue: clean(issue),
		Pages: bib.NormalizePages(clean(pages)), Publisher: clean(publisher)}
}

// FiledName is a person filed as "Family, Given" (or "Family," without a
// given name), or an organisation's name whole.
func FiledName(family, given, name string) string {
	family, given = textkit.CleanLine(family), textkit.CleanLine(given)
	switch {
	case family == "":
		return textkit.CleanLine(name)
	case given == "":
		return family + ","
	}
	return family + ", " + given
}

// laxString decodes a JSON string, number or null as text, and anything
// else as "": a bibliographic detail of the wrong type in an API answer
// (a volume sent as 6, a page as an object) must not lose the whole
// answer.
type laxString string

func (s *laxString) UnmarshalJSON(b []byte) error {
	var v any
	_ = json.Unmarshal(b, &v) // b is one valid JSON value: the decoder checked it
	switch v := v.(type) {
	case string:
		*s = laxString(v)
	case float64:
		*s = laxString(strconv.FormatFloat(v, 'f', -1, 64))
	default:
		*s = ""
	}
	return nil
}
