package pipeline

import (
	"context"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/store"
)

// The middle of a run is one flow, not four stages: every sub-question is
// searched and its candidates ranked; each chosen source is read as soon as
// it is chosen, indexed as soon as it is read, and analysed as soon as it
// is indexed. The slow parts (arXiv's spacing, downloads, PDF parsing)
// overlap model work, and only the writer waits for all analyses.
//
// Units and their checkpoints, so a resume repeats none of them:
//   research/<sub-question>  the candidates, their scores and the records chosen
//   read/<source key>        the source was read and chunked
//   (embeddings)             cached by (model, content hash) in the store
//   analyse/<source key>     the source's analysis
//   research, candidates, analyse   the flow's totals, written when it ends

// researchUnit is the checkpoint of one sub-question's research.
type researchUnit struct {
	Candidates []Candidate     `json:"candidates"`
	Records    []search.Record `json:"records"`          // the candidates (merged metadata), best first
	Chased     []string        `json:"chased,omitempty"` // sources whose citations were followed (later rounds)
	Screen     *screenUnit     `json:"screen,omitempty"` // what the relevance screen did
}

// readySource is a source that has been read, on its way to analysis.
type readySource struct {
	rec    search.Record
	chunks []store.Chunk
	full   bool
}

// flow is the state of one run's streaming middle.
type flow struct {
	o      *orchestrator
	reg    *registry
	quota  int // sources read per sub-question
	runCap int // sources read per run
	// queryVecs are, per sub-question ID, the sub-question's embedding and
	// the question's (nil when embedding failed: ranking is then lexical).
	queryVecs map[string][][]float32
	local     map[string][]search.Record

	readCh    chan search.Record
	indexCh   chan readySource
	analyseCh chan readySource

	mu           sync.Mutex
	claimed      map[string]bool // sources sent to read
	readOrder    []string
	bySubQ       map[string][]string
	candidates   map[string][]Candidate // by sub-question
	distinct     map[string]bool        // every candidate key
	analyses     map[string]Analysis
	breaker      breaker
	analysts     int // analysts started, for their names
	counts       struct{ read, full, chunks, analysed int }
	ran          map[string]bool // queries run, normalised (normQuery)
	summaries    []RoundSummary
	round        int                  // the round running
	chased       map[string]bool      // sources whose citations were followed
	reading      map[string]*inflight // downloads under way (cutoff.go)
	researchDone bool                 // this round's research has sent all its sources
	skipped      map[string]bool      // not analysed because of the cutoff
	screened     ScreenReport         // the relevance screen's totals
}

