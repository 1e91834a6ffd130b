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
	var cands []Candidate
	_, _ = o.loadCheckpoint(CheckpointCandidates, &cands)
	var bySubQ map[string][]string
	if o.st.Found != nil {
		bySubQ = o.st.Found.BySubQ
	}
	return studiesMarkdown(sources, findings, includedFor(cands, bySubQ, o.st.Plan.SubQuestions))
}

// studiesMarkdown is the table: a row per source, its "Answers" column
// only where the works differ in it (when every study answers the same
// sub-questions, the column says nothing and is left out).
func studiesMarkdown(sources []CitedSource, findings map[string]string, answers map[string][]string) string {
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
		fmt.Fprintf(&b, "| %s [%d] | %s | %s |", mdText(authorYear(s)), s.N, mdText(studyKind(s)), mdText(clipWords(finding, 200)))
		if withAnswers {
			fmt.Fprintf(&b, " %s |", mdText(strings.Join(answers[s.Key], ", ")))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// includedFor is, per source key, the sub-questions the work was read for
// (its candidates of those sub-questions were read), sorted; for a run
// without candidates, those whose searches found it (bySubQ).
func includedFor(cands []Candidate, bySubQ map[string][]string, subqs []SubQuestion) map[string][]string {
	out := map[string][]string{}
	add := func(k, sq string) {
		if !slices.Contains(out[k], sq) {
			out[k] = append(out[k], sq)
		}
	}
	for _, c := range cands {
		if c.Read && c.SubQ != "" && c.SubQ != "rev" {
			add(c.Key, c.SubQ)
		}
	}
	if len(out) == 0 {
		for _, sq := range subqs {
			for _, k := range bySubQ[sq.ID] {
				add(k, sq.ID)
			}
		}
	}
	for k := range out {
		sort.Strings(out[k])
	}
	return out
}

// authorYear is "Family (2020)", "Family & Other (2020)" or "Family et al.
// (2020)"; the title's start when the work names no author.
func authorYear(s CitedSource) string {
	names := s.AuthorsFiled
	if len(names) == 0 {
		names = s.Authors
	}
	year := yearOrND(s.Year)
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
