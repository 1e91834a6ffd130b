package pipeline

import (
	"fmt"
	"strings"

	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/textkit"
)

// SubQuestionFunnel is, for one sub-question, how many on-topic
// candidates were found and how many of them were read, analysed and
// cited (`sessions show --json` funnel.by_subq, the Method section), so a
// person sees what was left out. A source shared by several sub-questions
// counts for each.
type SubQuestionFunnel struct {
	ID       string `json:"id"`
	Question string `json:"question"`
	Found    int    `json:"found"`    // distinct candidates
	Relevant int    `json:"relevant"` // cleared the floors and the screen: read, or left for want of room
	Screened int    `json:"screened"` // judged by the model's relevance screen
	OnTopic  int    `json:"on_topic"` // of them, judged on topic
	Read     int    `json:"read"`
	Analysed int    `json:"analysed"` // analysed and kept (as the run's funnel counts)
	Cited    int    `json:"cited"`
}

// subQuestionFunnels counts each sub-question's narrowing from the run's
// candidates, the sources read for it, the kept analyses and the cited keys.
func (o *orchestrator) subQuestionFunnels(cands []Candidate, cited []string) []SubQuestionFunnel {
	kept, isCited := map[string]bool{}, map[string]bool{}
	for _, an := range o.st.Analyses {
		kept[an.SourceKey] = true
	}
	for _, k := range cited {
		isCited[k] = true
	}
	var out []SubQuestionFunnel
	for _, sq := range o.st.Plan.SubQuestions {
		f := SubQuestionFunnel{ID: sq.ID, Question: sq.Question}
		found, relevant := map[string]bool{}, map[string]bool{}
		screened, on := map[string]bool{}, map[string]bool{}
		for _, c := range cands {
			if c.SubQ != sq.ID {
				continue
			}
			found[c.Key] = true
			if isVerdict(c.Screen) {
				screened[c.Key] = true
				on[c.Key] = on[c.Key] || c.Screen == screenOnTopic
			}
			if c.Read || c.Reason == reasonQuota || c.Reason == reasonRunCap {
				relevant[c.Key] = true
			}
		}
		read := map[string]bool{}
		if o.st.Found != nil {
			for _, k := range o.st.Found.BySubQ[sq.ID] {
				read[k] = true
			}
		}
		for k := range read {
			relevant[k] = true
			if kept[k] {
				f.Analysed++
				if isCited[k] {
					f.Cited++
				}
			}
		}
		f.Found, f.Relevant, f.Read = len(found), len(relevant), len(read)
		f.Screened = len(screened)
		for _, v := range on {
			if v {
				f.OnTopic++
			}
		}
		out = append(out, f)
	}
	return out
}

// subQuestionNote is the Method section's sentence per sub-question. A
// sub-question is the planner's text: escaped, so it can add no link,
// image or HTML to the report or its HTML export.
func subQuestionNote(fs []SubQuestionFunnel) string {
	var parts []string
	for _, f := range fs {
		q := report.MDText(textkit.CleanLine(f.Question))
		if f.Screened > 0 {
			parts = append(parts, fmt.Sprintf("for %s (%s): of %d found, %d screened, %d judged on topic, %d read, %d analysed, %d cited",
				f.ID, q, f.Found, f.Screened, f.OnTopic, f.Read, f.Analysed, f.Cited))
			continue
		}
		parts = append(parts, fmt.Sprintf("for %s (%s): %s relevant by their words of %d found, %d read, %d analysed, %d cited",
			f.ID, q, textkit.Plural(f.Relevant, "candidate", "candidates"), f.Found, f.Read, f.Analysed, f.Cited))
	}
	if len(parts) == 0 {
		return ""
	}
	return "By sub-question (a source read for several counts for each), " + strings.Join(parts, "; ") + "."
}
