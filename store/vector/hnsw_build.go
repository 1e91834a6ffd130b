package vector

// Building and mending the graph (hnsw.go): background builds that link
// the nodes not linked yet, the choice of a new entry point, and the
// repair that unlinks tombstones.

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/viterin/vek/vek32"
)

// drain links unlinked nodes until none are left or stop is closed. Several
// goroutines may drain at once: each claims the next node.
func (ix *Index) drain(stop <-chan struct{}) {
	for {
		if stop != nil {
			select {
			case <-stop:
				return
			default:
			}
		}
		ix.mu.RLock()
		g := ix.g
		if g == nil || ix.closed {
			ix.mu.RUnlock()
			return
		}
		g.mu.Lock()
		if g.next >= ix.n {
			g.mu.Unlock()
			ix.mu.RUnlock()
			return
		}
		node := uint32(g.next)
		g.next++
		g.mu.Unlock()
		if !ix.isDel(node) {
			ix.insert(node)
		}
		g.mu.Lock()
		g.complete(int(node))
		g.mu.Unlock()
		ix.linked.Add(1)
		ix.mu.RUnlock()
	}
}

// startBuilderLocked starts linking the tail in the background; the caller
// holds the write lock.
func (ix *Index) startBuilderLocked() {
	g := ix.g
	g.mu.Lock()
	g.building = true
	g.mu.Unlock()
	ix.goBackground(ix.build)
}

func (ix *Index) build() {
	for {
		var wg sync.WaitGroup
		for w := 0; w < ix.opt.Workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ix.drain(ix.stop)
			}()
		}
		wg.Wait()
		if ix.stopped() {
			return
		}
		// Adds that arrived while the workers finished are still the
		// builder's: only hand linking back to Add once nothing is left.
		ix.mu.Lock()
		g := ix.g
		if g == nil {
			ix.mu.Unlock()
			return
		}
		g.mu.Lock()
		caught := g.next >= ix.n
		if caught {
			g.building = false
		}
		g.mu.Unlock()
		ix.mu.Unlock()
		if caught {
			if ix.keeper != nil {
				ix.keeper.Built(ix.stop)
			}
			return
		}
	}
}

// pickEntryLocked chooses a new entry point after the old one was removed:
// the live linked node on the highest layer, or none. The caller holds the
// write lock (no insertion is in flight) and g.mu.
func (ix *Index) pickEntryLocked() {
	g := ix.g
	best, bestL := noNode, -1
	for node := 0; node < g.next; node++ {
		if ix.isDel(uint32(node)) {
			continue
		}
		if l := ix.level(uint32(node)); l > bestL {
			best, bestL = uint32(node), l
			if l >= g.maxLevel {
				break
			}
		}
	}
	g.ep, g.maxLevel, g.hasEP = best, bestL, best != noNode
}

// maybeRepair starts a repair in the background when tombstones pass a
// tenth of the graph.
func (ix *Index) maybeRepair() {
	ix.mu.RLock()
	need := ix.g != nil && !ix.closed && ix.tombs >= repairMin && ix.tombs*repairShare >= ix.n
	ix.mu.RUnlock()
	if !need {
		return
	}
	if ix.claimRepair() {
		if !ix.goBackground(func() {
			defer ix.releaseRepair()
			ix.repair(ix.stop)
		}) {
			ix.releaseRepair()
		}
	}
}

// repairBeforeSave unlinks the tombstones now (a save drops them, and the
// links to them with them), unless a repair is already running.
func (ix *Index) repairBeforeSave() {
	ix.mu.RLock()
	need := ix.g != nil && ix.tombs > 0
	ix.mu.RUnlock()
	if need && ix.claimRepair() {
		defer ix.releaseRepair()
		ix.repair(nil)
	}
}

// claimRepair reports whether the caller may repair: one repair at a time.
func (ix *Index) claimRepair() bool {
	ix.bgMu.Lock()
	defer ix.bgMu.Unlock()
	if ix.repairing {
		return false
	}
	ix.repairing = true
	return true
}

func (ix *Index) releaseRepair() {
	ix.bgMu.Lock()
	ix.repairing = false
	ix.bgMu.Unlock()
}

// repair unlinks the current tombstones from the graph: every live node
// that links to one is relinked to the best of its other neighbours and the
// tombstone's neighbours (the consolidation of FreshDiskANN). Walks and
// insertions continue meanwhile; removals wait at most one batch.
func (ix *Index) repair(stop <-chan struct{}) {
	ix.mu.RLock()
	if ix.g == nil || ix.closed {
		ix.mu.RUnlock()
		return
	}
	dead := make([]uint64, len(ix.del))
	ndead := 0
	for i := range dead {
		dead[i] = ix.del[i] &^ ix.purged[i]
		for w := dead[i]; w != 0; w &= w - 1 {
			ndead++
		}
	}
	g := ix.g
	g.mu.Lock()
	end := g.wm
	g.mu.Unlock()
	ix.mu.RUnlock()
	if ndead == 0 {
		return
	}
	isDead := func(n uint32) bool { return int(n>>6) < len(dead) && dead[n>>6]&(1<<(n&63)) != 0 }
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	const batch = 4096
	for from := 0; from < end; from += batch {
		select {
		case <-stop:
			return
		default:
		}
		ix.mu.RLock()
		if ix.closed || ix.g != g { // closed, or reset (DropFile)
			ix.mu.RUnlock()
			return
		}
		for node := uint32(from); int(node) < min(from+batch, end); node++ {
			if ix.isDel(node) {
				continue
			}
			for l := 0; l <= ix.level(node); l++ {
				ix.relink(node, l, isDead, sc)
			}
		}
		ix.mu.RUnlock()
	}
	ix.mu.Lock()
	if ix.g != g {
		ix.mu.Unlock()
		return
	}
	for i := range dead {
		ix.purged[i] |= dead[i]
	}
	ix.tombs = max(ix.tombs-ndead, 0)
	ix.mu.Unlock()
}

// relink replaces node's dead neighbours on layer l by their neighbours.
func (ix *Index) relink(node uint32, l int, isDead func(uint32) bool, sc *scratch) {
	lst, mu := ix.lockedLinks(node, l)
	defer mu.Unlock()
	if len(lst) == 0 {
		return
	}
	cnt := min(int(atomic.LoadUint32(&lst[0])), len(lst)-1)
	affected := false
	for j := 1; j <= cnt; j++ {
		if isDead(atomic.LoadUint32(&lst[j])) {
			affected = true
			break
		}
	}
	if !affected {
		return
	}
	vn := ix.vec(node)
	sc.vis.reset(ix.n)
	sc.vis.first(node)
	cs := sc.prune[:0]
	consider := func(nb uint32) {
		if int(nb) < ix.n && !ix.isDel(nb) && sc.vis.first(nb) {
			cs = append(cs, cand{vek32.Dot(vn, ix.vec(nb)), nb})
		}
	}
	for j := 1; j <= cnt; j++ {
		nb := atomic.LoadUint32(&lst[j])
		if isDead(nb) {
			sc.nbuf = ix.neighbours(nb, l, sc.nbuf)
			for _, nb2 := range sc.nbuf {
				consider(nb2)
			}
			continue
		}
		consider(nb)
	}
	slices.SortFunc(cs, bySimDesc)
	sc.prune = cs
	sc.nbuf2 = ix.selectNeighbours(cs, len(lst)-1, sc.nbuf2)
	writeList(lst, sc.nbuf2)
}
