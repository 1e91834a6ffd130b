package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/textkit"
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

// The analyst answers by reference: excerpts are labelled E1, E2, ... and
// their sentences numbered, and the analyst names the sentences that carry
// the source's findings ("E2.3") instead of copying them. Every generated
// token costs the person ~20 ms on one GPU, and the text is already here:
// the code fetches it, so a finding is always verbatim source text (quotes
// cannot fail verification). What only the model can decide is which
// sentences matter, which slots they fill and how much to trust the
// source; for a full text, also its method and limits in a few words.
const analysisSchemaAbstract = `{
  "type": "object",
  "properties": {
    "findings": {"type": "array", "items": {"type": "string"}, "maxItems": 4},
    "slots": {"type": "array", "maxItems": 8, "items": {"type": "string"}},
    "confidence": {"type": "number", "minimum": 0, "maximum": 1}
  },
  "required": ["findings", "confidence"]
}`

const analysisSchemaFull = `{
  "type": "object",
  "properties": {
    "findings": {"type": "array", "items": {"type": "string"}, "maxItems": 4},
    "slots": {"type": "array", "maxItems": 8, "items": {"type": "string"}},
    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    "method": {"type": "string", "maxLength": 120},
    "limits": {"type": "string", "maxLength": 120}
  },
  "required": ["findings", "confidence"]
}`

const analystSystem = `You are an analyst agent. You read numbered excerpts of ONE source and say, as JSON only, what it contributes to a research question. Answer by reference: "E2.3" is sentence 3 of excerpt E2.
"findings": 1-4 references to the sentences that state the source's key findings for the question (results, not background);
"slots": which of the numbered information slots this source fills, each as "slot number:reference" of the sentence that shows it, e.g. "2:E1.3" (none if it fills none);
"confidence": 0-1, how relevant the source is to the question and how well its excerpts support the findings (below 0.2: off topic).
For a full text only, also "method" and "limits": how the work was done and its main limitation, each in at most 12 words.
Do not copy sentences. Never invent results.`

// analystAnswer is the analyst's JSON.
type analystAnswer struct {
	Findings   []string `json:"findings"`
	Slots      slotList `json:"slots"` // "2:E1.3": slot number, sentence
	Confidence float64  `json:"confidence"`
	Method     string   `json:"method"`
	Limits     string   `json:"limits"`
}

// excerptSet is the evidence as the analyst sees it: labelled excerpts
// split into numbered sentences, so references resolve back to text.
type excerptSet struct {
	chunks []ContextChunk
	sents  [][]string // per excerpt
}

// newExcerptSet numbers the excerpts' sentences. The source's title, which
// opens its abstract chunk, is left out: it is no finding, and the analyst
// sees it on the Source line.
func newExcerptSet(ev []ContextChunk, title string) excerptSet {
	x := excerptSet{chunks: ev, sents: make([][]string, len(ev))}
	t := squash(strings.TrimRight(title, ". "))
	for i, c := range ev {
		for _, s := range search.Sentences(c.Text) {
			if s = textkit.CleanLine(s); s != "" && (t == "" || squash(strings.TrimRight(s, ". ")) != t) {
				x.sents[i] = append(x.sents[i], s)
			}
		}
	}
	return x
}

// write prints the excerpts, each sentence with its number.
func (x excerptSet) write(b *strings.Builder) {
	for i, ss := range x.sents {
		fmt.Fprintf(b, "[E%d]", i+1)
		for j, s := range ss {
			fmt.Fprintf(b, " (%d) %s", j+1, s)
		}
		b.WriteString("\n\n")
	}
}

// sentenceRef matches "E2.3", "e2 s3", "[E2.3]", "2.3": excerpt and sentence.
var sentenceRef = regexp.MustCompile(`(?i)^\W*e?\s*(\d+)\s*(?:[.:/,-]|\s)\s*s?\s*\(?(\d+)\)?\W*$`)

// resolve turns a reference into its chunk and sentence; ok is false when
// it names nothing shown.
func (x excerptSet) resolve(ref string) (chunkID, text string, ok bool) {
	e, n, ok := x.locate(ref)
	if !ok {
		return "", "", false
	}
	return x.chunks[e].ID, x.sents[e][n], true
}

