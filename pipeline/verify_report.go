package pipeline

import (
	"fmt"
	"strings"

	"regexp"
	"unicode"

	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/textkit"
)

// What the verification leaves in the finished report.

// addVerification puts the verifier's results into a finished report: the
// support map of the final draft (numbered as the report is, order being
// the old numbers in their new order), the repairs of every draft, and
// the verified ratio in place of the word-overlap one.
func (o *orchestrator) addVerification(rep *Report, order []int) {
	if len(o.st.Verifications) == 0 {
		return
	}
	final := map[int]int{} // old number -> report number
	for i, old := range order {
		final[old] = i + 1
	}
	renumber := func(keys []string) []int {
		var out []int
		for _, k := range keys {
			if n := final[o.numOf(k)]; n > 0 {
				out = append(out, n)
			}
		}
		return out
	}
	last := o.st.Verifications[len(o.st.Verifications)-1]
	counts := last.Counts
	counts.Recited, counts.Uncited, counts.Dropped, counts.Rewritten = 0, 0, 0, 0
	for _, v := range o.st.Verifications {
		for _, ch := range v.Checks {
			if ch.Action != ActionKept {
				rep.Repairs = append(rep.Repairs, ch)
			}
		}
		counts.Recited += v.Counts.Recited
		counts.Uncited += v.Counts.Uncited
		counts.Dropped += v.Counts.Dropped
		counts.Rewritten += v.Counts.Rewritten
	}
	score, n := 0.0, 0
	for _, ch := range last.Checks {
		if ch.Action != ActionKept && ch.Action != ActionRecited {
			continue
		}
		now := ch.Now
		if now == nil {
			now = ch.Cited
		}
		cs := CitationSupport{Sentence: ch.Sentence, N: renumber(now), Verdict: ch.Verdict}
		if ch.Action == ActionRecited {
			cs.Verdict = VerdictSupported // by the source it now cites
		}
		if ch.Passage != nil {
			cs.Passage, cs.ChunkID = ch.Passage.Text, ch.Passage.ChunkID
			if ns := renumber([]string{ch.Passage.SourceKey}); len(ns) > 0 {
				cs.Source = ns[0]
			}
		}
		if len(cs.N) == 0 {
			continue
		}
		rep.Support = append(rep.Support, cs)
		n++
		switch cs.Verdict {
		case VerdictSupported:
			score++
		case VerdictPartly:
			score += 0.5
		}
	}
	rep.Metrics.Verified = &counts
	rep.Metrics.SupportedRatio = 0
	if n > 0 {
		rep.Metrics.SupportedRatio = score / float64(n)
	}
}

// verificationNote is the Method section's account of the verification.
func (o *orchestrator) verificationNote() string {
	if len(o.st.Verifications) == 0 {
		return ""
	}
	var c VerifyCounts
	last := o.st.Verifications[len(o.st.Verifications)-1].Counts
	for _, v := range o.st.Verifications {
		c.Recited += v.Counts.Recited
		c.Uncited += v.Counts.Uncited
		c.Dropped += v.Counts.Dropped
		c.ByModel += v.Counts.ByModel
	}
	// The final report's cited sentences are those the last check kept or
	// re-cited: every one is backed by a passage of a source it cites.
	// Every count below is of the final draft, so they add up: checked =
	// supported + partly + re-cited + uncited + dropped (rewritten ones are
	// checked again and counted where they ended).
	final := last.Supported + last.Partly + last.Recited
	s := fmt.Sprintf("Every cited sentence was checked against the passages of the sources it cites. In the final draft %s checked (%d by matching their words, %d by the model): ",
		textkit.Plural(last.Cited, "sentence was", "sentences were"), last.Cited-last.ByModel, last.ByModel)
	parts := []string{textkit.Plural(last.Supported+last.Partly, "is supported", "are supported") + " by a passage of a source they cite"}
	if last.Partly > 0 {
		parts[0] += fmt.Sprintf(" (%d only in part)", last.Partly)
	}
	if last.Recited > 0 {
		parts = append(parts, textkit.Plural(last.Recited, "was", "were")+" re-cited to the source that says it")
	}
	if last.Uncited > 0 {
		parts = append(parts, textkit.Plural(last.Uncited, "lost its citation because no passage of a cited source supports it", "lost their citations because no passage of a cited source supports them"))
	}
	if last.Dropped > 0 {
		parts = append(parts, textkit.Plural(last.Dropped, "was", "were")+" removed")
	}
	stands := fmt.Sprintf("Each of the report's %d cited sentences stands", final)
	if final == 1 {
		stands = "The report's one cited sentence stands"
	}
	s += joinList(parts) + ". " + stands + " on a passage of a source it cites."
	if earlier := c.Recited + c.Uncited + c.Dropped - last.Recited - last.Uncited - last.Dropped; earlier > 0 && len(o.st.Verifications) > 1 {
		s += fmt.Sprintf(" Earlier drafts had %s re-cited, uncited or removed.", textkit.Plural(earlier, "more sentence", "more sentences"))
	}
	return s
}

