package pipeline

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/pipeline/runopts"
)

// The verifier checks every cited sentence of a draft against the sources
// it cites, and repairs what they do not support: it re-cites the sentence
// to the source that says it, or removes the citation (the sentence stays
// as the report's own synthesis, or is dropped: Options.Unsupported). It
// never writes text. Matching (support.go) decides whenever it can; the
// model is asked, in batches, only about sentences that neither clearly
// restate a passage nor clearly miss every passage (Options.Verify full).

// Verdicts on a cited sentence.
const (
	VerdictSupported    = "supported"
	VerdictPartly       = "partly_supported"
	VerdictNotSupported = "not_supported"
	VerdictContradicted = "contradicted"
)

// What the verifier did with a sentence.
const (
	ActionKept    = "kept"
	ActionRecited = "recited"
	ActionUncited = "uncited"
	ActionDropped = "dropped"
)

// SentenceCheck is the verifier's record of one cited sentence.
type SentenceCheck struct {
	Sentence string    `json:"sentence"` // as written, without its citations
	Cited    []string  `json:"cited"`    // the source keys the writer cited
	Verdict  string    `json:"verdict"`  // on the writer's citations
	By       string    `json:"by"`       // "match" or "model"
	Score    float64   `json:"score"`    // share of the sentence the best cited passage covers
	Action   string    `json:"action"`
	Now      []string  `json:"now,omitempty"` // the source keys cited after repair
	Passage  *Evidence `json:"passage,omitempty"`
}

// VerifyCounts sum up a verification.
type VerifyCounts struct {
	Cited     int `json:"cited_sentences"`
	Supported int `json:"supported"`
	Partly    int `json:"partly_supported"`
	Recited   int `json:"recited"`
	Uncited   int `json:"uncited"`
	Dropped   int `json:"dropped"`
	Rewritten int `json:"rewritten"`
	ByModel   int `json:"judged_by_model"`
}

// Verification is one draft's verification (checkpoint "verify/<round>").
type Verification struct {
	Round  int             `json:"round"`
	Mode   string          `json:"mode"`
	Checks []SentenceCheck `json:"checks"`
	Counts VerifyCounts    `json:"counts"`
	Draft  string          `json:"draft"` // the repaired draft
}

// verifyDraft verifies a draft and returns it repaired. Nothing is done
// with --verify off or when there are no sources.
func (o *orchestrator) verifyDraft(ctx context.Context, round int, draft string) (string, error) {
	mode := o.opt.Verify
	if mode == "" {
		mode = runopts.VerifyFull
	}
	if mode == runopts.VerifyOff || len(o.st.Analyses) == 0 {
		return draft, nil
	}
	cross := o.opt.Language != ""
	if cross && mode == runopts.VerifyQuick {
		mode = runopts.VerifyFull // matching alone cannot compare languages
	}
	name := fmt.Sprintf("verify/%d", round)
	var v Verification
	if ok, err := o.loadCheckpoint(name, &v); err != nil {
		return draft, err
	} else if ok {
		o.st.Verifications = append(o.st.Verifications, v)
		return v.Draft, nil
	}
	agent := "verifier"
	if round > 0 {
		agent = fmt.Sprintf("verifier (revision %d)", round)
	}
	spans := report.CitedSpans(draft)
	a := o.startAgent(StageVerify, agent, fmt.Sprintf("checking %d cited sentences against their sources", len(spans)))
	ix := newEvidenceIndex(o.citableTexts())
	checks := make([]SentenceCheck, len(spans))
	var ask []int // sentences matching cannot decide
	judged := o.judgedBefore()
	for i, sp := range spans {
		checks[i] = o.matchSentence(ix, sp)
		if cross && checks[i].Verdict != VerdictSupported {
			// A sentence in another language shares few words with its
			// source: matching may confirm it (names, numbers), never
			// condemn it. The model judges the rest.
			checks[i] = SentenceCheck{Sentence: checks[i].Sentence, Cited: checks[i].Cited, By: "match", Score: checks[i].Score}
		}
		if checks[i].Verdict != "" {
			continue
		}
		if prev, ok := judged[checkKey(checks[i].Sentence, checks[i].Cited)]; ok {
			checks[i] = prev // a revision kept it as it was: judged already
			continue
		}
		ask = append(ask, i)
	}
	if len(ask) > 0 {
		if mode == runopts.VerifyFull && !o.meter.exhausted() {
			if err := o.judgeByModel(ctx, a, round, ix, spans, checks, ask); err != nil {
				a.fail()
				return draft, err
			}
		}
		for _, i := range ask {
			switch {
			case checks[i].Verdict != "":
			case cross: // the model did not say; matching cannot: kept, marked unchecked
				ch := &checks[i]
				ch.Verdict, ch.Action, ch.Now, ch.By = VerdictPartly, ActionKept, ch.Cited, "unchecked"
			default: // quick mode, or the model did not say
				o.settleByMatch(ix, spans[i], &checks[i])
			}
		}
	}
	v = Verification{Round: round, Mode: mode, Checks: checks}
	v.Draft = o.applyChecks(draft, spans, checks)
	v.Counts = countChecks(checks)
	a.finish(verifySummary(v.Counts))
	if err := o.checkpoint(name, v); err != nil {
		return draft, err
	}
	o.st.Verifications = append(o.st.Verifications, v)
	return v.Draft, nil
}

