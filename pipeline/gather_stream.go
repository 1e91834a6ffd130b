package pipeline

import (
	"context"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/textkit"
)

// The middle of a run is one streaming step, the gather, not four stages: every sub-question is
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
//   research, candidates, analyse   the gather's totals, written when it ends
//
// Each source is read (read.go, readLoop), indexed (index.go, indexLoop)
// and analysed (analyse.go, analyseLoop) on its own, as soon as its own
// input is ready.

// readySource is a source that has been read, on its way to analysis.
type readySource struct {
	rec    search.Record
	chunks []store.Chunk
	full   bool
}

// gather is the state of one run's streaming middle (not Flow, the
// PRISMA diagram's counts in prisma.go).
type gather struct {
	o      *orchestrator
	reg    *registry
	share  int // sources a sub-question's own search may choose (reading_plan.go)
	runCap int // sources read per run: the reading plan's target
	// calibrate is how many of a sub-question's best candidates its
	// relevance floor is calibrated on (floorCalibration).
	calibrate int
	// queryVecs are, per sub-question ID, the sub-question's embedding and
	// the question's (nil when embedding failed: ranking is then lexical).
	queryVecs map[string][][]float32
	local     map[string][]search.Record

	readCh    chan search.Record
	indexCh   chan readySource
	analyseCh chan readySource

	mu                             sync.Mutex
	claimed                        map[string]bool // sources sent to read
	readOrder                      []string
	bySubQ                         map[string][]string
	candidates                     map[string][]Candidate // by sub-question
	distinct                       map[string]bool        // every candidate key
	analyses                       map[string]Analysis
	breaker                        breaker
	analysts                       int // analysts started, for their names
	counts                         struct{ read, full, chunks, analysed int }
	ran                            map[string]bool // queries run, normalised (normQuery)
	summaries                      []RoundSummary
	round                          int                  // the round running
	chased                         map[string]bool      // sources whose citations were followed
	reading                        map[string]*inflight // downloads under way (cutoff.go)
	researchDone                   bool                 // this round's research has sent all its sources
	skipped                        map[string]bool      // not analysed because of the cutoff
	identified                     []report.RouteCount  // records per route and round (prisma.go)
	screened                       ScreenReport         // the relevance screen's totals
	shortQ                         []*shortJob          // short sources waiting to share an analyst's call (analyse_batch.go)
	arriving                       int                  // sources sent to read, not yet at their analyst (analyse_batch.go)
	shortBell                      chan struct{}        // rung when one of them arrives
	screenQ                        []*screenJob         // sub-questions waiting to share a screen call (screening_batch.go)
	lookedUp                       map[string]bool      // works whose abstracts were looked up (gather_stream.go)
	abstractsAsked, abstractsFound int
	unscreened                     map[string]bool // sub-questions still searching, whose screens may yet join a call
	screenBell                     chan struct{}   // rung when a screen queues or a search ends without one

	// An update's (update.go): every work the session met before, the
	// cited ones, the works its searches returned, how many of those were
	// known, and the published versions of cited works that appeared.
	known     workSet
	cited     map[string]bool
	seen      workSet
	seenN     int
	knownSeen int
	published map[string]search.Record
}

// runRound takes one round's candidates (research sends them to readCh)
// through read, index and analyse, and returns when all are analysed.
func (f *gather) runRound(ctx context.Context, research func(context.Context) error) error {
	o := f.o
	f.readCh = make(chan search.Record, 256)
	f.indexCh = make(chan readySource, 256)
	f.analyseCh = make(chan readySource, 256)
	f.shortBell = make(chan struct{}, 1)
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

// readerCount: readers mostly wait (on rate limits and downloads), so
// there are more of them than search workers; a source that waits for
// arXiv's turn must not hold up one whose abstract is all there is.
func readerCount(workers int) int { return max(8, 2*workers) }

func (f *gather) distinctCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.distinct)
}

func (f *gather) readKeys() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.readOrder...)
}

func (f *gather) progress(rec search.Record, state, why string) {
	ref := sourceRef(rec)
	ref.State = state
	f.o.emit(Event{Type: SourceProgress, Stage: stageOfState(state), Source: &ref, Message: why})
}

func stageOfState(s string) Stage {
	switch s {
	case StateReading, StateRead:
		return StageRead
	case StateIndexed:
		return StageIndex
	case StateAnalysing, StateAnalysed, StateSkipped:
		return StageAnalyse
	}
	return StageResearch
}

// breaker stops model calls after breakerTrips consecutive failed analyses,
// so a sick backend doesn't cost minutes per source.
type breaker struct {
	mu          sync.Mutex
	consecutive int
	open        bool
}

func (b *breaker) isOpen() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.open
}

// record notes an analysis; it returns true when this one opened the breaker.
func (b *breaker) record(failed bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !failed {
		b.consecutive = 0
		return false
	}
	b.consecutive++
	if b.consecutive >= breakerTrips && !b.open {
		b.open = true
		return true
	}
	return false
}

// Works known by title only (a reference or citing work a source listed
// without its abstract, a search result whose source withholds it) are
// never read: a title is not evidence. Before a sub-question's candidates
// are judged, those works are looked up in one batch request at each
// source of the run that can (search.AbstractFinder: Semantic Scholar's
// /paper/batch, OpenAlex by DOI), so citation chasing adds evidence and
// not only names. Works a source itself listed are not asked of it again
// (it answered without an abstract already), and no source is asked about
// a work twice in a run.

// lookUpAbstracts returns pool with the abstracts found merged in: each
// source of the run that can look works up (Semantic Scholar by its batch
// endpoint, OpenAlex by DOI) is asked in turn for those still without one.
func (f *gather) lookUpAbstracts(ctx context.Context, a *agentCall, pool []search.Record) []search.Record {
	for _, name := range f.o.st.Plan.Sources {
		if af, ok := f.o.engine.Sources[name].(search.AbstractFinder); ok {
			pool = f.lookUpAt(ctx, a, name, af, pool)
		}
	}
	return pool
}

// lookUpAt asks one finder for the pool's works known by title only.
func (f *gather) lookUpAt(ctx context.Context, a *agentCall, name string, finder search.AbstractFinder, pool []search.Record) []search.Record {
	var ask []search.Record
	var at []int
	f.mu.Lock()
	if f.lookedUp == nil {
		f.lookedUp = map[string]bool{}
	}
	for i, r := range pool {
		if hasText(r) || r.Source == name || f.lookedUp[name+"|"+r.Key] {
			continue
		}
		f.lookedUp[name+"|"+r.Key] = true
		if !f.lookedUp[r.Key] { // counted once, however many sources are asked
			f.lookedUp[r.Key] = true
			f.abstractsAsked++
		}
		ask, at = append(ask, r), append(at, i)
	}
	f.mu.Unlock()
	if len(ask) == 0 {
		return pool
	}
	found, err := finder.FindAbstracts(ctx, ask)
	if err != nil && ctx.Err() == nil {
		a.warn("looking up the abstracts of %s known by title only at %s failed: %s", textkit.Plural(len(ask), "work", "works"), name, shortErr(err))
	}
	out := append([]search.Record(nil), pool...)
	got := 0
	for k, r := range found {
		if k >= len(at) || r.Abstract == "" {
			continue
		}
		key, _ := f.reg.add(r) // shares an identifier with the asked work: merged into it
		if key != ask[k].Key {
			continue // it names another known work too: leave both as they were
		}
		out[at[k]] = f.reg.get(key)
		got++
	}
	f.mu.Lock()
	f.abstractsFound += got
	f.mu.Unlock()
	return out
}