// joinList joins phrases as a sentence lists them: "a", "a and b",
// "a, b and c".
func joinList(parts []string) string {
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// A sentence can hold a passage's words and still not say what it says:
// "The best-performing GPT-4 prompt passed in 49 [2]." where the source
// says 49.7% of games, or "Although this problem is well-studied for
// decomposable distances, i [17]." cut mid-word (issue 46). Such a
// sentence is not supported, whatever its words.

// number is a number as a sentence writes it: 49, 49.7, 1,000, 3.5e-4.
var number = regexp.MustCompile(`\d[\d,]*(?:\.\d+)?`)

// numbersHeld says whether every number of sentence (citations, and years
// from 1900 to 2099, which a writer adds when it names a work, aside)
// stands in passage as the same number: "49" is not held by "49.7%".
func numbersHeld(sentence, passage string) bool {
	s := report.CiteGroup.ReplaceAllString(sentence, " ")
	have := map[string]bool{}
	for _, n := range number.FindAllString(passage, -1) {
		have[normNumber(n)] = true
	}
	for _, loc := range number.FindAllStringIndex(s, -1) {
		n := normNumber(s[loc[0]:loc[1]])
		if isYear(n) || have[n] {
			continue
		}
		if loc[0] > 0 && unicode.IsLetter(rune(s[loc[0]-1])) {
			continue // part of a name: "GPT4", "H2O", "L2"
		}
		return false
	}
	return true
}

// normNumber drops thousands separators and a trailing comma or stop.
func normNumber(n string) string {
	return strings.ReplaceAll(strings.TrimRight(n, ",."), ",", "")
}

func isYear(n string) bool {
	return len(n) == 4 && (strings.HasPrefix(n, "19") || strings.HasPrefix(n, "20"))
}

// fragmentEnd is a sentence that ends on a cut word: one letter (not "a"
// or "I") before its citation or stop.
var fragmentEnd = regexp.MustCompile(`(?:^|\s)([b-zB-HJ-Z])\s*(?:\[[\d,;\s–-]+\]\s*)*[.!?]?\s*$`)

// fragment says whether sentence is a piece of one: it starts inside
// LaTeX or a bracket ("O}\left(n^{2}\right)$ time…"), or ends on a cut
// word ("… distances, i [17].").
func fragment(sentence string) bool {
	s := strings.TrimSpace(report.StripListMarker(sentence))
	if s == "" {
		return false
	}
	switch s[0] {
	case '}', ')', ']', '\\', '$', '^', '_':
		return true
	}
	return lowerStart(s) || fragmentEnd.MatchString(s) || unbalanced(report.CiteGroup.ReplaceAllString(s, ""))
}

// nameParticles open a family name written in lower case.
var nameParticles = map[string]bool{"van": true, "von": true, "de": true, "der": true, "den": true, "du": true, "da": true,
	"di": true, "del": true, "della": true, "le": true, "la": true, "ten": true, "ter": true, "dos": true, "das": true, "bin": true, "al": true}

// lowerStart says a sentence starts mid-sentence of its source: on a
// word in lower case ("dimensions were then computed …"), not on a term
// written so (mRNA, k-means, p-values, iOS, e.g.).
func lowerStart(s string) bool {
	w, rest, _ := strings.Cut(s, " ")
	if w == "" || strings.ContainsAny(w, "-.0123456789'’") {
		return false
	}
	for p, words := w, strings.Fields(rest); nameParticles[p] && len(words) > 0; p, words = words[0], words[1:] {
		if r := []rune(words[0]); unicode.IsUpper(r[0]) {
			return false // "van der Waals showed …", "de Gennes found …": a name
		}
	}
	for i, r := range w {
		if i == 0 && !unicode.IsLower(r) || unicode.IsUpper(r) {
			return false
		}
	}
	return true
}

// unbalanced says a sentence closes a brace it never opened, or holds an
// odd number of "$": it was cut out of LaTeX ("O}\left(n^{2}\right)$").
func unbalanced(s string) bool {
	depth := 0
	for _, r := range s {
		switch r {
		case '{':
			depth++
		case '}':
			if depth == 0 {
				return true
			}
			depth--
		}
	}
	// An odd "$" means math cut in two only where there is math: "$5 a
	// run" is a price.
	return strings.Count(s, "$")%2 == 1 && strings.ContainsAny(s, `\^{}`)
}
