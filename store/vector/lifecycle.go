package vector

// The index's background work (graph builds, repairs, file checks), its
// close and the status it reports for stats and progress bars.

import (
	"context"
	"math"
)

// Wait blocks until the index's background work (a graph build, a repair,
// a keeper's catch-up) has finished, or ctx ends.
func (ix *Index) Wait(ctx context.Context) error {
	for {
		ix.bgMu.Lock()
		if ix.bgN == 0 {
			ix.bgMu.Unlock()
			return nil
		}
		idle := ix.bgIdle
		ix.bgMu.Unlock()
		select {
		case <-idle:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// goBackground runs f as tracked background work, unless the index is
// stopping (then it reports false and f never runs): Close waits for all of
// it before it releases the file.
func (ix *Index) goBackground(f func()) bool {
	ix.bgMu.Lock()
	if ix.stopped() {
		ix.bgMu.Unlock()
		return false
	}
	ix.bgN++
	if ix.bgN == 1 {
		ix.bgIdle = make(chan struct{})
	}
	ix.bgMu.Unlock()
	go func() {
		defer func() {
			ix.bgMu.Lock()
			ix.bgN--
			if ix.bgN == 0 {
				close(ix.bgIdle)
			}
			ix.bgMu.Unlock()
		}()
		f()
	}()
	return true
}

func (ix *Index) stopped() bool {
	select {
	case <-ix.stop:
		return true
	default:
		return false
	}
}

// Stop asks background work to stop at its next node and waits for it;
// the index still serves, and no background work starts again. A keeper
// stops the index before its last save, so that nothing changes under it.
// What a build linked so far stays linked.
func (ix *Index) Stop() {
	ix.stopOnce.Do(func() {
		ix.bgMu.Lock()
		close(ix.stop)
		ix.bgMu.Unlock()
	})
	_ = ix.Wait(context.Background()) // a background context: it cannot end early
}

// Close stops background work and releases the index file. Later calls
// fail with ErrClosed.
func (ix *Index) Close() error {
	ix.Stop()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		return nil
	}
	ix.closed = true
	ix.endCheck()
	ix.base, ix.segs, ix.pos, ix.g = nil, nil, nil, nil
	ix.baseN, ix.n, ix.live = 0, 0, 0
	if ix.file != nil {
		err := ix.file.close()
		ix.file = nil
		return err
	}
	return nil
}

// indexPhase is what background work is doing, for progress displays.
type indexPhase struct {
	name        string
	done, total int
}

// SetPhase names work a keeper does on the index (loading its vectors,
// catching up) with its progress, for Status and the progress bars built
// on it; an empty name ends it.
func (ix *Index) SetPhase(name string, done, total int) {
	if name == "" {
		ix.phase.Store(nil)
		return
	}
	ix.phase.Store(&indexPhase{name, done, total})
}

// Status describes an index for stats and progress bars.
type Status struct {
	Dim        int  `json:"dim"`
	Vectors    int  `json:"vectors"`    // live vectors
	Nodes      int  `json:"nodes"`      // live and tombstoned
	Tombstones int  `json:"tombstones"` // nodes removed or replaced, kept until saved
	Graph      bool `json:"graph"`      // the HNSW graph exists (else exact only)
	Linked     int  `json:"linked"`     // nodes the graph covers; the rest are scanned
	// Phase names background work in progress ("" when idle), with its
	// progress in Done of Total.
	Phase string `json:"phase,omitempty"`
	Done  int    `json:"done,omitempty"`
	Total int    `json:"total,omitempty"`
	// For a kept index (Keeper.Describe): its file, how big it is, and why
	// it was not used as it was ("" when it was).
	File     string `json:"file,omitempty"`
	FileSize int64  `json:"file_size,omitempty"`
	Note     string `json:"note,omitempty"`
}

// Status reports the index's size and what it is doing.
func (ix *Index) Status() Status {
	ix.mu.RLock()
	st := Status{Dim: ix.dim, Vectors: ix.live, Nodes: ix.n, Tombstones: ix.n - ix.live}
	if g := ix.g; g != nil {
		st.Graph = true
		g.mu.Lock()
		st.Linked = g.wm
		building := g.building
		g.mu.Unlock()
		if building {
			st.Phase, st.Done, st.Total = "building graph", st.Linked, st.Nodes
		}
	}
	ix.mu.RUnlock()
	if p := ix.phase.Load(); p != nil {
		st.Phase, st.Done, st.Total = p.name, p.done, p.total
	}
	if ix.keeper != nil {
		ix.keeper.Describe(&st)
	}
	return st
}

// randomLevel draws a node's top layer: P(level ≥ l) = M^-l.
func (ix *Index) randomLevel() int {
	mL := 1 / math.Log(float64(ix.opt.M))
	l := int(-math.Log(1-ix.rng.Float64()) * mL)
	return min(l, maxGraphLevel)
}
