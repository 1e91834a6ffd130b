package pipelinetest

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// How the scripted writer answers: a report from the sources it is
// given, its revision (only the sections named), the follow-up's section,
// an update's "What's new".

var sourceLine = regexp.MustCompile(`(?m)^\[(\d+)\] (.+)$`)

var findingLine = regexp.MustCompile(`(?m)^  - finding(?: F\d+\.\d+)?: (.+)$`)

// report writes a report with one section per sub-question, citing each
// source for its own finding, so every citation is grounded.
func (s *Script) report(user string) string {
	subs := subQuestions(user)
	srcs := sourceLine.FindAllStringSubmatch(user, -1)
	var findings []string
	blocks := sourceLine.Split(user, -1)
	for i := range srcs {
		f := findingLine.FindStringSubmatch(blocks[i+1])
		switch {
		case f != nil && s.ByReference:
			findings = append(findings, fmt.Sprintf("{F%d.1}", i+1))
		case f != nil:
			findings = append(findings, f[1])
		default:
			findings = append(findings, "This source is relevant")
		}
	}
	var b strings.Builder
	revised := strings.Contains(user, "Your previous draft")
	b.WriteString("# Testing and Tool-Augmented Language Models\n\n## Executive summary\n\n")
	if revised {
		b.WriteString("This revised report answers every sub-question from the retrieved sources. ")
	}
	fmt.Fprintf(&b, "The %d sources agree on the main points.\n\n", len(srcs))
	for i, q := range subs {
		fmt.Fprintf(&b, "## %s\n\n", q)
		for j := range findings {
			if j%len(subs) == i%len(subs) || len(findings) < len(subs) {
				if strings.HasPrefix(findings[j], "{F") {
					fmt.Fprintf(&b, "%s\n", findings[j])
				} else {
					fmt.Fprintf(&b, "%s [%d].\n", strings.TrimSuffix(findings[j], "."), j+1)
				}
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("## Consensus\n\nThe sources broadly agree [1].\n\n## Contradictions\n\nNone were found.\n\n## Research gaps\n\nLarger studies are needed.")
	if s.BogusCitation {
		b.WriteString(" A claim with no source [42].")
	}
	if !s.PlainReport { // a writer that ignores "Do NOT write a references section"
		b.WriteString("\n\n## References\n\n1. A reference the model invented, which must not survive.\n")
	}
	return b.String()
}

// onlySections are the headings a revision asks for, or nil for the whole
// report.
func onlySections(user string) []string {
	m := onlyLine.FindStringSubmatch(user)
	if m == nil {
		return nil
	}
	return strings.Split(m[1], ", ")
}

// revisedSections rewrites just the named sections, as a model told to
// would: the executive summary says how complete the evidence is, other
// sections tie themselves to the sub-questions.
func (s *Script) revisedSections(headings []string, user string) string {
	realistic := s.Realistic
	n := len(sourceLine.FindAllStringSubmatch(user, -1))
	var b strings.Builder
	for _, h := range headings {
		b.WriteString(h + "\n\n")
		if strings.Contains(strings.ToLower(h), "summary") {
			fmt.Fprintf(&b, "This revised report answers every sub-question from the retrieved sources. The %d sources agree on the main points [1].", n)
			if realistic {
				b.WriteString(" Each sub-question is answered by at least one source, and the sections below say where the evidence is thin and which questions remain open [1].")
			}
		} else {
			b.WriteString("Larger studies are needed for each sub-question in turn.")
			if realistic {
				b.WriteString(" The sources leave open how their results carry over to other settings, and none compares the approaches directly.")
			}
			if s.BogusCitation {
				b.WriteString(" A claim with no source [42].")
			}
		}
		b.WriteString("\n\n")
	}
	return b.String()
}

func subQuestions(user string) []string {
	_, rest, ok := strings.Cut(user, "Sub-questions:\n")
	if !ok {
		return nil
	}
	var out []string
	for _, line := range strings.Split(rest, "\n") {
		if !strings.HasPrefix(line, "- ") {
			break
		}
		out = append(out, strings.TrimPrefix(line, "- "))
	}
	return out
}

// lengthen adds to each sub-question's section a discussion as long as a
// real model writes, built from the findings in the prompt and citing them.
func lengthen(report, user string) string {
	srcs := sourceLine.FindAllStringSubmatch(user, -1)
	var extra strings.Builder
	extra.WriteString("## Discussion\n\n")
	for i := range srcs {
		fmt.Fprintf(&extra, "The evidence from source %d is consistent with the other sources on the main points, and it adds detail on how the results were obtained and under which conditions they hold [%d]. "+
			"Its authors are careful about the limits of their evaluation, which is why the report weighs it together with the other sources rather than on its own, and why the sections above state the conditions under which each claim holds [%d].\n\n", i+1, i+1, i+1)
	}
	return strings.Replace(report, "## Consensus", extra.String()+"## Consensus", 1)
}

// section answers a follow-up from the numbered sources: the first
// finding of up to three sources, the newest (highest-numbered) first.
func section(user string) string {
	srcs := sourceLine.FindAllStringSubmatch(user, -1)
	blocks := sourceLine.Split(user, -1)
	var b strings.Builder
	b.WriteString("The sources answer the follow-up as follows.")
	for i, n := len(srcs)-1, 0; i >= 0 && n < 3; i, n = i-1, n+1 {
		finding := "This source is relevant"
		if f := findingLine.FindStringSubmatch(blocks[i+1]); f != nil {
			finding = f[1]
		}
		fmt.Fprintf(&b, " %s [%s].", strings.TrimSuffix(finding, "."), srcs[i][1])
	}
	return b.String()
}

// newSources is an update writer's list of the new sources' numbers.
var newSources = regexp.MustCompile(`(?m)^New sources since [^:]+: (.+)$`)

// whatsNew answers an update's writer: each new source's first finding,
// cited.
var (
	summaryNow = regexp.MustCompile(`(?s)Executive summary now:\n<<<\n(.*?)\n>>>`)
	addedNow   = regexp.MustCompile(`(?s)add:\n<<<\n(.*?)\n>>>`)
	citedOne   = regexp.MustCompile(`[^.]*\[\d+\]\.`)
)

// updatedSummary answers an update's call to revise the executive
// summary as a good model does: the new section's first cited sentence,
// to add (UNCHANGED when it has none).
func updatedSummary(user string) string {
	old, added := summaryNow.FindStringSubmatch(user), addedNow.FindStringSubmatch(user)
	if old == nil || added == nil {
		return "UNCHANGED"
	}
	first := citedOne.FindString(added[1])
	if first == "" {
		return "UNCHANGED"
	}
	return "Since then, " + lowerFirst(strings.TrimSpace(first))
}

// lowerFirst lower-cases a sentence's first letter where it begins a
// clause after "Since then," as a good model writes it: "property-based
// testing", but "GPT-4" and "Monte Carlo" stay (a second capital, or a
// name the sentence repeats capitalised, is a name).
func lowerFirst(s string) string {
	word, _, _ := strings.Cut(s, " ")
	rs := []rune(word)
	if len(rs) < 2 || !unicode.IsUpper(rs[0]) || strings.ContainsFunc(string(rs[1:]), unicode.IsUpper) || strings.Contains(s[len(word):], " "+word) {
		return s
	}
	return string(unicode.ToLower(rs[0])) + s[len(string(rs[0])):]
}

func whatsNew(user string) string {
	m := newSources.FindStringSubmatch(user)
	if m == nil {
		return "Nothing new."
	}
	srcs := sourceLine.FindAllStringSubmatch(user, -1)
	blocks := sourceLine.Split(user, -1)
	var b strings.Builder
	b.WriteString("New work adds to the report.")
	for _, ref := range regexp.MustCompile(`\d+`).FindAllString(m[1], -1) {
		for i, src := range srcs {
			if src[1] != ref {
				continue
			}
			finding := "This source is relevant"
			if f := findingLine.FindStringSubmatch(blocks[i+1]); f != nil {
				finding = f[1]
			}
			fmt.Fprintf(&b, " %s [%s].", strings.TrimSuffix(finding, "."), ref)
		}
	}
	return b.String()
}