// stageGather runs research, read, index and analyse as one flow, in
// rounds: after each round, reflection (reflect.go) names what the
// sub-questions still lack and the next round searches and chases
// citations for it (rounds.go), within the depth's round cap.
func (o *orchestrator) stageGather(ctx context.Context) error {
	if done, err := o.restoreGather(); err != nil || done {
		return err
	}
	subqs := o.st.Plan.SubQuestions
	f := &flow{
		o:          o,
		reg:        newRegistry(),
		quota:      readQuota(o.plan, len(subqs)),
		runCap:     o.plan.AnalyseMax,
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
	o.stageStart(StageResearch, fmt.Sprintf("searching %v, ranking what is found", o.st.Plan.Sources))
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
	o.emit(Event{Type: StageFinished, Stage: StageResearch, Count: n, Message: fmt.Sprintf("%d candidates found in %d rounds, %d chosen", n, len(f.summaries), len(f.readKeys())), Elapsed: time.Since(start)})
	o.emit(Event{Type: StageFinished, Stage: StageRead, Count: read, Message: fmt.Sprintf("%d read, %d with full text", read, full), Elapsed: time.Since(start)})
	o.emit(Event{Type: StageFinished, Stage: StageIndex, Count: chunks, Message: fmt.Sprintf("%d chunks embedded", chunks), Elapsed: time.Since(start)})
	return f.finish(startAnalyse)
}

// runRound takes one round's candidates (research sends them to readCh)
// through read, index and analyse, and returns when all are analysed.
func (f *flow) runRound(ctx context.Context, research func(context.Context) error) error {
	o := f.o
	f.readCh = make(chan search.Record, 256)
	f.indexCh = make(chan readySource, 256)
	f.analyseCh = make(chan readySource, 256)
	g, gctx := errgroup.WithContext(ctx)
	f.mu.Lock()
	f.researchDone = false
	f.mu.Unlock()
	g.Go(func() error {
		defer close(f.readCh)
		err := research(gctx)
		f.mu.Lock()
		f.researchDone = true
		f.mu.Unlock()
		return err
	})
	readDone := make(chan struct{})
	go f.watchStragglers(readDone)
	var readers sync.WaitGroup
	for range readerCount(o.engine.workers()) {
		readers.Add(1)
		g.Go(func() error {
			defer readers.Done()
			return f.readLoop(gctx)
		})
	}
	g.Go(func() error {
		readers.Wait()
		close(readDone)
		close(f.indexCh)
		if n, why := o.fetchFailures.take(); n > 0 && gctx.Err() == nil {
			o.warn(StageRead, "reader", "%d full texts could not be downloaded (e.g. %s); those sources are read from their abstracts", n, why)
		}
		return nil
	})
	g.Go(func() error {
		defer close(f.analyseCh)
		return f.indexLoop(gctx)
	})
	g.Go(func() error { return f.analyseLoop(gctx) })
	return g.Wait()
}

// readQuota is how many sources each sub-question reads: the depth's
// figure, shared out so the run's analysis limit is not exceeded.
func readQuota(p depthPlan, subqs int) int {
	if subqs <= 0 {
		return p.ReadPerSubQ
	}
	q := (p.AnalyseMax + subqs - 1) / subqs
	return max(2, min(p.ReadPerSubQ, q))
}

// readerCount: readers mostly wait (on rate limits and downloads), so
// there are more of them than search workers; a source that waits for
// arXiv's turn must not hold up one whose abstract is all there is.
func readerCount(workers int) int { return max(8, 2*workers) }

// restoreGather restores a finished flow from its checkpoints.
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
	for _, k := range keys {
		var an Analysis
		if ok, err := o.loadCheckpoint("analyse/"+k, &an); err == nil && ok {
			o.st.Analyses = append(o.st.Analyses, an)
		}
	}
	o.stageSkipped(StageResearch, fmt.Sprintf("%d sources", len(found.Records)))
	o.stageSkipped(StageRead, fmt.Sprintf("%d sources", len(found.Records)))
	o.stageSkipped(StageIndex, "embeddings restored")
	o.stageSkipped(StageAnalyse, fmt.Sprintf("%d analyses", len(o.st.Analyses)))
	return true, nil
}

// queryVectors embeds every sub-question and the question (through the
// cache, so a resume asks nothing again). On failure ranking is lexical.
func (o *orchestrator) queryVectors(ctx context.Context) map[string][][]float32 {
	subqs := o.st.Plan.SubQuestions
	texts := make([]string, 0, len(subqs)+1)
	for _, sq := range subqs {
		texts = append(texts, sq.Question)
	}
	texts = append(texts, o.opt.Question)
	a := &agentCall{o: o, stage: StageResearch, name: "ranker", start: time.Now()}
	vecs, err := o.embedCached(ctx, a, roleQuery, texts)
	if err != nil {
		if ctx.Err() == nil {
			o.warn(StageResearch, "ranker", "embedding the sub-questions failed (%s); candidates are ranked by their words only", shortErr(err))
		}
		return nil
	}
	out := map[string][][]float32{}
	o.subqVecs = vecs[:len(subqs)]
	for i, sq := range subqs {
		if vecs[i] != nil && vecs[len(subqs)] != nil {
			out[sq.ID] = [][]float32{vecs[i], vecs[len(subqs)]}
		}
	}
	return out
}

