package report

import (
	"fmt"
	"strings"

	"github.com/researchtui/researchtui/textkit"
)

// StudiesHeading is the heading of a review's table of included studies
// (English in every report language, as the PRISMA labels are).
const StudiesHeading = "Included studies"

// StudiesMarkdown is the table: a row per source, its "Answers" column
// only where the works differ in it (when every study answers the same
// sub-questions, the column says nothing and is left out).
func StudiesMarkdown(sources []CitedSource, findings map[string]string, answers map[string][]string) string {
	withAnswers, first := false, ""
	for i, s := range sources {
		qs := strings.Join(answers[s.Key], ", ")
		if i == 0 {
			first = qs
		} else if qs != first {
			withAnswers = true
		}
	}
	var b strings.Builder
	if withAnswers {
		b.WriteString("| Study | Kind | Main finding | Answers |\n|---|---|---|---|\n")
	} else {
		b.WriteString("| Study | Kind | Main finding |\n|---|---|---|\n")
	}
	for _, s := range sources {
		finding := findings[s.Key]
		if finding == "" {
			finding = "—"
		}
		fmt.Fprintf(&b, "| %s [%d] | %s | %s |", MDText(AuthorYear(s)), s.N, MDText(studyKind(s)), MDText(clipWords(finding, 200)))
		if withAnswers {
			fmt.Fprintf(&b, " %s |", MDText(strings.Join(answers[s.Key], ", ")))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// AuthorYear is "Family (2020)", "Family & Other (2020)" or "Family et al.
// (2020)"; the title's start when the work names no author.
func AuthorYear(s CitedSource) string {
	names := s.AuthorsFiled
	if len(names) == 0 {
		names = s.Authors
	}
	year := YearOrND(s.Year)
	fam := func(n string) string { f, _ := NameParts(n); return f }
	switch {
	case len(names) == 0:
		return textkit.Clip(s.Title, 40) + " (" + year + ")"
	case len(names) == 1:
		return fam(names[0]) + " (" + year + ")"
	case len(names) == 2:
		return fam(names[0]) + " & " + fam(names[1]) + " (" + year + ")"
	}
	return fam(names[0]) + " et al. (" + year + ")"
}

// studyKind is the kind of work (from its CSL type, its venue or its
// source) and how the run read it.
func studyKind(s CitedSource) string {
	kind := "article"
	switch t := s.ItemType; {
	case t == "book":
		kind = "book"
	case t == "chapter":
		kind = "book chapter"
	case t == "paper-conference":
		kind = "conference paper"
	case t == "thesis" || t == "report" || t == "dataset":
		kind = t
	case s.Source == "web":
		kind = "web page"
	case s.Venue == "" && s.ArxivID != "":
		kind = "preprint"
	}
	switch s.Read {
	case ReadFullText:
		kind += ", full text"
	case ReadAbstract:
		kind += ", abstract"
	}
	return kind
}

// MainFinding is the first of a source's findings that says something: not
// a one-word heading ("Context.") and without the "Abstract" label some
// APIs put before the text (OpenAlex).
func MainFinding(findings []string) string {
	for _, f := range findings {
		f = strings.TrimSpace(f)
		if rest, ok := strings.CutPrefix(f, "Abstract "); ok {
			f = strings.TrimSpace(rest)
		}
		if len(strings.Fields(f)) >= 4 {
			return f
		}
	}
	return ""
}

// clipWords shortens s to at most n runes at a word boundary, with "…".
func clipWords(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	cut := string([]rune(s)[:n])
	if i := strings.LastIndexByte(cut, ' '); i > n/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:") + "…"
}
