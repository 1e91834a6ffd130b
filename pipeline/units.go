package pipeline

import (
	"context"
	"fmt"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/store"
)

// The units of the flow (flow.go): each source is read, indexed and
// analysed on its own, as soon as its own input is ready.

// readLoop reads sources as they are chosen.
func (f *flow) readLoop(ctx context.Context) error {
	for rec := range f.readCh {
		f.progress(rec, StateReading, "")
		rctx, done := f.startRead(ctx, rec.Key)
		chunks, full, err := f.o.readSource(rctx, rec)
		done()
		if err != nil {
			return err
		}
		f.mu.Lock()
		f.counts.read++
		if full {
			f.counts.full++
		}
		f.mu.Unlock()
		select {
		case f.indexCh <- readySource{rec: rec, chunks: chunks, full: full}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// indexLoop embeds sources as they are read. Sources waiting together are
// embedded together (fewer, fuller calls); each is passed on to analysis
// as soon as its own chunks are in the index.
func (f *flow) indexLoop(ctx context.Context) error {
	o := f.o
	ix, err := o.index(ctx)
	if err != nil {
		return err
	}
	a := o.startAgent(StageIndex, "indexer", "embedding chunks with "+o.opt.EmbedModel)
	total, embedded := 0, 0
	for {
		var batch []readySource
		select {
		case rs, ok := <-f.indexCh:
			if !ok {
				a.finish(fmt.Sprintf("%d chunks, %d newly embedded", total, embedded))
				return nil
			}
			batch = append(batch, rs)
		case <-ctx.Done():
			return ctx.Err()
		}
		n := len(batch[0].chunks)
	drain:
		for n < embedBatch {
			select {
			case rs, ok := <-f.indexCh:
				if !ok {
					break drain
				}
				batch = append(batch, rs)
				n += len(rs.chunks)
			default:
				break drain
			}
		}
		var chunks []store.Chunk
		for _, rs := range batch {
			chunks = append(chunks, rs.chunks...)
		}
		for start := 0; start < len(chunks); start += embedBatch {
			part := chunks[start:min(start+embedBatch, len(chunks))]
			got, err := o.indexChunks(ctx, a, ix, part)
			embedded += got
			if err != nil {
				if fatal(ctx, err) {
					return err
				}
				a.warn("embedding %d chunks failed: %s; they are kept and searched by keyword", len(part), shortErr(err))
			}
			o.emit(Event{Type: ChunksIndexed, Stage: StageIndex, Agent: a.name, Count: len(part)})
		}
		total += len(chunks)
		f.mu.Lock()
		f.counts.chunks = total
		f.mu.Unlock()
		for _, rs := range batch {
			f.progress(rs.rec, StateIndexed, "")
			select {
			case f.analyseCh <- rs:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
}

// analyseLoop starts an analyst for each source as it is indexed; the
// analysts wait for a model slot, so the backend is kept exactly full.
func (f *flow) analyseLoop(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	for rs := range f.analyseCh {
		g.Go(func() error { return f.analyse(gctx, rs) })
	}
	return g.Wait()
}

func (f *flow) analyse(ctx context.Context, rs readySource) error {
	o := f.o
	key := rs.rec.Key
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
		a := o.startAgent(StageAnalyse, name, truncateRunes(rs.rec.Title, 70))
		a.slotHeld = true
		var failed bool
		an, failed, err = o.analyseOne(ctx, a, rs.rec, evidence, rs.full)
		release()
		if err != nil {
			a.finish("failed")
			return err
		}
		if f.breaker.record(failed) {
			a.warn("%d analyses in a row failed; the remaining sources are summarised from their abstracts", breakerTrips)
		}
		a.finish(fmt.Sprintf("confidence %.2f, %d findings", an.Confidence, len(an.KeyFindings)))
	}
	an.SourceKey = key
	if err := o.checkpoint("analyse/"+key, an); err != nil {
		return err
	}
	f.done(rs.rec, an)
	return nil
}

// skipAnalysis leaves a source unanalysed because of the cutoff, and says so.
func (f *flow) skipAnalysis(rec search.Record) {
	f.mu.Lock()
	f.skipped[rec.Key] = true
	f.mu.Unlock()
	why := "not analysed: " + f.o.cut.reason()
	f.progress(rec, StateSkipped, why)
	f.o.noteUnread(rec.Title, why)
}

func (f *flow) done(rec search.Record, an Analysis) {
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
func (f *flow) vectorsFor(key string) [][]float32 {
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

func (f *flow) progress(rec search.Record, state, why string) {
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
