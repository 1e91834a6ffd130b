package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/search"
)

// Analysis is the analyst's structured reading of one source.
type Analysis struct {
	SourceKey   string   `json:"source_key"`
	Methodology string   `json:"methodology"`
	KeyFindings []string `json:"key_findings"`
	Limitations string   `json:"limitations"`
	Relevance   string   `json:"relevance"`
	Confidence  float64  `json:"confidence"`
	Quotes      []Quote  `json:"quotes"`
	// Slots are the plan's information slots this source fills, each with
	// the chunk that shows it (reflection counts them).
	Slots    []SlotEvidence `json:"slots,omitempty"`
	Degraded bool           `json:"degraded,omitempty"` // built from the abstract because the model's answer was unusable
}

// SlotEvidence is one slot a source fills and the chunk that shows it.
type SlotEvidence struct {
	Slot    string `json:"slot"`
	ChunkID string `json:"chunk_id"`
}

// Quote is a verbatim supporting passage and the chunk it came from.
type Quote struct {
	ChunkID string `json:"chunk_id"`
	Text    string `json:"text"`
}

const (
	minConfidence  = 0.2 // analyses below this are dropped...
	keepAtLeast    = 3   // ...unless that would leave fewer than this
	breakerTrips   = 3   // consecutive failed analyses that stop model calls
	analyseMaxToks = 2500
)

const analysisSchema = `{
  "type": "object",
  "properties": {
    "methodology": {"type": "string"},
    "key_findings": {"type": "array", "items": {"type": "string"}, "maxItems": 6},
    "limitations": {"type": "string"},
    "relevance": {"type": "string"},
    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    "quotes": {"type": "array", "maxItems": 4, "items": {"type": "object",
      "properties": {"chunk_id": {"type": "string"}, "text": {"type": "string"}}, "required": ["chunk_id", "text"]}},
    "slots": {"type": "array", "maxItems": 12, "items": {"type": "object",
      "properties": {"slot": {"type": "string"}, "chunk_id": {"type": "string"}}, "required": ["slot", "chunk_id"]}}
  },
  "required": ["methodology", "key_findings", "limitations", "relevance", "confidence", "quotes"]
}`

const analystSystem = `You are an analyst agent. You read excerpts of ONE source and report, as JSON only, what it contributes to a research question:
"methodology" (how the work was done, one sentence), "key_findings" (2-5 short factual statements taken from the excerpts), "limitations", "relevance" (to the question, one sentence), "confidence" (0-1: how well the excerpts support your findings and how relevant they are), "quotes" (1-3 passages copied VERBATIM from the excerpts, each with the chunk_id shown in brackets before its excerpt), "slots" (which of the information slots listed with the sub-questions this source fills, each with the chunk_id of the excerpt that shows it; none if it fills none).
Use only the excerpts. Never invent results.`

// analyseOne asks the model for one source's analysis. failed is true when
// the answer was unusable and the degraded analysis was used.
func (o *orchestrator) analyseOne(ctx context.Context, a *agentCall, rec search.Record, ev []ContextChunk) (Analysis, bool, error) {
	ids := map[string]string{}
	var b strings.Builder
	fmt.Fprintf(&b, "Research question: %s\nSub-questions:\n", o.opt.Question)
	for _, sq := range o.st.Plan.SubQuestions {
		fmt.Fprintf(&b, "- %s\n", sq.Question)
		if len(sq.Slots) > 0 {
			fmt.Fprintf(&b, "  slots: %s\n", strings.Join(sq.Slots, "; "))
		}
	}
	fmt.Fprintf(&b, "\nSource: %s (%s)\n\nExcerpts:\n", rec.Title, yearOrND(rec.Year))
	for _, c := range ev {
		ids[c.ID] = c.Text
		fmt.Fprintf(&b, "[%s] %s\n\n", c.ID, c.Text)
	}
	req := llm.ChatRequest{
		Messages: []llm.Message{
			{Role: "system", Content: analystSystem},
			{Role: "user", Content: b.String()},
		},
		Schema:      json.RawMessage(analysisSchema),
		Temperature: ptr(0.1),
	}
	validate := func(an *Analysis) error {
		if len(an.KeyFindings) == 0 {
			return fmt.Errorf("key_findings is empty")
		}
		if an.Confidence < 0 || an.Confidence > 1 {
			return fmt.Errorf("confidence %v is outside 0..1", an.Confidence)
		}
		return nil
	}
	fallback := func() Analysis { return degradedAnalysis(rec, ev) }
	an, info, err := structured(ctx, a, req, validate, fallback)
	if fatal(ctx, err) {
		return an, true, err
	}
	o.budgetWarn(StageAnalyse, err)
	an.Quotes = verifyQuotes(an.Quotes, ids, ev)
	an.Slots = o.verifySlots(an.Slots, ids)
	for i := range an.KeyFindings {
		an.KeyFindings[i] = oneLine(an.KeyFindings[i])
	}
	return an, info.Fallback, nil
}

