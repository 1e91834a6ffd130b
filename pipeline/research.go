package pipeline

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/textkit"
)

// enoughResults is how many results a query tier must return before the
// search stops widening to the next tier.
const enoughResults = 3

// localEnough is the score above which a stored chunk counts as already
// known, and localSources how many such sources make a web search for a
// sub-question unnecessary.
const (
	localEnough  = 0.80
	localSources = 4
)

// registry deduplicates sources across sources and sub-questions: a work is
// known by every identifier it has, so the arXiv and OpenAlex records of one
// paper are one source, and no source is read twice.
type registry struct {
	mu      sync.Mutex
	byID    map[string]string // identifier → key
	records []search.Record
	index   map[string]int // key → position in records
}

func newRegistry() *registry {
	return &registry{byID: map[string]string{}, index: map[string]int{}}
}

func identifiers(r search.Record) []string {
	var ids []string
	add := func(kind, v string) {
		if v != "" {
			ids = append(ids, kind+":"+v)
		}
	}
	add("doi", search.NormalizeDOI(r.DOI))
	add("arxiv", r.ArxivID)
	add("pmid", r.PMID)
	add("s2", r.S2ID)
	add("openalex", r.OpenAlexID)
	if t := search.NormalizeTitle(r.Title); t != "" {
		add("title", t+"|"+strconv.Itoa(r.Year))
	}
	return ids
}

// get returns the record known by key (with every source's metadata merged).
func (g *registry) get(key string) search.Record {
	g.mu.Lock()
	defer g.mu.Unlock()
	if i, ok := g.index[key]; ok {
		return g.records[i]
	}
	return search.Record{Key: key}
}

// add registers a record; it returns the canonical key and whether the work
// is new. A known work gains the new record's metadata.
func (g *registry) add(r search.Record) (string, bool) {
	search.BoundFields(&r)
	g.mu.Lock()
	defer g.mu.Unlock()
	ids := identifiers(r)
	for _, id := range ids {
		if key, ok := g.byID[id]; ok {
			merged := search.Merge([]search.Record{g.records[g.index[key]], r})
			if len(merged) == 1 {
				merged[0].Key = key
				g.records[g.index[key]] = merged[0]
			}
			for _, id := range ids {
				g.byID[id] = key
			}
			return key, false
		}
	}
	if r.Key == "" {
		search.AssignKey(&r)
	}
	g.index[r.Key] = len(g.records)
	g.records = append(g.records, r)
	for _, id := range ids {
		g.byID[id] = r.Key
	}
	return r.Key, true
}

// sayOnce reports whether the cut-metadata warning for source name was
// given before, and marks it given.
func (o *orchestrator) sayOnce(name string) bool {
	_, said := o.cutSaid.LoadOrStore(name, true)
	return said
}

// firstCut is the index of the first record with a field cut to its cap.
func firstCut(recs []search.Record) int {
	for i, r := range recs {
		if len(r.Cut) > 0 {
			return i
		}
	}
	return 0
}

