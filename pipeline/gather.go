package pipeline

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/researchtui/researchtui/textkit"
)

// stageGather runs research, read, index and analyse as one streaming step (gather_stream.go), in
// rounds: after each round, reflection (reflect.go) names what the
// sub-questions still lack and the next round searches and chases
// citations for it (rounds.go), within the depth's round cap.
func (o *orchestrator) stageGather(ctx context.Context) error {
	if done, err := o.restoreGather(); err != nil || done {
		return err
	}
	subqs := o.st.Plan.SubQuestions
	f := &gather{
		o:          o,
		reg:        newRegistry(),
		share:      firstShare(o.plan.Include, len(subqs)),
		runCap:     o.plan.Include,
		calibrate:  floorCalibration(o.opt.DepthRow(), len(subqs)),
		claimed:    map[string]bool{},
		bySubQ:     map[string][]string{},
		candidates: map[string][]Candidate{},
		distinct:   map[string]bool{},
		analyses:   map[string]Analysis{},
		ran:        map[string]bool{},
		chased:     map[string]bool{},
		reading:    map[string]*inflight{},
		skipped:    map[string]bool{},
	}
	start := time.Now()
	o.stageStart(StageResearch, fmt.Sprintf("searching %s, ranking what is found", strings.Join(o.st.Plan.Sources, ", ")))
	o.stageStart(StageRead, "reading each chosen source at once")
	o.stageStart(StageIndex, "embedding each source as it is read")
	startAnalyse := o.stageStart(StageAnalyse, "analysing each source as it is indexed")
	f.queryVecs = o.queryVectors(ctx)
	f.local = o.localKnowledge(ctx, f.queryVecs)
	for _, sq := range subqs {
		for _, q := range sq.Queries.tiers() {
			f.ran[normQuery(q)] = true
		}
	}
	if err := f.rounds(ctx); err != nil {
		return err
	}
	f.mu.Lock()
	read, full, chunks := f.counts.read, f.counts.full, f.counts.chunks
	f.mu.Unlock()
	n := f.distinctCount()
	o.emit(Event{Type: StageFinished, Stage: StageResearch, Count: n, Message: fmt.Sprintf("%s found in %s, %d chosen", textkit.Plural(n, "candidate", "candidates"), textkit.Plural(len(f.summaries), "round", "rounds"), len(f.readKeys())), Elapsed: time.Since(start)})
	o.emit(Event{Type: StageFinished, Stage: StageRead, Count: read, Message: fmt.Sprintf("%d read, %d with full text", read, full), Elapsed: time.Since(start)})
	o.emit(Event{Type: StageFinished, Stage: StageIndex, Count: chunks, Message: textkit.Plural(chunks, "chunk", "chunks") + " embedded", Elapsed: time.Since(start)})
	return f.finish(startAnalyse)
}

// restoreGather restores a finished gather from its checkpoints.
func (o *orchestrator) restoreGather() (bool, error) {
	var keys []string
	var found foundSet
	ok, err := o.loadCheckpoint("analyse", &keys)
	if err != nil || !ok {
		return false, err
	}
	if ok, err := o.loadCheckpoint("research", &found); err != nil || !ok {
		return false, err
	}
	o.st.Found = &found
	if _, err := o.loadCheckpoint(checkpointRounds, &o.st.Rounds); err != nil {
		return false, err
	}
	if _, err := o.loadCheckpoint(checkpointUnread, &o.st.Unread); err != nil {
		return false, err
	}
	var ledger flowLedger
	if ok, err := o.loadCheckpoint(checkpointFlow, &ledger); err != nil {
		return false, err
	} else if ok {
		o.st.Ledger = &ledger
	}
	for _, k := range keys {
		var an Analysis
		if ok, err := o.loadCheckpoint("analyse/"+k, &an); err == nil && ok {
			o.st.Analyses = append(o.st.Analyses, an)
		}
	}
	o.stageSkipped(StageResearch, textkit.Plural(len(found.Records), "source", "sources"))
	o.stageSkipped(StageRead, textkit.Plural(len(found.Records), "source", "sources"))
	o.stageSkipped(StageIndex, "embeddings restored")
	o.stageSkipped(StageAnalyse, fmt.Sprintf("%d analyses", len(o.st.Analyses)))
	return true, nil
}