// judgedBefore are the sentences the model judged in earlier drafts that
// kept a citation (theirs, or the one they were re-cited to), by sentence
// and citations: a revision that leaves them as they were does not pay for
// them twice.
func (o *orchestrator) judgedBefore() map[string]SentenceCheck {
	out := map[string]SentenceCheck{}
	for _, v := range append(o.earlierVerifications(), o.st.Verifications...) {
		for _, ch := range v.Checks {
			if ch.By != "model" || (ch.Action != ActionKept && ch.Action != ActionRecited) {
				continue
			}
			now := ch.Now
			if now == nil {
				now = ch.Cited
			}
			prev := SentenceCheck{Sentence: ch.Sentence, Cited: now, Verdict: ch.Verdict, By: "model",
				Score: ch.Score, Action: ActionKept, Now: now, Passage: ch.Passage}
			if ch.Action == ActionRecited {
				prev.Verdict = VerdictSupported // by the source it now cites
			}
			out[checkKey(ch.Sentence, now)] = prev
		}
	}
	return out
}

// earlierVerifications are a follow-up's predecessors' verifications (the
// run's and earlier follow-ups'): its draft repeats the report's
// sentences, which were judged already. Nil outside a follow-up.
func (o *orchestrator) earlierVerifications() []Verification {
	if o.follow == nil {
		return nil
	}
	prefixes := []string{""}
	for k := 1; k < o.follow.N; k++ {
		prefixes = append(prefixes, fmt.Sprintf("fu%d/", k))
	}
	var out []Verification
	for _, p := range prefixes {
		for r := 0; ; r++ {
			var v Verification
			if ok, err := o.loadRaw(fmt.Sprintf("%sverify/%d", p, r), &v); err != nil || !ok {
				break
			}
			out = append(out, v)
		}
	}
	return out
}

func checkKey(sentence string, keys []string) string {
	ks := append([]string(nil), keys...)
	sort.Strings(ks)
	return sentence + "\x00" + strings.Join(ks, "\x00")
}

// verifiedText sums up the last verification, for the stage's line.
func (o *orchestrator) verifiedText() string {
	if len(o.st.Verifications) == 0 {
		return "nothing to verify"
	}
	return verifySummary(o.st.Verifications[len(o.st.Verifications)-1].Counts)
}

func verifySummary(c VerifyCounts) string {
	s := fmt.Sprintf("%d of %d cited sentences supported", c.Supported+c.Partly, c.Cited)
	if fixed := c.Recited + c.Uncited + c.Dropped; fixed > 0 {
		s += fmt.Sprintf("; %d re-cited, %d uncited, %d dropped", c.Recited, c.Uncited, c.Dropped)
	}
	return s
}

func countChecks(checks []SentenceCheck) VerifyCounts {
	var c VerifyCounts
	for _, ch := range checks {
		c.Cited++
		switch ch.Action {
		case ActionRecited:
			c.Recited++
		case ActionUncited:
			c.Uncited++
		case ActionDropped:
			c.Dropped++
		default:
			if ch.Verdict == VerdictPartly {
				c.Partly++
			} else {
				c.Supported++
			}
		}
		if ch.By == "model" {
			c.ByModel++
		}
	}
	return c
}

// citableTexts are the texts of the sources the report may cite, by key:
// every chunk read, or for a source with none stored its analysis quotes.
// A retracted work supports nothing unless the question is about
// retractions: a sentence citing it is re-cited or loses the citation.
func (o *orchestrator) citableTexts() map[string][]ContextChunk {
	out := map[string][]ContextChunk{}
	aboutRetractions := strings.Contains(strings.ToLower(o.opt.Question), "retract")
	for _, an := range o.st.Analyses {
		if _, done := out[an.SourceKey]; done {
			continue
		}
		if rec, _ := o.loadSource(an.SourceKey); rec.Retracted && !aboutRetractions {
			continue
		}
		var cs []ContextChunk
		if chunks, err := o.engine.Store.Chunks(an.SourceKey); err == nil {
			for _, c := range chunks {
				cs = append(cs, ContextChunk{ID: c.ID, SourceKey: an.SourceKey, Text: c.Text})
			}
		}
		if len(cs) == 0 {
			rec, _ := o.loadSource(an.SourceKey)
			cs = append(cs, ContextChunk{ID: an.SourceKey, SourceKey: an.SourceKey, Text: abstractText(rec)})
			for _, q := range an.Quotes {
				cs = append(cs, ContextChunk{ID: q.ChunkID, SourceKey: an.SourceKey, Text: q.Text})
			}
		}
		out[an.SourceKey] = cs
	}
	return out
}

// keyOf is the source behind citation number n (1-based), or "".
func (o *orchestrator) keyOf(n int) string {
	if n < 1 || n > len(o.st.Analyses) {
		return ""
	}
	return o.st.Analyses[n-1].SourceKey
}