// verifyQuotes keeps only quotes found verbatim (ignoring case and spacing)
// in the chunk they claim; when none survive, the best chunk's first
// sentence stands in, so every analysis has a checkable quote.
func verifyQuotes(qs []Quote, chunks map[string]string, ev []ContextChunk) []Quote {
	var out []Quote
	for _, q := range qs {
		text, ok := chunks[q.ChunkID]
		if !ok || strings.TrimSpace(q.Text) == "" {
			continue
		}
		if strings.Contains(squash(text), squash(q.Text)) {
			out = append(out, Quote{ChunkID: q.ChunkID, Text: oneLine(q.Text)})
		}
	}
	if len(out) == 0 && len(ev) > 0 {
		out = append(out, Quote{ChunkID: ev[0].ID, Text: firstSentence(ev[0].Text)})
	}
	return out
}

// verifySlots keeps the slots that the plan names and that point at an
// excerpt the analyst was shown.
func (o *orchestrator) verifySlots(in []SlotEvidence, chunks map[string]string) []SlotEvidence {
	known := map[string]bool{}
	for _, sq := range o.st.Plan.SubQuestions {
		for _, s := range sq.Slots {
			known[s] = true
		}
	}
	var out []SlotEvidence
	seen := map[string]bool{}
	for _, e := range in {
		slot := strings.ToLower(strings.TrimSpace(e.Slot))
		if _, ok := chunks[e.ChunkID]; !ok || !known[slot] || seen[slot] {
			continue
		}
		seen[slot] = true
		out = append(out, SlotEvidence{Slot: slot, ChunkID: e.ChunkID})
	}
	return out
}

func squash(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

func firstSentence(s string) string {
	s = oneLine(s)
	for i := 0; i+1 < len(s); i++ {
		if (s[i] == '.' || s[i] == '!' || s[i] == '?') && s[i+1] == ' ' && i > 40 {
			return s[:i+1]
		}
	}
	return truncateRunes(s, 300)
}

// degradedAnalysis summarises a source from its abstract and evidence
// without a model: low confidence, but valid and quotable.
func degradedAnalysis(rec search.Record, ev []ContextChunk) Analysis {
	text := rec.Abstract
	if text == "" && len(ev) > 0 {
		text = ev[0].Text
	}
	var findings []string
	if fs := firstSentence(text); fs != "" {
		findings = append(findings, fs)
	}
	an := Analysis{
		SourceKey:   rec.Key,
		Methodology: "not assessed (summarised from the abstract)",
		KeyFindings: findings,
		Relevance:   "matched the search for this question",
		Confidence:  0.3,
		Degraded:    true,
	}
	an.Quotes = verifyQuotes(nil, nil, ev)
	return an
}

// filterByConfidence drops weak analyses but keeps the best few whatever
// their scores, so a report always has evidence to cite.
func filterByConfidence(all []Analysis) []Analysis {
	var kept []Analysis
	for _, an := range all {
		if an.Confidence >= minConfidence {
			kept = append(kept, an)
		}
	}
	if len(kept) >= keepAtLeast || len(kept) == len(all) {
		return kept
	}
	sorted := append([]Analysis(nil), all...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Confidence > sorted[j].Confidence })
	n := keepAtLeast
	if n > len(sorted) {
		n = len(sorted)
	}
	keep := map[string]bool{}
	for _, an := range sorted[:n] {
		keep[an.SourceKey] = true
	}
	kept = kept[:0]
	for _, an := range all { // original (citation) order
		if keep[an.SourceKey] {
			kept = append(kept, an)
		}
	}
	return kept
}

func yearOrND(y int) string {
	if y == 0 {
		return "n.d."
	}
	return fmt.Sprint(y)
}