// finish assembles the flow's results in a deterministic order (round-robin
// over the sub-questions, best first), filters weak analyses and writes
// the flow's checkpoints.
func (f *gather) finish(startAnalyse time.Time) error {
	o := f.o
	found := foundSet{BySubQ: f.bySubQ}
	for _, k := range f.readOrder {
		found.Records = append(found.Records, f.reg.get(k))
	}
	if len(found.Records) == 0 {
		// What was found and why it was passed over stays visible
		// (`C`, sessions show --json) though the run ends here.
		var cands []Candidate
		for _, sq := range o.st.Plan.SubQuestions {
			cands = append(cands, f.candidates[sq.ID]...)
		}
		if err := o.checkpoint(CheckpointCandidates, cands); err != nil {
			return err
		}
	}
	if len(found.Records) == 0 && f.screened.Screened > 0 && f.screened.OnTopic == 0 {
		return fmt.Errorf("the relevance screen judged none of the %d candidates it saw on topic; ask again in other words or with other sources, or start a new run with --screen off to choose by word overlap", f.screened.Screened)
	}
	if len(found.Records) == 0 {
		return fmt.Errorf("no sources were found for this question with %v; check `researchtui doctor`, and try other sources (--sources, or the form's Sources row) or other wording", o.st.Plan.Sources)
	}
	for _, r := range found.Records { // store the merged metadata
		if err := o.saveSource(r); err != nil {
			return err
		}
	}
	o.st.Found = &found
	var all []Analysis
	for _, k := range citationOrder(o.st.Plan.SubQuestions, f.bySubQ) {
		if an, ok := f.analyses[k]; ok {
			all = append(all, an)
		}
	}
	kept := filterByConfidence(all)
	keptSet := map[string]bool{}
	for _, an := range kept {
		keptSet[an.SourceKey] = true
	}
	dropped := map[string]string{}
	for _, an := range all {
		if !keptSet[an.SourceKey] {
			rec, _ := o.loadSource(an.SourceKey)
			dropped[an.SourceKey] = fmt.Sprintf("not cited: the analyst's confidence %.2f is below %.2f", an.Confidence, minConfidence)
			f.progress(rec, StateSkipped, dropped[an.SourceKey])
		}
	}
	o.st.Analyses = kept
	var cands []Candidate
	for _, sq := range o.st.Plan.SubQuestions {
		for _, c := range f.candidates[sq.ID] {
			if why, ok := dropped[c.Key]; ok && c.Read {
				// C says why a work that was read is not in the report.
				c.Reason = why
			}
			cands = append(cands, c)
		}
	}
	keys := make([]string, 0, len(kept))
	for _, an := range kept {
		keys = append(keys, an.SourceKey)
	}
	if err := o.checkpoint("research", found); err != nil {
		return err
	}
	if err := o.checkpoint(CheckpointCandidates, cands); err != nil {
		return err
	}
	f.mu.Lock()
	ledger := flowLedger{Identified: f.identified, AbstractsAsked: f.abstractsAsked, AbstractsFound: f.abstractsFound}
	f.mu.Unlock()
	for _, an := range all {
		ledger.Analysed = append(ledger.Analysed, an.SourceKey)
	}
	if err := o.checkpoint(checkpointFlow, ledger); err != nil {
		return err
	}
	o.st.Ledger = &ledger
	o.st.Rounds = f.summaries
	if err := o.checkpoint(checkpointRounds, f.summaries); err != nil {
		return err
	}
	if err := o.checkpoint(checkpointUnread, o.st.Unread); err != nil {
		return err
	}
	sr := f.screened
	sort.Strings(sr.Fallbacks) // by sub-question, not by which screen ended first
	sr.AnalysisTokensPerSource, sr.AnalysisGeneratedPerSource = o.analysisCost.mean()
	sr.SavedTokens = sr.Rejected * sr.AnalysisTokensPerSource
	if err := o.checkpoint(CheckpointScreen, sr); err != nil {
		return err
	}
	if err := o.checkpoint("analyse", keys); err != nil {
		return err
	}
	return o.stageDone(StageAnalyse, startAnalyse, fmt.Sprintf("%d of %d sources kept", len(kept), len(all)))
}

// citationOrder interleaves the sub-questions' chosen sources, best first,
// so every sub-question's best sources get low numbers.
func citationOrder(subqs []SubQuestion, bySubQ map[string][]string) []string {
	var out []string
	seen := map[string]bool{}
	for i := 0; ; i++ {
		added := false
		for _, sq := range subqs {
			l := bySubQ[sq.ID]
			if i < len(l) {
				added = true
				if !seen[l[i]] {
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