// excerptOf is the index of the excerpt a reference points into.
func (x excerptSet) excerptOf(ref string) (int, bool) {
	e, _, ok := x.locate(ref)
	return e, ok
}

// locate parses a reference into 0-based excerpt and sentence indexes of
// a sentence shown.
func (x excerptSet) locate(ref string) (e, n int, ok bool) {
	m := sentenceRef.FindStringSubmatch(strings.TrimSpace(ref))
	if m == nil {
		return 0, 0, false
	}
	e, _ = strconv.Atoi(m[1])
	n, _ = strconv.Atoi(m[2])
	if e < 1 || e > len(x.sents) || n < 1 || n > len(x.sents[e-1]) {
		return 0, 0, false
	}
	return e - 1, n - 1, true
}

// analyseOne asks the model for one source's analysis. full says the
// source was read in full (the analysis then includes method and limits).
// failed is true when the answer was unusable and the degraded analysis
// was used.
func (o *orchestrator) analyseOne(ctx context.Context, a *agentCall, rec search.Record, ev []ContextChunk, full bool) (Analysis, bool, error) {
	x := newExcerptSet(ev, rec.Title)
	var b strings.Builder
	slots := o.analystPreamble(&b)
	read, schema := "abstract only", analysisSchemaAbstract
	if full {
		read, schema = "full text", analysisSchemaFull
	}
	fmt.Fprintf(&b, "\nSource: %s (%s), %s\n\nExcerpts:\n", rec.Title, report.YearOrND(rec.Year), read)
	x.write(&b)
	req := llm.ChatRequest{
		Messages: []llm.Message{
			{Role: "system", Content: analystSystem},
			{Role: "user", Content: b.String()},
		},
		Schema:      json.RawMessage(schema),
		Temperature: ptr(0.1),
	}
	validate := func(ans *analystAnswer) error {
		good := 0
		for _, r := range ans.Findings {
			if _, _, ok := x.resolve(r); ok {
				good++
			}
		}
		if good == 0 {
			return fmt.Errorf("findings must reference sentences shown, like \"E1.2\"; got %q", ans.Findings)
		}
		if ans.Confidence < 0 || ans.Confidence > 1 {
			return fmt.Errorf("confidence %v is outside 0..1", ans.Confidence)
		}
		return nil
	}
	fallback := func() analystAnswer { return analystAnswer{Confidence: -1} }
	ans, info, err := structured(ctx, a, req, validate, fallback)
	if fatal(ctx, err) {
		return degradedAnalysis(rec, ev), true, err
	}
	o.budgetWarn(StageAnalyse, err)
	if info.Fallback || ans.Confidence < 0 {
		return degradedAnalysis(rec, ev), true, nil
	}
	return o.analysisFrom(ans, x, full, slots), false, nil
}

// analystPreamble writes what every analyst of a run reads first, the
// question, sub-questions and numbered slots, and returns the slots. It is
// the same for every analyst: the server's prompt cache serves it.
func (o *orchestrator) analystPreamble(b *strings.Builder) []string {
	fmt.Fprintf(b, "Research question: %s\nSub-questions:\n", o.opt.Question)
	slots := o.slotNames()
	for _, sq := range o.st.Plan.SubQuestions {
		fmt.Fprintf(b, "- %s\n", sq.Question)
	}
	if len(slots) > 0 {
		b.WriteString("Information slots:")
		for i, s := range slots {
			fmt.Fprintf(b, " %d %s;", i+1, s)
		}
		b.WriteString("\n")
	}
	return slots
}

