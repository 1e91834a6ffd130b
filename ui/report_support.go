package ui

import (
	"strings"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/report"
)

// The verifier's support map on the report screen: a citation chosen with
// ]/[ shows the passage that supports its sentence (not just the source's
// first quote), and the citations of sentences their sources support only
// in part carry a small ◦.

// partlyMark follows the citation of a partly supported sentence.
const partlyMark = "◦"

// displayMarkdown is the report as the screen renders it: the Markdown
// with partlyMark after the citations of partly supported sentences.
func displayMarkdown(rep pipeline.Report, width int) string {
	md := fitTables(fitFlowDiagram(rep, width), width)
	for _, s := range rep.Support {
		if s.Verdict != pipeline.VerdictPartly || s.Sentence == "" {
			continue
		}
		i := strings.Index(md, strings.TrimSuffix(s.Sentence, "."))
		if i < 0 {
			continue
		}
		j := strings.IndexByte(md[i:], ']')
		if j < 0 || strings.ContainsRune(md[i:i+j], '\n') {
			continue
		}
		at := i + j + 1
		md = md[:at] + partlyMark + md[at:]
	}
	return md
}

// supportOf is the support entry of the sentence that citation mark k
// stands in, or nil. Marks and support entries are both in reading order:
// the k-th mark of source n is in the sentence of the support entry that
// is the same-numbered entry citing n, checked by the sentence's last
// words on the mark's line or the one before.
func (r *reportModel) supportOf(k int) *pipeline.CitationSupport {
	marks := r.citations()
	if k < 0 || k >= len(marks) || len(r.rep.Support) == 0 {
		return nil
	}
	n := marks[k].n
	nth := 0
	for i := 0; i < k; i++ {
		if marks[i].n == n && (i == 0 || marks[i].line != marks[k].line || marks[i].from != marks[k].from) {
			nth++
		}
	}
	for i := range r.rep.Support {
		s := &r.rep.Support[i]
		if !hasNum(s.N, n) {
			continue
		}
		if nth > 0 {
			nth--
			continue
		}
		if !endsNear(r.plain, marks[k].line, marks[k].from, s.Sentence) {
			return nil
		}
		return s
	}
	return nil
}

func hasNum(ns []int, n int) bool {
	for _, x := range ns {
		if x == n {
			return true
		}
	}
	return false
}

// endsNear checks that the sentence's last words stand just before the
// mark (the rendering wraps lines, so the line before counts too).
func endsNear(plain []string, line, col int, sentence string) bool {
	if line < 0 || line >= len(plain) {
		return false
	}
	before := plain[line][:min(col, len(plain[line]))]
	if line > 0 {
		before = plain[line-1] + " " + before
	}
	ws := strings.Fields(strings.TrimSuffix(sentence, "."))
	if len(ws) == 0 {
		return false
	}
	tail := strings.Join(ws[max(0, len(ws)-2):], " ")
	return strings.Contains(strings.Join(strings.Fields(before), " "), tail)
}

// shownSource is source i as the panes show it: with the passage that
// supports the sentence of the selected citation in place of its quote,
// and the label that says so.
func (r *reportModel) shownSource(i int) (report.CitedSource, string) {
	s := r.rep.Sources[i]
	if !r.citeSel || i != r.srcCursor || r.citeIdx < 0 {
		return s, ""
	}
	sup := r.supportOf(r.citeIdx)
	if sup == nil || sup.Passage == "" || sup.Source != s.N {
		return s, ""
	}
	s.Quote = sup.Passage
	if sup.Verdict == pipeline.VerdictPartly {
		return s, "supports this sentence in part " + partlyMark
	}
	return s, "supports this sentence"
}
