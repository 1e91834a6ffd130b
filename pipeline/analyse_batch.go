package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/textkit"
)

// Short sources (a web snippet, a short abstract) are analysed several to
// a call. Alone, each would cost a whole model call for a prompt of a few
// sentences: on one GPU that is ~0.3 s before the first token and the
// answer's JSON frame, for a few tokens of substance. Sources queue here
// while the model is busy; whoever gets the model next takes every short
// source waiting (up to shortBatchChars of evidence) into one call. Each source keeps its
// own checkpoint, progress and events, and a part of the answer that is
// missing or unusable is asked again for that source alone, so one bad
// source costs no other its analysis.
//
// A scholarly abstract runs 700-2,000 characters (the recorded Semantic
// Scholar pool: median ~1,200), so every abstract may share a call: the
// answer per source is a few references and a number (~20-40 generated
// tokens), and only full texts get a call of their own.
const (
	shortSourceChars = 2000  // evidence this short (about 500 tokens) may share a call
	shortBatchChars  = 12000 // a call's evidence, about 3,000 tokens (num_ctx is sized to fit)
	maxShortBatch    = 12    // and a bound on the answer a batch asks for
)

// isShort says a source's analysis may share a call: read from its
// abstract only, with little text.
func isShort(rs readySource, evidence []ContextChunk) bool {
	return !rs.full && evidenceChars(evidence) <= shortSourceChars
}

func evidenceChars(ev []ContextChunk) int {
	n := 0
	for _, c := range ev {
		n += len(c.Text)
	}
	return n
}

// shortJob is one short source waiting for an analysis.
type shortJob struct {
	rs       readySource
	evidence []ContextChunk
	taken    bool              // a batch has taken it (under gather.mu)
	res      chan shortOutcome // the batch's outcome, for the job's own goroutine
}

type shortOutcome struct {
	an      Analysis
	skipped bool // the cutoff came first
	err     error
}