// searchSources queries each source for one sub-question, over-fetching
// (one request per source and tier, many more results than will be read:
// ranking decides, not the API's order), strict tier first, widening while
// a source returns too few; results are interleaved across sources. Each
// source's search is reported as the agent a's (SourceSearched).
func (o *orchestrator) searchSources(ctx context.Context, a *agentCall, sq SubQuestion, onFail func(string, error)) []search.Record {
	lists := make([][]search.Record, len(o.st.Plan.Sources))
	var wg sync.WaitGroup
	for i, name := range o.st.Plan.Sources {
		src := o.engine.Sources[name]
		if src == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var got []search.Record
			start := time.Now()
			call := &Call{Operation: "search", Source: name}
			for _, q := range sq.Queries.tiers() {
				call.Attempts++
				recs, err := o.searchOne(ctx, src, q)
				if err != nil {
					call.Error = shortErr(err)
					if ctx.Err() == nil {
						o.searchFailed.Store(name, true)
						onFail(name, err)
					}
					break
				}
				got = append(got, recs...)
				if len(got) >= enoughResults {
					break
				}
			}
			cut := 0
			for j := range got {
				if got[j].Source == "" {
					got[j].Source = name
				}
				if len(got[j].Cut) > 0 {
					cut++
				}
			}
			if cut > 0 && !o.sayOnce(name) {
				// Once per source: every sub-question's search may meet them.
				o.warn(a.stage, a.name, "%s answered %s with metadata longer than any real work's, cut (%s)", name, textkit.Plural(cut, "work", "works"), strings.Join(got[firstCut(got)].Cut, "; "))
			}
			lists[i] = search.Merge(got)
			o.emit(Event{Type: SourceSearched, Stage: a.stage, Agent: a.name, Count: len(lists[i]), Call: call, Elapsed: time.Since(start)})
		}()
	}
	wg.Wait()
	var out []search.Record
	for i := 0; ; i++ {
		added := false
		for _, l := range lists {
			if i < len(l) {
				out = append(out, l[i])
				added = true
			}
		}
		if !added {
			break
		}
	}
	return search.Merge(out)
}

