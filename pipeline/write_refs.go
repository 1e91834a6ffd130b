package pipeline

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/researchtui/researchtui/textkit"
)

// The writer may state a finding by its label instead of copying it: the
// sources brief numbers each finding ("finding F3.1: ..." is source 3's
// first), and "{F3.1}" in the draft becomes that sentence with its
// citation, "... [3].". Restating a finding the program already holds
// word for word is most of what a writer copies; on one GPU each copied
// token costs the person ~20 ms, and a finding put in by label is the
// source's own sentence, cited to it, so the verifier finds it supported
// without asking the model. The writer's own words are left for what
// only it can write: the synthesis, comparisons and what is missing.

const findingsByLabel = `To state a finding as its source words it, write just its label in braces, e.g. {F2.1}: the program puts in the finding's sentence and its citation. Use your own words, with citations, only to compare, connect or qualify findings.`

// findingLabel matches "{F3.1}" (and "{f3-1}", "{F 3.1}") with the
// punctuation that may follow it.
var findingLabel = regexp.MustCompile(`\{\s*[Ff]\s*(\d+)\s*[.:-]\s*(\d+)\s*\}([.;,!?]?)`)

// expandFindings replaces each finding label with the finding, cited. A
// label that names no finding is dropped; unknown counts them.
func expandFindings(text string, analyses []Analysis) (out string, unknown int) {
	out = findingLabel.ReplaceAllStringFunc(text, func(m string) string {
		g := findingLabel.FindStringSubmatch(m)
		n, _ := strconv.Atoi(g[1])
		k, _ := strconv.Atoi(g[2])
		if n < 1 || n > len(analyses) || k < 1 || k > len(analyses[n-1].KeyFindings) {
			unknown++
			return ""
		}
		f := strings.TrimSpace(textkit.CleanLine(analyses[n-1].KeyFindings[k-1]))
		if f == "" {
			unknown++
			return ""
		}
		end := g[3]
		if end == "" {
			end = "."
			if last := f[len(f)-1]; last == '!' || last == '?' {
				end = string(last)
			}
		}
		return strings.TrimRight(f, ".!? ") + " [" + g[1] + "]" + end
	})
	return out, unknown
}