// analyseShort queues a short source and either runs the batch it heads or
// waits for the batch that took it; then it finishes the source as
// analyse does.
func (f *gather) analyseShort(ctx context.Context, rs readySource, evidence []ContextChunk, arrived func()) error {
	job := &shortJob{rs: rs, evidence: evidence, res: make(chan shortOutcome, 1)}
	f.mu.Lock()
	f.shortQ = append(f.shortQ, job)
	f.mu.Unlock()
	arrived()
	release, err := f.o.engine.acquireModel(ctx)
	if err != nil {
		return err
	}
	f.awaitArrivals(ctx)
	f.mu.Lock()
	if job.taken { // another analyst holds the model for it
		f.mu.Unlock()
		release()
		select {
		case out := <-job.res:
			return f.finishShort(job, out)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	batch := []*shortJob{job}
	job.taken = true
	chars := evidenceChars(job.evidence)
	rest := f.shortQ[:0]
	for _, j := range f.shortQ {
		switch n := evidenceChars(j.evidence); {
		case j == job:
		case !j.taken && len(batch) < maxShortBatch && chars+n <= shortBatchChars:
			j.taken = true
			batch = append(batch, j)
			chars += n
		default:
			rest = append(rest, j)
		}
	}
	f.shortQ = rest
	f.mu.Unlock()
	outs := f.runShortBatch(ctx, batch)
	release()
	for i, j := range batch[1:] {
		j.res <- outs[i+1]
	}
	return f.finishShort(job, outs[0])
}

func (f *gather) finishShort(job *shortJob, out shortOutcome) error {
	switch {
	case out.err != nil:
		return out.err
	case out.skipped:
		f.skipAnalysis(job.rs.rec)
		return nil
	}
	return f.keepAnalysis(job.rs.rec, out.an)
}

// runShortBatch analyses the batch with the model slot held: one call for
// several sources, the single-source call for one.
func (f *gather) runShortBatch(ctx context.Context, batch []*shortJob) []shortOutcome {
	o := f.o
	outs := make([]shortOutcome, len(batch))
	if o.cut.passed() { // the deadline came while they waited for the model
		for i := range outs {
			outs[i].skipped = true
		}
		return outs
	}
	titles := make([]string, len(batch))
	for i, j := range batch {
		f.progress(j.rs.rec, StateAnalysing, "")
		titles[i] = j.rs.rec.Title
	}
	f.mu.Lock()
	f.analysts++
	name := fmt.Sprintf("analyst %d", f.analysts)
	f.mu.Unlock()
	title := textkit.Clip(titles[0], 70)
	if len(batch) > 1 {
		title = textkit.Clip(fmt.Sprintf("%d short sources: %s", len(batch), strings.Join(titles, "; ")), 70)
	}
	a := o.startAgent(StageAnalyse, name, title)
	a.slotHeld = true
	var analysed []Analysis
	var failed []bool
	var err error
	if len(batch) == 1 {
		an, bad, e := o.analyseOne(ctx, a, batch[0].rs.rec, batch[0].evidence, false)
		analysed, failed, err = []Analysis{an}, []bool{bad}, e
	} else {
		analysed, failed, err = o.analyseSeveral(ctx, a, batch)
	}
	if err != nil {
		a.fail()
		for i := range outs {
			outs[i].err = err
		}
		return outs
	}
	findings := 0
	for i := range batch {
		outs[i].an = analysed[i]
		findings += len(analysed[i].KeyFindings)
		if f.breaker.record(failed[i]) {
			a.warn("%d analyses in a row failed; the remaining sources are summarised from their abstracts", breakerTrips)
		}
	}
	if len(batch) == 1 {
		a.finishShowing(fmt.Sprintf("confidence %.2f, %s", analysed[0].Confidence, textkit.Plural(findings, "finding", "findings")), findingsText(analysed...))
	} else {
		a.finishShowing(fmt.Sprintf("%s, %s", textkit.Plural(len(batch), "source", "sources"), textkit.Plural(findings, "finding", "findings")), findingsText(analysed...))
	}
	return outs
}

const analysisSchemaSeveral = `{
  "type": "object",
  "properties": {
    "sources": {"type": "array", "items": {
      "type": "object",
      "properties": {
        "n": {"type": "integer"},
        "findings": {"type": "array", "items": {"type": "string"}, "maxItems": 4},
        "slots": {"type": "array", "maxItems": 8, "items": {"type": "integer"}},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1}
      },
      "required": ["n", "findings", "confidence"]
    }}
  },
  "required": ["sources"]
}`

const analystSystemSeveral = `You are an analyst agent. You read the numbered excerpts of SEVERAL short sources and say, as JSON only, what each contributes to a research question. Answer by reference: "E2.3" is sentence 3 of excerpt E2; each excerpt belongs to the source above it.
"sources": one entry per source, with "n" its number and:
"findings": 1-4 references to that source's sentences that state its key findings for the question (results, not background);
"slots": the numbers of the information slots it fills, e.g. [1, 3] (none if it fills none);
"confidence": 0-1, how relevant the source is to the question and how well its excerpts support the findings (below 0.2: off topic).
Do not copy sentences. Never invent results.`

// severalAnswer is the analyst's JSON for a batch.
type severalAnswer struct {
	Sources []struct {
		N int `json:"n"`
		analystAnswer
	} `json:"sources"`
}

// refInAnswer is the sentence reference in a finding or slot: "E1.3"
// itself, or the part after a slot's number or name ("2:E1.3",
// "methods:E1.3").
func refInAnswer(r string) string {
	if m := slotRef.FindStringSubmatch(strings.TrimSpace(r)); m != nil {
		return m[2]
	}
	if m := namedSlotRef.FindStringSubmatch(r); m != nil {
		return m[2]
	}
	return r
}

// split is each source's own answer (nil where the answer has none that
// is usable): its references kept only where they point into its own
// excerpts (owner[e] is the source excerpt e belongs to), slots named by
// number shown by its first finding. The first answer for a source counts.
func (ans severalAnswer) split(whole excerptSet, owner []int, sources int) []*analystAnswer {
	own := func(i int, refs []string) []string {
		var out []string
		for _, r := range refs {
			if e, ok := whole.excerptOf(refInAnswer(r)); ok && e < len(owner) && owner[e] == i {
				out = append(out, r)
			}
		}
		return out
	}
	out := make([]*analystAnswer, sources)
	for _, s := range ans.Sources {
		i := s.N - 1
		if i < 0 || i >= sources || out[i] != nil || s.Confidence < 0 || s.Confidence > 1 {
			continue
		}
		mine := s.analystAnswer
		if mine.Findings = own(i, s.Findings); len(mine.Findings) == 0 {
			continue
		}
		mine.Slots = own(i, slotsShownBy(s.Slots, mine.Findings[0]))
		out[i] = &mine
	}
	return out
}

// analyseSeveral asks for several short sources' analyses in one call.
// The excerpts are numbered across the batch, so a reference names its
// source; a reference into another source's excerpts is ignored. A source
// the answer leaves out or answers unusably is asked again alone.
func (o *orchestrator) analyseSeveral(ctx context.Context, a *agentCall, batch []*shortJob) ([]Analysis, []bool, error) {
	// whole is every source's excerpts, numbered across the batch;
	// owner[e] is the batch index excerpt e belongs to.
	var whole excerptSet
	var owner []int
	var b strings.Builder
	o.analystPreamble(&b)
	b.WriteString("\nSources, each read from its abstract only:\n")
	for i, j := range batch {
		fmt.Fprintf(&b, "\nSource %d: %s (%s)\n", i+1, j.rs.rec.Title, report.YearOrND(j.rs.rec.Year))
		x := newExcerptSet(j.evidence, j.rs.rec.Title)
		for e, ss := range x.sents {
			fmt.Fprintf(&b, "[E%d]", len(whole.chunks)+1)
			for k, s := range ss {
				fmt.Fprintf(&b, " (%d) %s", k+1, s)
			}
			b.WriteString("\n")
			whole.chunks = append(whole.chunks, x.chunks[e])
			whole.sents = append(whole.sents, ss)
			owner = append(owner, i)
		}
	}
	req := llm.ChatRequest{
		Messages: []llm.Message{
			{Role: "system", Content: analystSystemSeveral},
			{Role: "user", Content: b.String()},
		},
		Schema:      json.RawMessage(analysisSchemaSeveral),
		Temperature: ptr(0.1),
	}
	validate := func(ans *severalAnswer) error {
		for _, a := range ans.split(whole, owner, len(batch)) {
			if a != nil {
				return nil
			}
		}
		return fmt.Errorf(`each source's findings must reference its own sentences shown, like "E1.2"; got %+v`, ans.Sources)
	}
	ans, info, err := structured(ctx, a, req, validate, func() severalAnswer { return severalAnswer{} })
	if fatal(ctx, err) {
		return nil, nil, err
	}
	o.budgetWarn(StageAnalyse, err)
	slots := o.slotNames()
	out := make([]Analysis, len(batch))
	failed := make([]bool, len(batch))
	answered := make([]bool, len(batch))
	if !info.Fallback {
		for i, mine := range ans.split(whole, owner, len(batch)) {
			if mine != nil {
				out[i] = o.analysisFrom(*mine, whole, false, slots)
				answered[i] = true
			}
		}
	}
	for i, j := range batch {
		if answered[i] {
			continue
		}
		an, bad, err := o.analyseOne(ctx, a, j.rs.rec, j.evidence, false)
		if fatal(ctx, err) {
			return nil, nil, err
		}
		out[i], failed[i] = an, bad
	}
	return out, failed, nil
}

// bareSlot is a slot named by its number alone ("2", or "2:").
var bareSlot = regexp.MustCompile(`^\s*(\d+)\s*:?\s*$`)

// slotsShownBy gives each slot named by number alone the sentence of the
// source's first finding as its evidence. A short source has one excerpt
// or two, so which sentence shows a slot is not worth the model's tokens:
// the slot's chunk is what reflection needs, and the finding's is that.
func slotsShownBy(slots []string, firstFinding string) []string {
	out := make([]string, 0, len(slots))
	for _, s := range slots {
		if m := bareSlot.FindStringSubmatch(s); m != nil {
			s = m[1] + ":" + firstFinding
		} else if slotRef.FindStringSubmatch(s) == nil && namedSlotRef.FindStringSubmatch(s) == nil {
			s += ":" + firstFinding // a slot by name alone
		}
		out = append(out, s)
	}
	return out
}

// shortGrace bounds how long an analyst holding the model waits for the
// sources still being read or indexed to reach the queue. Sources read
// together (snippets, abstracts: nothing to download) arrive within
// milliseconds of each other, and a call they share saves ~0.3 s each; a
// download still under way is not waited for beyond this, so the wait
// costs the model at most this much when nothing comes.
const shortGrace = 30 * time.Millisecond

// arrivedOne counts an indexed source as arrived at its analyst: queued
// for a shared call, or on its own way.
func (f *gather) arrivedOne() {
	f.mu.Lock()
	f.arriving--
	f.mu.Unlock()
	select {
	case f.shortBell <- struct{}{}:
	default:
	}
}

// awaitArrivals waits, holding the model, until every source sent to read
// has reached its analyst (at most shortGrace), so that the first of
// several sources read together does not take the model alone.
func (f *gather) awaitArrivals(ctx context.Context) {
	timeout := time.NewTimer(shortGrace)
	defer timeout.Stop()
	for {
		f.mu.Lock()
		n := f.arriving
		f.mu.Unlock()
		if n <= 0 {
			return
		}
		select {
		case <-f.shortBell:
		case <-timeout.C:
			return
		case <-ctx.Done():
			return
		}
	}
}
