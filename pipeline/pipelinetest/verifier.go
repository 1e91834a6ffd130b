package pipelinetest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// SweepingClaim is the careless writer's claim that no source makes.
const SweepingClaim = "This finding is now accepted across the whole field and settles the question"

// Verifier judgement modes (Script.VerifierJudges).
const (
	JudgeCarefully    = ""             // by the words the claim shares with each passage, as a careful reader would
	JudgeNothing      = "no-judgement" // verdicts that say nothing: alternately supported and unsupported, always passage 1
	JudgeSupported    = "all-supported"
	JudgeContradicted = "all-contradicted" // every claim contradicted by passage 1
)

var findingsOf = regexp.MustCompile(`(?m)^  - finding(?: F\d+\.\d+)?: (.+)$`)

// carelessReport drafts from every listed finding, but cites the
// neighbouring source for every third sentence and adds, as every fifth
// sentence, a sweeping claim no source makes (cited to the source before).
// Paraphrase rewrites each finding in other words, so no passage matches
// it verbatim.
func (s *Script) carelessReport(user string) string {
	srcs := sourceLine.FindAllStringSubmatch(user, -1)
	blocks := sourceLine.Split(user, -1)
	var b strings.Builder
	b.WriteString("# Careless report\n\n## Executive summary\n\nThe sources are summarised below.\n\n## Findings\n\n")
	k := 0
	for i := range srcs {
		for _, f := range findingsOf.FindAllStringSubmatch(blocks[i+1], 3) {
			k++
			text := strings.TrimSuffix(f[1], ".")
			if s.Paraphrase {
				text = paraphrase(text)
			}
			cite := i + 1
			if k%3 == 0 && len(srcs) > 1 {
				cite = (i+1)%len(srcs) + 1 // the neighbour
			}
			fmt.Fprintf(&b, "%s [%d]. ", text, cite)
			if k%5 == 4 {
				k++
				fmt.Fprintf(&b, "%s [%d]. ", SweepingClaim, i+1)
			}
		}
		b.WriteString("\n\n")
	}
	b.WriteString("## Research gaps\n\nMore work is needed.\n")
	return b.String()
}

// paraphrase says a finding in other words: every other longer word
// replaced, the rest kept in order, with a framing phrase.
func paraphrase(s string) string {
	ws := strings.Fields(s)
	for i := range ws {
		if i%2 == 1 && len(ws[i]) > 3 {
			ws[i] = "such"
		}
	}
	return "The authors report that " + strings.Join(ws, " ")
}

var claimLine = regexp.MustCompile(`(?m)^C(\d+): (.+)$`)
var passageLine = regexp.MustCompile(`(?m)^  P(\d+): (.+)$`)

// verdicts answers the verifier: per claim, a verdict and a passage.
func (s *Script) verdicts(user string, n int) string {
	type verdict struct {
		C int    `json:"c"`
		V string `json:"v"`
		P int    `json:"p"`
	}
	var out []verdict
	blocks := claimLine.Split(user, -1)
	for i, m := range claimLine.FindAllStringSubmatch(user, -1) {
		c := 0
		fmt.Sscan(m[1], &c)
		switch s.VerifierJudges {
		case JudgeNothing:
			v := "supported"
			if (c+n)%2 == 0 {
				v = "unsupported"
			}
			out = append(out, verdict{c, v, 1})
		case JudgeSupported:
			out = append(out, verdict{c, "supported", 1})
		case JudgeContradicted:
			out = append(out, verdict{c, "contradicted", 1})
		default:
			best, bestP := 0.0, 0
			for _, p := range passageLine.FindAllStringSubmatch(blocks[i+1], -1) {
				if sc := shared(m[2], p[2]); sc > best {
					best = sc
					fmt.Sscan(p[1], &bestP)
				}
			}
			v := "unsupported"
			switch {
			case best >= 0.6:
				v = "supported"
			case best >= 0.4:
				v = "partly"
			}
			out = append(out, verdict{c, v, bestP})
		}
	}
	b, _ := json.Marshal(map[string]any{"verdicts": out})
	return string(b)
}

// shared is the share of a's longer words found in b.
func shared(a, b string) float64 {
	lb := strings.ToLower(b)
	n, got := 0, 0
	for _, w := range strings.Fields(strings.ToLower(a)) {
		w = strings.Trim(w, ".,;:()[]")
		if len(w) < 4 {
			continue
		}
		n++
		if strings.Contains(lb, w) {
			got++
		}
	}
	if n == 0 {
		return 0
	}
	return float64(got) / float64(n)
}
