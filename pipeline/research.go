package pipeline

import (
	"context"
	"strconv"
	"sync"
	"time"

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
				recs, err := src.Search(ctx, q, o.plan.ResultsPerCall)
				if err != nil {
					call.Error = shortErr(err)
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