// slotNames are the plan's distinct information slots, numbered by their
// place here (the analyst answers by number: fewer tokens to write).
func (o *orchestrator) slotNames() []string {
	var out []string
	seen := map[string]bool{}
	for _, sq := range o.st.Plan.SubQuestions {
		for _, s := range sq.Slots {
			if k := strings.ToLower(strings.TrimSpace(s)); k != "" && !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	return out
}

// slotList is the analyst's slots: "2:E1.3" strings, numbers (a batch
// of short sources names slots by number alone), or objects like
// {"slot": 2, "ref": "E1.3"} from a model that ignores the schema.
type slotList []string

func (l *slotList) UnmarshalJSON(b []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*l = (*l)[:0]
	for _, r := range raw {
		var s string
		if json.Unmarshal(r, &s) == nil {
			*l = append(*l, s)
			continue
		}
		var num json.Number
		if json.Unmarshal(r, &num) == nil { // a slot by number alone
			*l = append(*l, num.String())
			continue
		}
		var o map[string]any
		if json.Unmarshal(r, &o) != nil {
			continue
		}
		n := fmt.Sprint(firstOf(o, "slot", "n", "number"))
		*l = append(*l, n+":"+fmt.Sprint(firstOf(o, "ref", "sentence", "reference")))
	}
	return nil
}

func firstOf(o map[string]any, keys ...string) any {
	for _, k := range keys {
		if v, ok := o[k]; ok {
			return v
		}
	}
	return ""
}

// slotRef matches the analyst's "2:E1.3" (or "2 = E1.3").
var slotRef = regexp.MustCompile(`^\W*(\d+)\s*[:=]\s*(.+)$`)

// namedSlotRef matches a slot given by name: "methods:E1.3".
var namedSlotRef = regexp.MustCompile(`^\s*(.+?)\s*[:=]\s*(E\d+\.\d+)\W*$`)

// slotOf reads one of the analyst's slots: "2:E1.3" as asked, or, from a
// model that ignores the form, the slot's name instead of its number
// ("methods:E1.3") or the name alone ("methods", shown by the first
// finding's sentence). It returns the slot's number (1-based in names)
// and the reference of the sentence that shows it.
func slotOf(s string, names []string, firstFinding string) (int, string, bool) {
	s = strings.TrimSpace(s)
	if m := slotRef.FindStringSubmatch(s); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n, m[2], n >= 1 && n <= len(names)
	}
	name, ref := s, firstFinding
	if m := namedSlotRef.FindStringSubmatch(s); m != nil {
		name, ref = m[1], m[2]
	}
	given := squash(strings.Trim(name, " \"'.,;"))
	if given == "" || ref == "" {
		return 0, "", false
	}
	for i, n := range names {
		if squash(n) == given {
			return i + 1, ref, true
		}
	}
	return 0, "", false
}

// analysisFrom resolves the analyst's references into an Analysis: each
// finding is the referenced sentence, quoted with its chunk.
func (o *orchestrator) analysisFrom(ans analystAnswer, x excerptSet, full bool, slotNames []string) Analysis {
	an := Analysis{Confidence: ans.Confidence}
	seen := map[string]bool{}
	for _, r := range ans.Findings {
		id, text, ok := x.resolve(r)
		if !ok || seen[text] {
			continue
		}
		seen[text] = true
		an.KeyFindings = append(an.KeyFindings, textkit.Clip(text, 400))
		an.Quotes = append(an.Quotes, Quote{ChunkID: id, Text: textkit.Clip(text, 400)})
	}
	if full {
		an.Methodology = textkit.CleanLine(textkit.Clip(ans.Method, 160))
		an.Limitations = textkit.CleanLine(textkit.Clip(ans.Limits, 160))
	}
	var slots []SlotEvidence
	first := ""
	if len(ans.Findings) > 0 {
		first = ans.Findings[0]
	}
	for _, s := range ans.Slots {
		n, ref, ok := slotOf(s, slotNames, first)
		if !ok {
			continue
		}
		if id, _, ok := x.resolve(ref); ok {
			slots = append(slots, SlotEvidence{Slot: slotNames[n-1], ChunkID: id})
		}
	}
	ids := map[string]string{}
	for _, c := range x.chunks {
		ids[c.ID] = c.Text
	}
	an.Slots = o.verifySlots(slots, ids)
	return an
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
	s = textkit.CleanLine(s)
	for i := 0; i+1 < len(s); i++ {
		if (s[i] == '.' || s[i] == '!' || s[i] == '?') && s[i+1] == ' ' && i > 40 {
			return s[:i+1]
		}
	}
	return textkit.Clip(s, 300)
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
		Confidence:  0.3,
		Degraded:    true,
	}
	if len(ev) > 0 {
		an.Quotes = []Quote{{ChunkID: ev[0].ID, Text: firstSentence(ev[0].Text)}}
	}
	return an
}

