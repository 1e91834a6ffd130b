package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/textkit"
)

// evidenceRound is the checkpoint of the targeted research done for a
// round's accepted missing-evidence requests.
type evidenceRound struct {
	Records  []search.Record `json:"records"`
	Analyses []Analysis      `json:"analyses"`
}

// gatherEvidence does the targeted research that accepted missing-evidence
// requests call for: search, read, index and analyse new sources, which
// then get the next citation numbers. Failures only warn: the writer can
// still revise with what there is.
func (o *orchestrator) gatherEvidence(ctx context.Context, round int, accepted []RevisionRequest) error {
	name := fmt.Sprintf("evidence/%d", round)
	var ev evidenceRound
	if ok, err := o.loadCheckpoint(name, &ev); err != nil {
		return err
	} else if ok {
		o.applyEvidence(ev)
		return nil
	}
	var asks []RevisionRequest
	for _, r := range accepted {
		if r.Kind == KindMissingEvidence {
			asks = append(asks, r)
		}
	}
	if len(asks) == 0 || o.meter.exhausted() {
		return nil
	}
	a := o.startAgent(StageResearch, fmt.Sprintf("researcher (revision %d)", round), "looking for the missing evidence")
	known := map[string]bool{}
	reg := newRegistry()
	for _, r := range o.st.Found.Records {
		reg.add(r)
		known[r.Key] = true
	}
	var revCands []Candidate
	for _, ask := range asks {
		q := keywords(ask.Text, 6)
		sq := SubQuestion{ID: "rev", Question: ask.Text, Queries: Queries{Strict: q, Moderate: keywords(ask.Text, 3)}}
		recs := o.searchSources(ctx, a, sq, func(src string, err error) { a.warn("%s failed: %s", src, shortErr(err)) })
		byKey := map[string]search.Record{}
		var pool []search.Record
		for _, r := range recs {
			key, isNew := reg.add(r)
			if !isNew || known[key] {
				continue
			}
			r.Key = key
			byKey[key] = r
			pool = append(pool, r)
		}
		if len(pool) == 0 {
			continue
		}
		// The new candidates are ranked like the first round's: against
		// the request and the question, never in the API's order.
		qv, err := o.embedCached(ctx, a, roleQuery, []string{ask.Text, o.opt.Question})
		if fatal(ctx, err) {
			return err
		}
		var vecs [][]float32
		if err == nil {
			texts := make([]string, len(pool))
			for i, r := range pool {
				texts[i] = candidateText(r)
			}
			if vecs, err = o.embedCached(ctx, a, roleDocument, texts); fatal(ctx, err) {
				return err
			}
		} else {
			qv = nil
		}
		cands := scoreCandidates(pool, vecs, qv, newRankQuery(o.st.Plan.CanonicalTerm, ask.Text))
		// Screened like the run's own reading: breadth never comes from
		// reading what the screen would have kept out, and a work the
		// screen judged before keeps its verdict.
		screener := &gather{o: o, round: 2, calibrate: 2}
		screener.judge(ctx, a, sq, cands, byKey, 2, calibrateFloor(cands, byKey, 2))
		for i := range cands {
			cands[i].SubQ, cands[i].Origin = sq.ID, "revision request: "+textkit.Clip(ask.Text, 80)
		}
		revCands = append(revCands, cands...)
		for _, c := range cands {
			if !c.Read {
				continue
			}
			r := byKey[c.Key]
			known[c.Key] = true
			an, err := o.readAndAnalyse(ctx, a, r, qv)
			if err != nil {
				return err
			}
			if an.Confidence < minConfidence {
				// Its analyst, having read it, found it off topic: the
				// report already has evidence, so nothing keeps it in.
				screener.progress(r, StateSkipped, fmt.Sprintf("not cited: the analyst's confidence %.2f is below %.2f", an.Confidence, minConfidence))
				continue
			}
			ev.Records = append(ev.Records, r)
			ev.Analyses = append(ev.Analyses, an)
		}
	}
	// The candidates view and the funnel count what the revision found
	// and read too: "read 10 of 143 found" in both.
	if err := o.addCandidates(revCands); err != nil {
		return err
	}
	a.finish(fmt.Sprintf("%d new sources", len(ev.Records)))
	if len(ev.Records) == 0 {
		a.warn("no new sources were found for the missing evidence; the writer revises with the sources it has")
	}
	o.applyEvidence(ev)
	return o.checkpoint(name, ev)
}

// readAndAnalyse takes one new source through read, index and analyse at
// once (a revision's targeted research).
func (o *orchestrator) readAndAnalyse(ctx context.Context, a *agentCall, r search.Record, queryVecs [][]float32) (Analysis, error) {
	if err := o.saveSource(r); err != nil {
		return Analysis{}, err
	}
	ref := sourceRef(r)
	ref.State = StateQueued
	o.emit(Event{Type: SourceFound, Stage: StageResearch, Agent: a.name, Source: &ref})
	chunks, full, err := o.readSource(ctx, r)
	if err != nil {
		return Analysis{}, err
	}
	ix, err := o.index(ctx)
	if err != nil {
		return Analysis{}, err
	}
	if _, err := o.indexChunks(ctx, a, ix, chunks); err != nil {
		if fatal(ctx, err) {
			return Analysis{}, err
		}
		a.warn("embedding the new source failed: %s", shortErr(err))
	}
	analyst := o.startAgent(StageAnalyse, "analyst (revision)", textkit.Clip(r.Title, 70))
	an, _, err := o.analyseOne(ctx, analyst, r, o.sourceEvidence(r, chunks, queryVecs), full)
	if err != nil {
		analyst.fail()
		return Analysis{}, err
	}
	analyst.finish(fmt.Sprintf("confidence %.2f", an.Confidence))
	an.SourceKey = r.Key
	// A new value: the event sent above may still be being persisted,
	// and an event's fields are never written after it is emitted.
	done := sourceRef(r)
	done.State = StateAnalysed
	o.emit(Event{Type: AnalysisDone, Stage: StageAnalyse, Agent: analyst.name, Source: &done, Count: len(an.KeyFindings)})
	return an, nil
}

// addCandidates adds cs to the run's stored candidates, once each (a
// revision redone after a crash adds nothing twice).
func (o *orchestrator) addCandidates(cs []Candidate) error {
	if len(cs) == 0 {
		return nil
	}
	var all []Candidate
	if _, err := o.loadCheckpoint(CheckpointCandidates, &all); err != nil {
		return err
	}
	have := map[string]bool{}
	for _, c := range all {
		have[c.SubQ+"\x00"+c.Key] = true
	}
	for _, c := range cs {
		if !have[c.SubQ+"\x00"+c.Key] {
			have[c.SubQ+"\x00"+c.Key] = true
			all = append(all, c)
		}
	}
	return o.checkpoint(CheckpointCandidates, all)
}

func (o *orchestrator) applyEvidence(ev evidenceRound) {
	o.st.Found.Records = append(o.st.Found.Records, ev.Records...)
	o.st.Analyses = append(o.st.Analyses, ev.Analyses...)
}

func isBudget(err error) bool { return errors.Is(err, errBudget) }

// lastDraft is the draft that will be finalised.
func (o *orchestrator) lastDraft() string {
	if len(o.st.Drafts) == 0 {
		return ""
	}
	return strings.TrimSpace(o.st.Drafts[len(o.st.Drafts)-1])
}
