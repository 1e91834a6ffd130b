package history

import (
	"strings"

	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/search/bib"
	"github.com/researchtui/researchtui/textkit"
)

// A report's references for a reference manager: RIS and CSL-JSON written
// by search/bib, the package that reads them in `library import`, so an
// export read back gives the same fields.

// CitedItems are the report's cited sources as a reference manager's
// items, with their number in the report as ID.
func CitedItems(sources []report.CitedSource) []bib.Item {
	items := make([]bib.Item, 0, len(sources))
	for _, s := range sources {
		it := bib.Item{
			ID:    bibKey(s),
			Type:  itemType(s),
			Title: s.Title,
			Year:  s.Year,
			Venue: s.Venue,
			DOI:   s.DOI,
			URL:   textkit.FirstNonEmpty(s.URL, s.PDFURL),
			// what the person's library recorded goes back to it
			Volume: s.Volume, Issue: s.Issue, Pages: s.Pages, Publisher: s.Publisher,
		}
		if search.ArxivVenue(it.Venue) == "arXiv" || strings.EqualFold(it.Venue, "local document") { // sessions stored with "arXiv.org" too
			it.Venue = ""
		}
		if s.ArxivID != "" && it.URL == "" {
			it.URL = "https://arxiv.org/abs/" + s.ArxivID
		}
		for _, e := range s.Editors {
			it.Editors = append(it.Editors, filedName(e))
		}
		if len(s.AuthorsFiled) == len(s.Authors) && len(s.Authors) > 0 {
			for _, a := range s.AuthorsFiled {
				it.Authors = append(it.Authors, filedName(a))
			}
		} else {
			for _, a := range s.Authors {
				it.Authors = append(it.Authors, splitName(a))
			}
		}
		items = append(items, it)
	}
	// IDs unique within the export, as BibTeX keys are
	used := map[string]int{}
	for i := range items {
		used[items[i].ID]++
		if n := used[items[i].ID]; n > 1 {
			items[i].ID += string(rune('a' + n - 1))
		}
	}
	return items
}

// itemType is the CSL type of a cited source.
func itemType(s report.CitedSource) string {
	switch {
	case s.ItemType != "":
		return s.ItemType // the library's own type
	case s.Source == "web" && s.DOI == "":
		return "webpage"
	case s.ArxivID != "" && (s.Venue == "" || search.ArxivVenue(s.Venue) == "arXiv"):
		return "article" // a preprint
	case s.Venue != "" && !strings.EqualFold(s.Venue, "local document"):
		return "article-journal"
	}
	return "document"
}

// nameParticles are the lower-case words that belong to a family name
// ("Johannes van der Waals": family "van der Waals").
var nameParticles = map[string]bool{"van": true, "von": true, "der": true, "den": true, "de": true, "del": true, "della": true,
	"di": true, "da": true, "du": true, "la": true, "le": true, "ter": true, "ten": true, "dos": true, "das": true, "bin": true, "al": true}

// splitName turns an author as the sources write it ("Given Family", or
// "Family, Given") into a name a reference manager files by family.
func splitName(a string) bib.Name {
	a = strings.TrimSpace(a)
	if family, given, ok := strings.Cut(a, ","); ok {
		return bib.Name{Family: strings.TrimSpace(family), Given: strings.TrimSpace(given)}
	}
	f := strings.Fields(a)
	if len(f) < 2 {
		return bib.Name{Family: a}
	}
	i := len(f) - 1
	for i > 1 && nameParticles[f[i-1]] {
		i--
	}
	return bib.Name{Family: strings.Join(f[i:], " "), Given: strings.Join(f[:i], " ")}
}

// filedName is a name as a library filed it: "Family, Given" a person,
// anything without a comma an organisation.
func filedName(a string) bib.Name {
	family, given, ok := strings.Cut(a, ",")
	if !ok {
		return bib.Name{Literal: strings.TrimSpace(a)}
	}
	return bib.Name{Family: strings.TrimSpace(family), Given: strings.TrimSpace(given)}
}
