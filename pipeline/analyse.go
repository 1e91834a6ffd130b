package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

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
	Degraded    bool     `json:"degraded,omitempty"` // built from the abstract because the model's answer was unusable
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
      "properties": {"chunk_id": {"type": "string"}, "text": {"type": "string"}}, "required": ["chunk_id", "text"]}}
  },
  "required": ["methodology", "key_findings", "limitations", "relevance", "confidence", "quotes"]
}`

const analystSystem = `You are an analyst agent. You read excerpts of ONE source and report, as JSON only, what it contributes to a research question:
"methodology" (how the work was done, one sentence), "key_findings" (2-5 short factual statements taken from the excerpts), "limitations", "relevance" (to the question, one sentence), "confidence" (0-1: how well the excerpts support your findings and how relevant they are), "quotes" (1-3 passages copied VERBATIM from the excerpts, each with the chunk_id shown in brackets before its excerpt).
Use only the excerpts. Never invent results.`

func (o *orchestrator) stageAnalyse(ctx context.Context) error {
	var keys []string
	if ok, err := o.loadCheckpoint("analyse", &keys); err != nil {
		return err
	} else if ok {
		for _, k := range keys {
			var an Analysis
			if ok, err := o.loadCheckpoint("analyse/"+k, &an); err == nil && ok {
				o.st.Analyses = append(o.st.Analyses, an)
			}
		}
		o.stageSkipped(StageAnalyse, fmt.Sprintf("%d analyses", len(o.st.Analyses)))
		return nil
	}
	start := o.stageStart(StageAnalyse, "analysing each source")
	evidence := o.evidenceBySource()
	order := o.rankSources(evidence)
	if len(order) > o.plan.AnalyseMax {
		order = order[:o.plan.AnalyseMax]
	}
	results, err := o.analyseAll(ctx, order, evidence)
	if err != nil {
		return err
	}
	kept := filterByConfidence(results)
	o.st.Analyses = kept
	keys = keys[:0]
	for _, an := range kept {
		keys = append(keys, an.SourceKey)
	}
	if err := o.checkpoint("analyse", keys); err != nil {
		return err
	}
	return o.stageDone(StageAnalyse, start, fmt.Sprintf("%d of %d sources kept", len(kept), len(results)))
}

// analyseAll runs the analysts in parallel with a bound and a circuit
// breaker: after breakerTrips consecutive failures the rest are degraded
// without calling the model, so a sick backend doesn't cost minutes each.
func (o *orchestrator) analyseAll(ctx context.Context, order []string, evidence map[string][]ContextChunk) ([]Analysis, error) {
	results := make([]Analysis, len(order))
	var mu sync.Mutex
	consecutive := 0
	open := false
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(o.engine.workers())
	for i, key := range order {
		g.Go(func() error {
			var an Analysis
			if ok, err := o.loadCheckpoint("analyse/"+key, &an); err != nil {
				return err
			} else if ok {
				results[i] = an
				return nil
			}
			rec, _ := o.loadSource(key)
			mu.Lock()
			skip := open
			mu.Unlock()
			name := fmt.Sprintf("analyst %d", i+1)
			a := o.startAgent(StageAnalyse, name, truncateRunes(rec.Title, 70))
			if skip || o.meter.exhausted() {
				an = degradedAnalysis(rec, evidence[key])
				a.finish("from the abstract (model calls stopped)")
			} else {
				var failed bool
				var err error
				an, failed, err = o.analyseOne(gctx, a, rec, evidence[key])
				if err != nil {
					a.finish("failed")
					return err
				}
				mu.Lock()
				if failed {
					consecutive++
					if consecutive >= breakerTrips && !open {
						open = true
						a.warn("%d analyses in a row failed; the remaining sources are summarised from their abstracts", consecutive)
					}
				} else {
					consecutive = 0
				}
				mu.Unlock()
				a.finish(fmt.Sprintf("confidence %.2f, %d findings", an.Confidence, len(an.KeyFindings)))
			}
			an.SourceKey = key
			results[i] = an
			ref := sourceRef(rec)
			o.emit(Event{Type: AnalysisDone, Stage: StageAnalyse, Agent: name, Source: &ref, Count: len(an.KeyFindings)})
			return o.checkpoint("analyse/"+key, an)
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return results, nil
}

// analyseOne asks the model for one source's analysis. failed is true when
// the answer was unusable and the degraded analysis was used.
func (o *orchestrator) analyseOne(ctx context.Context, a *agentCall, rec search.Record, ev []ContextChunk) (Analysis, bool, error) {
	ids := map[string]string{}
	var b strings.Builder
	fmt.Fprintf(&b, "Research question: %s\nSub-questions:\n", o.opt.Question)
	for _, sq := range o.st.Plan.SubQuestions {
		fmt.Fprintf(&b, "- %s\n", sq.Question)
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

// evidenceBySource groups the retrieved chunks by source, best first,
// capped per source.
func (o *orchestrator) evidenceBySource() map[string][]ContextChunk {
	by := map[string][]ContextChunk{}
	seen := map[string]bool{}
	for _, sq := range o.st.Plan.SubQuestions {
		for _, c := range o.st.Contexts[sq.ID] {
			if !seen[c.ID] {
				seen[c.ID] = true
				by[c.SourceKey] = append(by[c.SourceKey], c)
			}
		}
	}
	for k, cs := range by {
		by[k] = capTokens(cs, analyseMaxToks)
	}
	return by
}

// rankSources orders sources for analysis: round-robin over sub-questions
// so each is covered, best evidence first within each.
func (o *orchestrator) rankSources(evidence map[string][]ContextChunk) []string {
	var lists [][]string
	for _, sq := range o.st.Plan.SubQuestions {
		best := map[string]float32{}
		for _, c := range o.st.Contexts[sq.ID] {
			if c.Score >= best[c.SourceKey] {
				best[c.SourceKey] = c.Score
			}
		}
		var keys []string
		for k := range best {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			if best[keys[i]] != best[keys[j]] {
				return best[keys[i]] > best[keys[j]]
			}
			return keys[i] < keys[j]
		})
		lists = append(lists, keys)
	}
	var out []string
	seen := map[string]bool{}
	for i := 0; ; i++ {
		added := false
		for _, l := range lists {
			if i < len(l) {
				added = true
				if !seen[l[i]] && len(evidence[l[i]]) > 0 {
					seen[l[i]] = true
					out = append(out, l[i])
				}
			}
		}
		if !added {
			return out
		}
	}
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