// researchAll researches every sub-question, in parallel with a bound.
// Restored sub-questions go first, in plan order, so a resume claims the
// same sources as the first attempt did.
func (f *flow) researchAll(ctx context.Context) error {
	o := f.o
	var todo []SubQuestion
	for _, sq := range o.st.Plan.SubQuestions {
		var unit researchUnit
		ok, err := o.loadCheckpoint("research/"+sq.ID, &unit)
		if err != nil {
			return err
		}
		if !ok {
			todo = append(todo, sq)
			continue
		}
		if err := f.apply(ctx, sq, unit, true); err != nil {
			return err
		}
	}
	var failedMu sync.Mutex
	failed := map[string]bool{}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(o.engine.workers())
	for _, sq := range todo {
		g.Go(func() error {
			a := o.startAgent(StageResearch, "researcher "+sq.ID, sq.Question)
			recs := f.local[sq.ID]
			origins := make([]string, len(recs))
			for i := range origins {
				origins[i] = originKnowledge
			}
			if len(recs) < localSources {
				found := o.searchSources(gctx, a, sq, func(src string, err error) {
					failedMu.Lock()
					first := !failed[src]
					failed[src] = true
					failedMu.Unlock()
					if first {
						a.warn("%s failed: %s (continuing with the other sources)", src, shortErr(err))
					}
				})
				for _, r := range found {
					recs, origins = append(recs, r), append(origins, "search: "+r.Source)
				}
			}
			if gctx.Err() != nil {
				return gctx.Err()
			}
			unit := f.rank(gctx, a, sq, recs, origins, f.quota)
			if err := o.checkpoint("research/"+sq.ID, unit); err != nil {
				return err
			}
			if err := f.apply(gctx, sq, unit, false); err != nil {
				return err
			}
			read := 0
			for _, c := range unit.Candidates {
				if c.Read {
					read++
				}
			}
			a.finish(fmt.Sprintf("read %d of %d candidates", read, len(unit.Candidates)))
			return nil
		})
	}
	return g.Wait()
}

// rank scores one sub-question's candidates and chooses what to read,
// within the sub-question's quota and the run's cap.
func (f *flow) rank(ctx context.Context, a *agentCall, sq SubQuestion, recs []search.Record, origins []string, quota int) researchUnit {
	o := f.o
	// One entry per work: records of one paper from several sources merge.
	byKey := map[string]search.Record{}
	origin := map[string]string{}
	var keys []string
	for i, r := range recs {
		key, _ := f.reg.add(r)
		if _, ok := byKey[key]; !ok {
			keys = append(keys, key)
			origin[key] = origins[i]
		}
		byKey[key] = f.reg.get(key)
	}
	pool := make([]search.Record, len(keys))
	texts := make([]string, len(keys))
	for i, k := range keys {
		pool[i] = byKey[k]
		texts[i] = candidateText(pool[i])
	}
	var vecs [][]float32
	if qv := f.queryVecs[sq.ID]; qv != nil && len(texts) > 0 {
		var err error
		if vecs, err = o.embedCached(ctx, a, roleDocument, texts); err != nil && ctx.Err() == nil {
			a.warn("embedding the candidates failed (%s); they are ranked by their words only", shortErr(err))
			vecs = nil
		}
	}
	cands := scoreCandidates(pool, vecs, f.queryVecs[sq.ID], rankTerms(sq, o.st.Plan.CanonicalTerm))
	for i := range cands {
		cands[i].SubQ, cands[i].Round, cands[i].Origin = sq.ID, f.round, origin[cands[i].Key]
	}
	floor := f.floor(sq.ID)
	if f.round == 1 || floor == 0 {
		floor = calibrateFloor(cands, byKey, quota)
	}
	cands = selectCandidates(cands, byKey, quota, floor)
	screened := f.screen(ctx, a, sq, cands, byKey)
	if read := countRead(cands); read == 0 && len(cands) > 0 {
		a.warn("round %d: %s, none relevant enough to read", f.round, plural(len(cands), "candidate", "candidates"))
	}
	unit := researchUnit{Candidates: cands, Screen: screened}
	for _, c := range cands {
		unit.Records = append(unit.Records, byKey[c.Key])
	}
	return unit
}

