package report

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

// nextWord and listMarker cut a sentence's next word and list marker.
var (
	nextWord   = regexp.MustCompile(`^\s+([a-z]+)\b`)
	listMarker = regexp.MustCompile(`^(?:[-*+]|\d+\.|\(\d+\)|\d+\))\s+`) // "- ", "2. ", "(3) ", "3) "
)

// firstPerson finds the first-person words left in a sentence.
var firstPerson = regexp.MustCompile(`\b(?:[Ww]e|[Oo]ur|[Oo]urs|[Uu]s)\b`)

// InOwnVoice rewrites md's cited sentences that open in the first person
// and cite one source so that they name its authors; cite says how a
// source number is named ("Gao et al. (2023)"), "" for none. It returns
// the text, how many sentences it rewrote and how many cited sentences
// still speak in the first person. A sentence in English is rewritten
// ("Gao et al. (2023) show"); one in the first person of the report's own
// language (German, French, Spanish, Italian, Portuguese, Dutch) is quoted
// with its authors named (Gao et al. (2023): „Wir zeigen …“), which needs
// no conjugation.
func InOwnVoice(md string, cite func(n int) string, language string) (string, int, int) {
	spans := CitedSpans(md)
	foreign := foreignWe[voiceLanguage(language)]
	var b strings.Builder
	rewrote, left, last := 0, 0, 0
	for _, sp := range spans {
		seg := md[sp.Start:sp.End]
		out := seg
		quoted := false
		if len(sp.Nums) == 1 {
			// an English sentence is rewritten whatever the report's
			// language (a finding kept in its abstract's words); one in
			// the report's own language is quoted, its authors named
			out = voiced(seg, cite(sp.Nums[0]))
			if out == seg && foreign != nil {
				out = quotedAs(seg, cite(sp.Nums[0]), foreign, quoteMarks[voiceLanguage(language)])
				quoted = out != seg
			}
		}
		if out != seg {
			rewrote++
		}
		plain := CiteGroup.ReplaceAllString(out, "")
		if !quoted && (firstPerson.MatchString(plain) || foreign != nil && foreign.MatchString(strings.TrimSpace(plain))) {
			left++
		}
		b.WriteString(md[last:sp.Start])
		b.WriteString(out)
		last = sp.End
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
	lead, marker, body := sentenceParts(seg)
	clause := ""
	if m := weClause.FindStringSubmatch(body); m != nil && !weOpening.MatchString(body) {
		// "While these models need study, we believe …": the clause
		// before stays, the authors take "we"
		clause, body = m[1], body[len(m[1]):]
		body = strings.ToUpper(body[:1]) + body[1:]
	}
	switch {
	case weOpening.MatchString(body):
		m := weOpening.FindStringSubmatch(body)
		rest := body[len(m[0]):]
		verb := m[2]
		if adverbs[verb] { // "We also show": the verb is the next word
			v := nextWord.FindStringSubmatch(rest)
			if v == nil {
				return seg
			}
			verb, rest = verb+" "+v[1], rest[len(v[0]):]
		}
		if !strings.Contains(named, " et al.") && !strings.Contains(named, " & ") {
			verb = thirdPerson(verb)
		}
		body = named + " " + verb + rest
	case clause != "":
		return seg
	case ourOpening.MatchString(body):
		body = possessive(named) + " " + body[len("Our "):]
	default:
		return seg
	}
	return lead + marker + clause + body
}

// weClause is a sentence whose first clause is not the authors' and whose
// second opens with "we": "While these models require study, we believe".
var weClause = regexp.MustCompile(`^([A-Z][^,;:]{2,120},\s+)we\s+[a-z]+\b`)

// sentenceParts cuts a sentence into its leading space, its list marker
// ("- ", "2. ") and the rest.
func sentenceParts(seg string) (lead, marker, body string) {
	lead = seg[:len(seg)-len(strings.TrimLeft(seg, " \t"))]
	body = seg[len(lead):]
	if m := listMarker.FindString(body); m != "" {
		marker, body = m, body[len(m):]
	}
	return lead, marker, body
}

// adverbs come between "we" and its verb: "we also show".
var adverbs = map[string]bool{"also": true, "further": true, "then": true, "first": true, "here": true, "now": true,
	"additionally": true, "finally": true, "next": true, "therefore": true, "thus": true, "instead": true}

// unchanged are verb forms the same after one author as after "we": the
// past tense and modals ("found", "can").
var unchanged = map[string]bool{"found": true, "ran": true, "saw": true, "made": true, "took": true, "gave": true, "built": true,
	"wrote": true, "did": true, "had": true, "got": true, "went": true, "brought": true, "sought": true, "thought": true,
	"drew": true, "chose": true, "led": true, "set": true, "put": true, "read": true, "can": true, "could": true, "will": true,
	"would": true, "may": true, "might": true, "must": true, "should": true, "shall": true}

// thirdPerson is a verb after one author: "show" → "shows", "were" →
// "was", "found" and "can" as they are; "also show" → "also shows".
func thirdPerson(v string) string {
	if adv, verb, ok := strings.Cut(v, " "); ok {
		return adv + " " + thirdPerson(verb)
	}
	switch {
	case unchanged[v] || strings.HasSuffix(v, "ed"):
		return v
	case v == "were":
		return "was"
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

// foreignWe are, by language, the openings of a sentence in its authors'
// first person: "Wir zeigen", "In dieser Arbeit wir", "Nous montrons",
// "Unsere Ergebnisse".
var foreignWe = map[string]*regexp.Regexp{
	"de": regexp.MustCompile(`^(?:(?:In dieser (?:Arbeit|Studie)|Hier),?\s+)?(?:[Ww]ir|Unser(?:e|er|en|em|es)?)\b`),
	"fr": regexp.MustCompile(`^(?:(?:Dans (?:cet article|ce travail|cette étude)|Ici),?\s+)?(?:[Nn]ous|Nos|Notre)\b`),
	"es": regexp.MustCompile(`^(?:(?:En este (?:artículo|trabajo|estudio)|Aquí),?\s+)?(?:[Nn]osotros|Nuestr[oa]s?)\b`),
	"it": regexp.MustCompile(`^(?:(?:In questo (?:articolo|lavoro|studio)|Qui),?\s+)?(?:[Nn]oi|Nostr[oaie])\b`),
	"pt": regexp.MustCompile(`^(?:(?:Neste (?:artigo|trabalho|estudo)|Aqui),?\s+)?(?:[Nn]ós|Noss[oa]s?)\b`),
	"nl": regexp.MustCompile(`^(?:(?:In dit (?:artikel|werk|onderzoek)|Hier),?\s+)?(?:[Ww]ij|Onze?)\b`),
}

// quoteMarks open and close a quotation, by language.
var quoteMarks = map[string][2]string{"de": {"„", "“"}, "fr": {"« ", " »"}, "es": {"«", "»"}, "it": {"«", "»"},
	"pt": {"“", "”"}, "nl": {"‘", "’"}}

// voiceLanguage is the two-letter code of a report language as a person
// names it ("de", "German", "Deutsch").
func voiceLanguage(lang string) string {
	l := strings.ToLower(strings.TrimSpace(lang))
	for code, prefixes := range map[string][]string{"de": {"de", "ger"}, "fr": {"fr"}, "es": {"es", "spa"},
		"it": {"it"}, "pt": {"pt", "por"}, "nl": {"nl", "dut", "ned"}} {
		for _, p := range prefixes {
			if strings.HasPrefix(l, p) {
				return code
			}
		}
	}
	return ""
}

// quotedAs is a sentence in its authors' first person quoted, with them
// named before it and its citations after: "Gao et al. (2023): „Wir
// zeigen …“ [1]."
func quotedAs(seg, named string, we *regexp.Regexp, marks [2]string) string {
	if named == "" {
		return seg
	}
	lead, marker, body := sentenceParts(seg)
	if !we.MatchString(body) {
		return seg
	}
	loc := CiteGroup.FindStringIndex(body)
	if loc == nil {
		return seg
	}
	claim := strings.TrimRight(body[:loc[0]], " .;:,")
	if claim == "" || strings.ContainsAny(claim, "„“«»") {
		return seg
	}
	return lead + marker + named + ": " + marks[0] + claim + marks[1] + " " + body[loc[0]:]
}