// numOf is the citation number of a source key, or 0.
func (o *orchestrator) numOf(key string) int {
	for i, an := range o.st.Analyses {
		if an.SourceKey == key {
			return i + 1
		}
	}
	return 0
}

// matchSentence decides a sentence by matching when it can; the verdict
// stays empty when it cannot.
func (o *orchestrator) matchSentence(ix *evidenceIndex, sp report.CitedSpan) SentenceCheck {
	ch := SentenceCheck{Sentence: sp.Text, By: "match"}
	cited := map[string]bool{}
	var best match
	scores := map[string]float64{}
	for _, n := range sp.Nums {
		key := o.keyOf(n)
		if key == "" || cited[key] {
			continue
		}
		cited[key] = true
		ch.Cited = append(ch.Cited, key)
		m := ix.best(sp.Text, key)
		scores[key] = m.Score
		if m.Score > best.Score || best.SourceKey == "" {
			best = m
		}
	}
	if len(ch.Cited) == 0 { // only numbers that resolve to nothing: finalise removes them
		ch.Verdict, ch.Action = VerdictNotSupported, ActionKept
		return ch
	}
	ch.Score = best.Score
	other := ix.bestElsewhere(sp.Text, cited)
	switch {
	case fragment(sp.Text) || (best.Score >= clearMatch && !numbersHeld(sp.Text, best.Text)):
		// A piece of a sentence, or a number its passage does not hold
		// as written (49 for 49.7%): its words do not make it supported.
		ch.Verdict, ch.Action = VerdictNotSupported, o.unsupportedAction()
		ch.Passage = &best.Evidence
	case best.Score >= clearMatch:
		ch.Verdict, ch.Action = VerdictSupported, ActionKept
		ch.Passage = &best.Evidence
		for _, key := range ch.Cited { // a co-citation that says none of it goes
			if scores[key] >= clearMiss {
				ch.Now = append(ch.Now, key)
			}
		}
	case other.Score >= clearMatch && other.Score-best.Score >= reciteMargin:
		ch.Verdict, ch.Action = VerdictNotSupported, ActionRecited
		ch.Now = []string{other.SourceKey}
		ch.Passage = &other.Evidence
	case best.Score < clearMiss && other.Score < clearMiss:
		ch.Verdict = VerdictNotSupported
		ch.Action = o.unsupportedAction()
	}
	return ch
}

// settleByMatch decides a sentence matching left open, without a model:
// most of it in a cited passage is partly supported, else unsupported
// (re-cited when another source covers it better).
func (o *orchestrator) settleByMatch(ix *evidenceIndex, sp report.CitedSpan, ch *SentenceCheck) {
	cited := map[string]bool{}
	var best match
	for _, key := range ch.Cited {
		cited[key] = true
		if m := ix.best(sp.Text, key); m.Score > best.Score || best.SourceKey == "" {
			best = m
		}
	}
	other := ix.bestElsewhere(sp.Text, cited)
	mid := (clearMiss + clearMatch) / 2
	switch {
	case best.Score >= mid:
		ch.Verdict, ch.Action, ch.Now = VerdictPartly, ActionKept, ch.Cited
		ch.Passage = &best.Evidence
	case other.Score >= mid && other.Score > best.Score:
		ch.Verdict, ch.Action, ch.Now = VerdictNotSupported, ActionRecited, []string{other.SourceKey}
		ch.Passage = &other.Evidence
	default:
		ch.Verdict, ch.Action = VerdictNotSupported, o.unsupportedAction()
	}
	ch.By = "match"
}

func (o *orchestrator) unsupportedAction() string {
	if o.opt.Unsupported == runopts.UnsupportedDrop {
		return ActionDropped
	}
	return ActionUncited
}

// applyChecks rewrites the draft's cited sentences as the checks decided:
// kept sentences keep the citations that support them, re-cited ones
// cite their new source, uncited ones lose their citations, dropped ones
// go.
func (o *orchestrator) applyChecks(draft string, spans []report.CitedSpan, checks []SentenceCheck) string {
	var b strings.Builder
	last := 0
	touched := map[int]bool{} // lines of the result that changed
	for i, sp := range spans {
		ch := checks[i]
		b.WriteString(draft[last:sp.Start])
		seg := draft[sp.Start:sp.End]
		before := seg
		switch ch.Action {
		case ActionDropped:
			seg = "" // a list item of one sentence leaves its marker, which tidyDraft removes
		case ActionUncited:
			seg = report.Recite(seg, nil)
		case ActionRecited:
			seg = report.Recite(seg, o.nums(ch.Now))
		case ActionKept:
			if ch.Now != nil && len(ch.Now) < len(ch.Cited) {
				seg = report.Recite(seg, o.nums(ch.Now))
			}
		}
		if seg != before {
			touched[strings.Count(b.String(), "\n")] = true
		}
		b.WriteString(seg)
		last = sp.End
	}
	b.WriteString(draft[last:])
	return report.TidyDraft(b.String(), touched)
}

func (o *orchestrator) nums(keys []string) []int {
	var out []int
	for _, k := range keys {
		if n := o.numOf(k); n > 0 {
			out = append(out, n)
		}
	}
	return out
}
