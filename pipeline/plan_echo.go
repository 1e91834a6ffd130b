package pipeline

import (
	"fmt"
	"strings"

	"github.com/researchtui/researchtui/textkit"
)

// A small model given a long question sometimes answers the planner's
// prompt with the prompt: sub-questions such as "You are the planning
// agent of a research assistant…" or "No boolean operators, no quotes."
// A run that searched for them would find nothing the person asked about,
// so such a plan is unusable: the planner is asked again, and then the
// question is searched as asked, with a warning (stagePlan).

// echoRun is how many consecutive words a sub-question may share with
// the planner's instructions before it counts as repeating them.
const echoRun = 5

// planEcho says why plan p is no plan for question (it repeats the
// instructions, or nothing in it is about the question), nil when it is.
func planEcho(p *Plan, question, instructions string) error {
	said := shingles(instructions, echoRun)
	for i, sq := range p.SubQuestions {
		for _, sh := range wordRuns(sq.Question, echoRun) {
			if said[sh] {
				return fmt.Errorf("sub_questions[%d] %q repeats the planner's instructions", i, textkit.Clip(sq.Question, 60))
			}
		}
	}
	asked := wordStems(question)
	if len(asked) < 3 || !looksEnglish(question) {
		// Too few words to tell ("why is the sky blue?"), or a question
		// in another language, which a planner may rightly plan in
		// English ("Perowskit" is planned as "perovskite").
		return nil
	}
	texts := []string{p.CanonicalTerm}
	for _, sq := range p.SubQuestions {
		texts = append(texts, sq.Question, sq.Queries.Strict, sq.Queries.Moderate, sq.Queries.Broad)
	}
	for _, t := range texts {
		for s := range wordStems(t) {
			if asked[s] {
				return nil
			}
		}
	}
	return fmt.Errorf("no sub-question or query shares a word with the question")
}

// wordStems are the stems of s's content words (rank.go's stem: "tests"
// meets "testing"), hyphenated words split ("Turing-Test" meets "Turing").
func wordStems(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range textkit.ContentWords(strings.ReplaceAll(s, "-", " ")) {
		out[stem(w)] = true
	}
	return out
}

// shingles are the runs of n consecutive words of s.
func shingles(s string, n int) map[string]bool {
	out := map[string]bool{}
	for _, sh := range wordRuns(s, n) {
		out[sh] = true
	}
	return out
}

func wordRuns(s string, n int) []string {
	ws := textkit.Words(s)
	var out []string
	for i := 0; i+n <= len(ws); i++ {
		out = append(out, strings.Join(ws[i:i+n], " "))
	}
	return out
}

// englishMarkers are words common in English questions and rare in other
// languages' ("in" and "de" are both, so they are not here).
var englishMarkers = map[string]bool{"the": true, "of": true, "how": true, "what": true, "which": true, "why": true,
	"does": true, "do": true, "are": true, "is": true, "and": true, "with": true, "for": true, "when": true}

// looksEnglish says whether question has two distinct English markers.
func looksEnglish(question string) bool {
	seen := map[string]bool{}
	for _, w := range textkit.Words(question) {
		if englishMarkers[w] {
			seen[w] = true
		}
	}
	return len(seen) >= 2
}
