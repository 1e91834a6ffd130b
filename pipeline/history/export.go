package history

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/search/bib"
	"github.com/researchtui/researchtui/textkit"
)

// ExportFormats are the formats ExportReport writes.
var ExportFormats = []string{"md", "html", "json", "bibtex", "ris", "csljson"}

// ExportReport renders a report as Markdown, a standalone HTML page, JSON
// (the report with its sources, metrics and reviews), or its cited sources
// as BibTeX, RIS or CSL-JSON (for a reference manager).
func ExportReport(rep pipeline.Report, format string) ([]byte, error) {
	switch strings.ToLower(format) {
	case "md", "markdown":
		return []byte(rep.Markdown), nil
	case "json":
		return json.MarshalIndent(rep, "", "  ")
	case "html":
		return exportHTML(rep)
	case "bibtex", "bib":
		return bib.WriteBibTeX(CitedItems(rep.Sources)), nil
	case "ris":
		return bib.WriteRIS(CitedItems(rep.Sources)), nil
	case "csljson", "csl-json", "csl":
		return bib.WriteCSLJSON(CitedItems(rep.Sources))
	}
	return nil, fmt.Errorf("%w: unknown export format %q (use %s)", runopts.ErrBadInput, format, strings.Join(ExportFormats, ", "))
}

// bibKey is a cited source's citation key: the person's own key for an
// item of a reference file (Better BibTeX's, JabRef's), else family name,
// year and first content word of the title ("vanderwaals1873continuity";
// accents are folded by the BibTeX writer, not dropped).
func bibKey(s report.CitedSource) string {
	if s.LibraryID != "" && !zoteroItemKey.MatchString(s.LibraryID) {
		return s.LibraryID
	}
	family := "anon"
	if len(s.AuthorsFiled) == len(s.Authors) && len(s.AuthorsFiled) > 0 {
		family, _, _ = strings.Cut(s.AuthorsFiled[0], ",")
	} else if len(s.Authors) > 0 {
		f := strings.Fields(s.Authors[0])
		if len(f) > 0 {
			family = f[len(f)-1]
		}
	}
	word := "work"
	for _, w := range textkit.ContentWords(s.Title) {
		word = w
		break
	}
	key := strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return unicode.ToLower(r)
		}
		return -1
	}, family+fmt.Sprint(s.Year)+word)
	if key == "" {
		key = fmt.Sprintf("ref%d", s.N)
	}
	return key
}

// zoteroItemKey is Zotero's own item key ("ABCD2345"): an identity, not a
// citation key anyone types.
var zoteroItemKey = regexp.MustCompile(`^[23456789ABCDEFGHIJKLMNPQRSTUVWXYZ]{8}$`)
