package pipeline

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/researchtui/researchtui/search"
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

// add registers a record; it returns the canonical key and whether the work
// is new. A known work gains the new record's metadata.
func (g *registry) add(r search.Record) (string, bool) {
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

// research searches every chosen source for every sub-question, in parallel
// with a bound, and hands each new source to found as soon as it is known.
func (o *orchestrator) research(ctx context.Context, found func(search.Record)) (*foundSet, error) {
	reg := newRegistry()
	out := &foundSet{BySubQ: map[string][]string{}}
	var mu sync.Mutex
	known := o.localKnowledge(ctx)

	var failedMu sync.Mutex
	failed := map[string]bool{}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(o.engine.workers())
	for _, sq := range o.st.Plan.SubQuestions {
		g.Go(func() error {
			a := o.startAgent(StageResearch, "researcher "+sq.ID, sq.Question)
			var recs []search.Record
			if local := known[sq.ID]; len(local) >= localSources {
				recs = local
				a.finish(fmt.Sprintf("%d sources already in the knowledge base", len(local)))
			} else {
				recs = append(local, o.searchSources(gctx, sq, func(src string, err error) {
					failedMu.Lock()
					first := !failed[src]
					failed[src] = true
					failedMu.Unlock()
					if first {
						a.warn("%s failed: %s (continuing with the other sources)", src, shortErr(err))
					}
				})...)
			}
			if gctx.Err() != nil {
				return gctx.Err()
			}
			var keys []string
			taken := 0
			for _, r := range recs {
				if taken >= o.plan.ReadPerSubQ {
					break
				}
				key, isNew := reg.add(r)
				keys = append(keys, key)
				taken++
				if isNew {
					r.Key = key
					if err := o.saveSource(r); err != nil {
						return err
					}
					ref := sourceRef(r)
					o.emit(Event{Type: SourceFound, Stage: StageResearch, Agent: a.name, Source: &ref})
					found(r)
				}
			}
			mu.Lock()
			out.BySubQ[sq.ID] = keys
			mu.Unlock()
			if len(known[sq.ID]) < localSources {
				a.finish(fmt.Sprintf("%d sources", len(keys)))
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	reg.mu.Lock()
	out.Records = append([]search.Record(nil), reg.records...)
	reg.mu.Unlock()
	for _, r := range out.Records { // store the merged metadata
		if err := o.saveSource(r); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// searchSources queries each source for one sub-question, strict tier
// first, widening while a source returns too few results; results are
// interleaved across sources so no single source crowds out the others.
func (o *orchestrator) searchSources(ctx context.Context, sq SubQuestion, onFail func(string, error)) []search.Record {
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
			for _, q := range sq.Queries.tiers() {
				recs, err := src.Search(ctx, q, o.plan.ResultsPerCall)
				if err != nil {
					if ctx.Err() == nil {
						onFail(name, err)
					}
					break
				}
				got = append(got, recs...)
				if len(got) >= enoughResults {
					break
				}
			}
			for j := range got {
				if got[j].Source == "" {
					got[j].Source = name
				}
			}
			lists[i] = search.Merge(got)
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