// findingsText is an analysis's findings as the output pane shows them:
// one "• sentence" a line, under the source's key.
func findingsText(an ...Analysis) string {
	var b strings.Builder
	for _, x := range an {
		for _, f := range x.KeyFindings {
			b.WriteString("• " + textkit.CleanLine(f) + "\n")
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
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

// yearOrND is a year as APA writes it: "n.d." unknown, "44 B.C.E."
// before the common era.
// analyseLoop starts an analyst for each source as it is indexed; the
// analysts wait for a model slot, so the backend is kept exactly full.
func (f *gather) analyseLoop(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	for rs := range f.analyseCh {
		g.Go(func() error { return f.analyse(gctx, rs) })
	}
	return g.Wait()
}

func (f *gather) analyse(ctx context.Context, rs readySource) error {
	o := f.o
	key := rs.rec.Key
	arrived := sync.OnceFunc(f.arrivedOne)
	defer arrived()
	var an Analysis
	if ok, err := o.loadCheckpoint("analyse/"+key, &an); err != nil {
		return err
	} else if ok {
		f.done(rs.rec, an)
		return nil
	}
	if o.cut.passed() { // past the deadline (or "write now"): no new model work
		f.skipAnalysis(rs.rec)
		return nil
	}
	evidence := o.sourceEvidence(rs.rec, rs.chunks, f.vectorsFor(key))
	if !f.breaker.isOpen() && !o.meter.exhausted() && isShort(rs, evidence) {
		return f.analyseShort(ctx, rs, evidence, arrived)
	}
	if f.breaker.isOpen() || o.meter.exhausted() {
		an = degradedAnalysis(rs.rec, evidence)
	} else {
		release, err := o.engine.acquireModel(ctx)
		if err != nil {
			return err
		}
		if o.cut.passed() { // the deadline came while it waited for the model
			release()
			f.skipAnalysis(rs.rec)
			return nil
		}
		f.progress(rs.rec, StateAnalysing, "")
		f.mu.Lock()
		f.analysts++
		name := fmt.Sprintf("analyst %d", f.analysts)
		f.mu.Unlock()
		a := o.startAgent(StageAnalyse, name, textkit.Clip(rs.rec.Title, 70))
		a.slotHeld = true
		var failed bool
		an, failed, err = o.analyseOne(ctx, a, rs.rec, evidence, rs.full)
		release()
		if err != nil {
			a.fail()
			return err
		}
		if f.breaker.record(failed) {
			a.warn("%d analyses in a row failed; the remaining sources are summarised from their abstracts", breakerTrips)
		}
		a.finishShowing(fmt.Sprintf("confidence %.2f, %s", an.Confidence, textkit.Plural(len(an.KeyFindings), "finding", "findings")), findingsText(an))
	}
	return f.keepAnalysis(rs.rec, an)
}

// keepAnalysis checkpoints a source's analysis and counts it done.
func (f *gather) keepAnalysis(rec search.Record, an Analysis) error {
	an.SourceKey = rec.Key
	if err := f.o.checkpoint("analyse/"+rec.Key, an); err != nil {
		return err
	}
	f.done(rec, an)
	return nil
}

// skipAnalysis leaves a source unanalysed because of the cutoff, and says so.
func (f *gather) skipAnalysis(rec search.Record) {
	f.mu.Lock()
	f.skipped[rec.Key] = true
	f.mu.Unlock()
	why := "not analysed: " + f.o.cut.reason()
	f.progress(rec, StateSkipped, why)
	f.o.noteUnread(rec.Title, why)
}

func (f *gather) done(rec search.Record, an Analysis) {
	f.mu.Lock()
	f.analyses[rec.Key] = an
	f.counts.analysed++
	f.mu.Unlock()
	ref := sourceRef(rec)
	ref.State = StateAnalysed
	f.o.emit(Event{Type: AnalysisDone, Stage: StageAnalyse, Source: &ref, Count: len(an.KeyFindings),
		Message: fmt.Sprintf("confidence %.2f", an.Confidence)})
}

// vectorsFor are the query vectors a source's evidence is judged by: those
// of every sub-question that chose it, and the question.
func (f *gather) vectorsFor(key string) [][]float32 {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out [][]float32
	for _, sq := range f.o.st.Plan.SubQuestions {
		for _, k := range f.bySubQ[sq.ID] {
			if k == key && f.queryVecs[sq.ID] != nil {
				out = append(out, f.queryVecs[sq.ID]...)
				break
			}
		}
	}
	return out
}
