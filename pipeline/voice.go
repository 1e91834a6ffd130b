package pipeline

import (
	"regexp"
	"strings"
)

// A finding put in by its label is the abstract's own sentence, so the
// report would say "We show that a reaction-diffusion system … [1]." in
// the authors' first person, and a reader could not tell the report's
// claims from theirs (issue 46). inOwnVoice names the authors instead,
// in code and with no model call: "Gao et al. (2023) show that … [1]."

// weOpening is a cited sentence that opens in the first person: "We
// show", "In this paper, we propose", "Here we report".
var weOpening = regexp.MustCompile(`^((?:In this (?:paper|work|study|article|letter|review),?\s+|Here,?\s+|Finally,?\s+|Moreover,?\s+|Furthermore,?\s+)?)[Ww]e\s+([a-z]+)\b`)

// ourOpening is one that opens with "Our": "Our results suggest".
var ourOpening = regexp.MustCompile(`^Our\s+`)

// firstPerson finds the first-person words left in a sentence.
var firstPerson = regexp.MustCompile(`\b(?:[Ww]e|[Oo]ur|[Oo]urs|[Uu]s)\b`)

// inOwnVoice rewrites md's cited sentences that open in the first person
// and cite one source so that they name its authors; cite says how a
// source number is named ("Gao et al. (2023)"), "" for none. It returns
// the text, how many sentences it rewrote and how many cited sentences
// still speak in the first person. Only English reports are rewritten;
// in another language the sentences are counted, not changed.
func inOwnVoice(md string, cite func(n int) string, english bool) (string, int, int) {
	spans := citedSpans(md)
	var b strings.Builder
	rewrote, left, last := 0, 0, 0
	for _, sp := range spans {
		seg := md[sp.start:sp.end]
		out := seg
		if english && len(sp.nums) == 1 {
			out = voiced(seg, cite(sp.nums[0]))
		}
		if out != seg {
			rewrote++
		}
		if firstPerson.MatchString(citeGroup.ReplaceAllString(out, "")) {
			left++
		}
		b.WriteString(md[last:sp.start])
		b.WriteString(out)
		last = sp.end
	}
	b.WriteString(md[last:])
	return b.String(), rewrote, left
}

// voiced is one sentence (with its leading space and list marker, if
// any) with a first-person opening given to the authors named.
func voiced(seg, named string) string {
	if named == "" {
		return seg
	}
	lead := seg[:len(seg)-len(strings.TrimLeft(seg, " \t"))]
	body := seg[len(lead):]
	marker := ""
	if m := regexp.MustCompile(`^(?:[-*+]|\d+\.)\s+`).FindString(body); m != "" {
		marker, body = m, body[len(m):]
	}
	switch {
	case weOpening.MatchString(body):
		m := weOpening.FindStringSubmatch(body)
		verb := m[2]
		if !strings.Contains(named, " et al.") && !strings.Contains(named, " & ") {
			verb = thirdPerson(verb)
		}
		body = named + " " + verb + body[len(m[0]):]
	case ourOpening.MatchString(body):
		body = possessive(named) + " " + body[len("Our "):]
	default:
		return seg
	}
	return lead + marker + body
}

// thirdPerson is a verb after one author: "show" → "shows".
func thirdPerson(v string) string {
	switch {
	case v == "have":
		return "has"
	case v == "are":
		return "is"
	case strings.HasSuffix(v, "s") || strings.HasSuffix(v, "sh") || strings.HasSuffix(v, "ch") || strings.HasSuffix(v, "x"):
		return v + "es"
	case strings.HasSuffix(v, "y") && len(v) > 1 && !strings.ContainsRune("aeiou", rune(v[len(v)-2])):
		return v[:len(v)-1] + "ies"
	}
	return v + "s"
}

// possessive is "Gao et al.'s (2023)" for "Gao et al. (2023)".
func possessive(named string) string {
	if i := strings.LastIndex(named, " ("); i > 0 {
		return named[:i] + "'s" + named[i:]
	}
	return named + "'s"
}