// apply takes a sub-question's ranked candidates into the run: chosen
// sources not yet claimed by another sub-question are sent to be read.
func (f *flow) apply(ctx context.Context, sq SubQuestion, unit researchUnit, restored bool) error {
	o := f.o
	recs := map[string]search.Record{}
	for _, r := range unit.Records {
		key, _ := f.reg.add(r)
		recs[r.Key] = f.reg.get(key)
	}
	var send []search.Record
	f.mu.Lock()
	for i := range unit.Candidates {
		c := &unit.Candidates[i]
		f.distinct[c.Key] = true
		if !c.Read {
			continue
		}
		switch {
		case f.claimed[c.Key]:
			c.Reason = reasonDuplicate
		case len(f.claimed) >= f.runCap && !recs[c.Key].HasData():
			c.Read, c.Reason = false, reasonRunCap
			continue
		default:
			f.claimed[c.Key] = true
			f.readOrder = append(f.readOrder, c.Key)
			send = append(send, recs[c.Key])
		}
		f.bySubQ[sq.ID] = append(f.bySubQ[sq.ID], c.Key)
	}
	f.candidates[sq.ID] = append(f.candidates[sq.ID], unit.Candidates...) // every round's
	f.screened.add(unit.Screen)
	distinct := len(f.distinct)
	f.mu.Unlock()

	read := 0
	for _, c := range unit.Candidates {
		if c.Read {
			read++
		}
	}
	msg := fmt.Sprintf("%s: read %d of %d candidates", sq.ID, read, len(unit.Candidates))
	if restored {
		msg += " (restored)"
	}
	o.emit(Event{Type: CandidatesRanked, Stage: StageResearch, Agent: "researcher " + sq.ID, Count: distinct, Message: msg})
	score, origin := map[string]float64{}, map[string]string{}
	for _, c := range unit.Candidates {
		score[c.Key], origin[c.Key] = c.Score, c.Origin
	}
	for _, r := range send {
		if err := o.saveSource(r); err != nil {
			return err
		}
		ref := sourceRef(r)
		ref.State, ref.Score = StateQueued, score[r.Key]
		o.emit(Event{Type: SourceFound, Stage: StageResearch, Agent: "researcher " + sq.ID, Source: &ref, Message: origin[r.Key]})
		select {
		case f.readCh <- r:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// floor is the relevance floor a sub-question's first round set (0 when
// it has none yet): later rounds read only what clears it.
func (f *flow) floor(subq string) float64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.candidates[subq] {
		if c.Round == 1 && c.Floor > 0 {
			return c.Floor
		}
	}
	return 0
}

func countRead(cs []Candidate) int {
	n := 0
	for _, c := range cs {
		if c.Read {
			n++
		}
	}
	return n
}

func (f *flow) distinctCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.distinct)
}

func (f *flow) readKeys() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.readOrder...)
}

// finish assembles the flow's results in a deterministic order (round-robin
// over the sub-questions, best first), filters weak analyses and writes
// the flow's checkpoints.
func (f *flow) finish(startAnalyse time.Time) error {
	o := f.o
	found := foundSet{BySubQ: f.bySubQ}
	for _, k := range f.readOrder {
		found.Records = append(found.Records, f.reg.get(k))
	}
	if len(found.Records) == 0 {
		return fmt.Errorf("no sources were found for this question with %v; check `researchtui doctor` and try other --sources or wording", o.st.Plan.Sources)
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
	for _, an := range all {
		if !keptSet[an.SourceKey] {
			rec, _ := o.loadSource(an.SourceKey)
			f.progress(rec, StateSkipped, fmt.Sprintf("not cited: the analyst's confidence %.2f is below %.2f", an.Confidence, minConfidence))
		}
	}
	o.st.Analyses = kept
	var cands []Candidate
	for _, sq := range o.st.Plan.SubQuestions {
		cands = append(cands, f.candidates[sq.ID]...)
	}
	keys := make([]string, 0, len(kept))
	for _, an := range kept {
		keys = append(keys, an.SourceKey)
	}
	if err := o.checkpoint("research", found); err != nil {
		return err
	}
	if err := o.checkpoint(checkpointCandidates, cands); err != nil {
		return err
	}
	o.st.Rounds = f.summaries
	if err := o.checkpoint(checkpointRounds, f.summaries); err != nil {
		return err
	}
	if err := o.checkpoint(checkpointUnread, o.st.Unread); err != nil {
		return err
	}
	sr := f.screened
	sr.AnalysisTokensPerSource = o.analysisCost.mean()
	sr.SavedTokens = sr.Rejected * sr.AnalysisTokensPerSource
	if err := o.checkpoint(checkpointScreen, sr); err != nil {
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
