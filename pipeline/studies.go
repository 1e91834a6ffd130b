package pipeline

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/researchtui/researchtui/textkit"
)

// StudiesHeading is the heading of a review's table of included studies
// (English in every report language, as the PRISMA labels are).
const StudiesHeading = "Included studies"

// studiesTable is a review's table of included studies, built by code
// from the cited sources and their analyses, so it grows with the sources
// without a generated token: who and when (with the source's number), what
// kind of work it is and how it was read, its main finding (the source's
// own first finding sentence) and the sub-questions it answers.
func (o *orchestrator) studiesTable(sources []CitedSource) string {
	if len(sources) == 0 {
		return ""
	}
	findings := map[string]string{}
	for _, an := range o.st.Analyses {
		findings[an.SourceKey] = mainFinding(an.KeyFindings)
	}
	answers := map[string][]string{}
	if o.st.Found != nil {
		for _, sq := range o.st.Plan.SubQuestions {
			for _, k := range o.st.Found.BySubQ[sq.ID] {
				if !slices.Contains(answers[k], sq.ID) {
					answers[k] = append(answers[k], sq.ID)
				}
			}
		}
	}
	var b strings.Builder
	b.WriteString("| Study | Kind | Main finding | Answers |\n|---|---|---|---|\n")
	for _, s := range sources {
		finding := findings[s.Key]
		if finding == "" {
			finding = "—"
		}
		qs := answers[s.Key]
		sort.Strings(qs)
		fmt.Fprintf(&b, "| %s [%d] | %s | %s | %s |\n", mdText(authorYear(s)), s.N, mdText(studyKind(s)),
			mdText(clipWords(finding, 200)), mdText(strings.Join(qs, ", ")))
	}
	return b.String()
}

// authorYear is "Family (2020)", "Family & Other (2020)" or "Family et al.
// (2020)"; the title's start when the work names no author.
func authorYear(s CitedSource) string {
	names := s.AuthorsFiled
	if len(names) == 0 {
		names = s.Authors
	}
	year := "n.d."
	if s.Year > 0 {
		year = fmt.Sprint(s.Year)
	}
	fam := func(n string) string { f, _ := apaNameParts(n); return f }
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

// mainFinding is the first of a source's findings that says something: not
// a one-word heading ("Context.") and without the "Abstract" label some
// APIs put before the text (OpenAlex).
func mainFinding(findings []string) string {
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
