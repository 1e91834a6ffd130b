package history

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/search/bib"
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
		return []byte(BibTeX(rep.Sources)), nil
	case "ris":
		return bib.WriteRIS(CitedItems(rep.Sources)), nil
	case "csljson", "csl-json", "csl":
		return bib.WriteCSLJSON(CitedItems(rep.Sources))
	}
	return nil, fmt.Errorf("%w: unknown export format %q (use %s)", pipeline.ErrBadInput, format, strings.Join(ExportFormats, ", "))
}

// BibTeX writes one entry per cited source.
func BibTeX(sources []pipeline.CitedSource) string {
	var b strings.Builder
	used := map[string]int{}
	for _, s := range sources {
		kind := "misc"
		if s.Venue != "" && !strings.EqualFold(s.Venue, "arxiv") {
			kind = "article"
		}
		key := bibKey(s)
		used[key]++
		if used[key] > 1 {
			key += string(rune('a' + used[key] - 1))
		}
		fmt.Fprintf(&b, "@%s{%s,\n", kind, key)
		field := func(name, v string) {
			if v != "" {
				fmt.Fprintf(&b, "  %s = {%s},\n", name, bibEscape(v))
			}
		}
		field("title", s.Title)
		field("author", strings.Join(s.Authors, " and "))
		if s.Year > 0 {
			field("year", fmt.Sprint(s.Year))
		}
		if kind == "article" {
			field("journal", s.Venue)
		}
		field("doi", s.DOI)
		if s.ArxivID != "" {
			field("eprint", s.ArxivID)
			field("archivePrefix", "arXiv")
		}
		field("url", firstNonEmpty(s.URL, s.PDFURL))
		b.WriteString("}\n\n")
	}
	return b.String()
}

func bibKey(s pipeline.CitedSource) string {
	family := "anon"
	if len(s.Authors) > 0 {
		f := strings.Fields(s.Authors[0])
		if len(f) > 0 {
			family = f[len(f)-1]
		}
	}
	word := "work"
	for _, w := range pipeline.ContentWords(s.Title) {
		word = w
		break
	}
	key := strings.Map(func(r rune) rune {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return unicode.ToLower(r)
		}
		return -1
	}, family+fmt.Sprint(s.Year)+word)
	if key == "" {
		key = fmt.Sprintf("ref%d", s.N)
	}
	return key
}

func bibEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "{", `\{`, "}", `\}`, "%", `\%`, "&", `\&`, "#", `\#`, "_", `\_`, "$", `\$`).Replace(s)
}