// researchUnit is the checkpoint of one sub-question's research.
type researchUnit struct {
	Candidates []Candidate     `json:"candidates"`
	Records    []search.Record `json:"records"`          // the candidates (merged metadata), best first
	Chased     []string        `json:"chased,omitempty"` // sources whose citations were followed (later rounds)
	Screen     *screenUnit     `json:"screen,omitempty"` // what the relevance screen did
	// Identified counts the records each route returned, before
	// duplicates were removed (the PRISMA flow's first boxes).
	Identified []report.RouteCount `json:"identified,omitempty"`
	// Met are the works an update's search met first, so a resumed update
	// counts what its checks saw (update.go).
	Met []metWork `json:"met,omitempty"`
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
			o.warn(StageResearch, "", "embedding the sub-questions failed (%s); candidates are ranked by their words only", shortErr(err))
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
func (f *gather) researchAll(ctx context.Context) error {
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
	f.expectScreens(todo)
	for _, sq := range todo {
		g.Go(func() error {
			defer f.screenArrived(sq.ID) // a search that ends without a screen
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
			unit := f.rank(gctx, a, sq, recs, origins, f.share)
			unit.Identified = identifiedBy(recs, origins, 1)
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
			a.finish(fmt.Sprintf("read %d of %s", read, textkit.Plural(len(unit.Candidates), "candidate", "candidates")))
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return f.fill(ctx)
}

// rank scores one sub-question's candidates and chooses what to read,
// within the sub-question's quota and the run's cap.
func (f *gather) rank(ctx context.Context, a *agentCall, sq SubQuestion, recs []search.Record, origins []string, quota int) researchUnit {
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
	for i, k := range keys {
		pool[i] = byKey[k]
	}
	pool = f.lookUpAbstracts(ctx, a, pool)
	texts := make([]string, len(keys))
	for i, k := range keys {
		byKey[k] = pool[i]
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
		floor = calibrateFloor(cands, byKey, f.calibrate)
	}
	for i := range cands {
		cands[i].Floor = floor
	}
	screened := f.judge(ctx, a, sq, cands, byKey, quota, floor)
	if read := countRead(cands); read == 0 && len(cands) > 0 {
		when := fmt.Sprintf("round %d", f.round)
		if o.follow != nil && o.follow.Update > 0 {
			when = fmt.Sprintf("update %d", o.follow.Update)
		}
		why := "none relevant enough to read"
		if screened != nil && screened.Fallback == "" && screened.Screened > 0 {
			why = fmt.Sprintf("the relevance screen judged none of the %d it saw on topic", screened.Screened)
		}
		a.warn("%s, %s: %s, %s", sq.ID, when, textkit.Plural(len(cands), "candidate", "candidates"), why)
	}
	unit := researchUnit{Candidates: cands, Screen: screened}
	for _, c := range cands {
		unit.Records = append(unit.Records, byKey[c.Key])
	}
	return unit
}

// judge chooses what a sub-question reads: its shortlist is screened and
// the on-topic candidates are read best ranked first, up to quota; when
// the screen is off or cannot judge (screenFallback), the floors choose,
// and the screen's off-topic verdicts still hold.
func (f *gather) judge(ctx context.Context, a *agentCall, sq SubQuestion, cands []Candidate, recs map[string]search.Record, quota int, floor float64) *screenUnit {
	idx := shortlist(cands, recs, f.o.plan.Shortlist)
	u := f.screen(ctx, a, sq, cands, recs, idx, floor)
	why := screenFallback(u, cands, idx, floor, f.o.screenBlind.Load())
	if u != nil && why == "" {
		chooseByVerdict(cands, idx, quota, f.isClaimed)
		return u
	}
	if u != nil && u.Rejected == 0 && u.Unjudged == 0 {
		f.o.screenBlind.Store(true)
	}
	selectCandidates(cands, recs, quota, f.calibrate, floor, f.isClaimed)
	for i := range cands {
		if c := &cands[i]; c.Read && strings.HasPrefix(c.Screen, screenOffTopic) {
			c.Read, c.Reason = false, reasonOffTopic+" ("+offTopicWhy(c.Screen)+")"
		}
	}
	if u != nil {
		u.Fallback = why
		if ctx.Err() == nil {
			a.warn("%s: %s", sq.ID, why)
		}
	}
	return u
}

// apply takes a sub-question's ranked candidates into the run: chosen
// sources not yet claimed by another sub-question are sent to be read.
func (f *gather) apply(ctx context.Context, sq SubQuestion, unit researchUnit, restored bool) error {
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
	f.identified = append(f.identified, unit.Identified...)
	f.screened.add(sq.ID, unit.Screen)
	for _, c := range unit.Candidates {
		o.verdicts.put(c)
	}
	distinct := len(f.distinct)
	f.mu.Unlock()

	read := 0
	for _, c := range unit.Candidates {
		if c.Read {
			read++
		}
	}
	msg := fmt.Sprintf("%s: read %d of %s", sq.ID, read, textkit.Plural(len(unit.Candidates), "candidate", "candidates"))
	if restored {
		msg += " (restored)"
	}
	o.emit(Event{Type: CandidatesRanked, Stage: StageResearch, Agent: "researcher " + sq.ID, Count: distinct, Message: msg})
	return f.send(ctx, sq, unit.Candidates, send)
}

// send emits each record chosen for sq as found and hands it to the
// readers.
func (f *gather) send(ctx context.Context, sq SubQuestion, cands []Candidate, send []search.Record) error {
	o := f.o
	score, origin := map[string]float64{}, map[string]string{}
	for _, c := range cands {
		score[c.Key], origin[c.Key] = c.Score, c.Origin
	}
	for _, r := range send {
		if err := o.saveSource(r); err != nil {
			return err
		}
		ref := sourceRef(r)
		ref.State, ref.Score = StateQueued, score[r.Key]
		o.emit(Event{Type: SourceFound, Stage: StageResearch, Agent: "researcher " + sq.ID, Source: &ref, Message: origin[r.Key]})
		f.mu.Lock()
		f.arriving++ // on its way to an analyst (analyse_batch.go)
		f.mu.Unlock()
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
func (f *gather) floor(subq string) float64 {
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

// searchOne asks src for query's results, the local source only within the
// run's collections when it names some.
func (o *orchestrator) searchOne(ctx context.Context, src search.Source, query string) ([]search.Record, error) {
	if sc, ok := src.(search.CollectionSearcher); ok && len(o.opt.Collections) > 0 {
		return sc.SearchCollections(ctx, query, o.plan.ResultsPerCall, o.opt.Collections)
	}
	return src.Search(ctx, query, o.plan.ResultsPerCall)
}
