package pipeline

import (
	"strings"

	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/textkit"
)

// Grounding with --verify off: a cited sentence counts as supported when
// enough of its words appear in what its source said.

// supportThreshold is the share of a sentence's content words that must
// appear in a cited source's evidence for the claim to count as supported.
const supportThreshold = 0.3

// sourceWords is the vocabulary of a numbered source's evidence: its
// abstract, its quotes and its retrieved chunks.
// grounding counts the cited sentences whose words are found in at least
// one cited source, and lists those that are not.
// The read side (pipeline/history) cuts sentences and reads citations
// exactly as the run did, so an exported report marks the sentences the
// verifier judged.
func (o *orchestrator) sourceWords(n int) map[string]bool {
	if n < 1 || n > len(o.st.Analyses) {
		return nil
	}
	an := o.st.Analyses[n-1]
	rec, _ := o.loadSource(an.SourceKey)
	var b strings.Builder
	b.WriteString(rec.Title + " " + rec.Abstract + " ")
	for _, q := range an.Quotes {
		b.WriteString(q.Text + " ")
	}
	for _, f := range an.KeyFindings {
		b.WriteString(f + " ")
	}
	for _, cs := range o.st.Contexts {
		for _, c := range cs {
			if c.SourceKey == an.SourceKey {
				b.WriteString(c.Text + " ")
			}
		}
	}
	return textkit.WordSet(b.String())
}

func (o *orchestrator) grounding(md string) (supported, total int, weak []string) {
	cache := map[int]map[string]bool{}
	for _, cs := range report.CitedSentences(md) {
		total++
		ok := false
		for _, n := range cs.Nums {
			if _, have := cache[n]; !have {
				cache[n] = o.sourceWords(n)
			}
			if textkit.Overlap(cs.Text, cache[n]) >= supportThreshold {
				ok = true
				break
			}
		}
		if ok {
			supported++
		} else {
			weak = append(weak, strings.TrimSpace(cs.Text))
		}
	}
	return supported, total, weak
}

func (o *orchestrator) unsupportedSentences(md string) []string {
	_, _, weak := o.grounding(md)
	return weak
}
