package vector

// cand is a node of an Index and its similarity to the query (a dot product
// of unit vectors: 1 is the same direction).
type cand struct {
	sim  float32
	node uint32
}

// maxHeap pops the most similar candidate first: the frontier of a graph
// walk. It is a binary heap on a slice; the maximum is always h[0]. It and
// minHeap mirror each other rather than share a comparator: they are the
// innermost loop of every search.
type maxHeap []cand

func (h maxHeap) len() int  { return len(h) }
func (h maxHeap) top() cand { return h[0] }

func (h *maxHeap) push(c cand) {
	s := append(*h, c)
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p].sim >= s[i].sim {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
	*h = s
}

func (h *maxHeap) pop() cand {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		best, l, r := i, 2*i+1, 2*i+2
		if l < len(s) && s[l].sim > s[best].sim {
			best = l
		}
		if r < len(s) && s[r].sim > s[best].sim {
			best = r
		}
		if best == i {
			break
		}
		s[i], s[best] = s[best], s[i]
		i = best
	}
	*h = s
	return top
}

// minHeap keeps the best results found so far with the worst of them at the
// root, h[0], so a bounded result set evicts exactly its minimum. (The heap
// of github.com/coder/hnsw took the last array slot for its max/min, which
// is why its recall was near zero; heap_test.go pins this property.)
type minHeap []cand

func (h minHeap) len() int  { return len(h) }
func (h minHeap) top() cand { return h[0] }

func (h *minHeap) push(c cand) {
	s := append(*h, c)
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p].sim <= s[i].sim {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
	*h = s
}

func (h *minHeap) pop() cand {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	s.fix0()
	*h = s
	return top
}

// offer adds c to a result set bounded at k, evicting the worst when full.
func (h *minHeap) offer(c cand, k int) {
	if len(*h) < k {
		h.push(c)
		return
	}
	if c.sim > (*h)[0].sim {
		(*h)[0] = c
		h.fix0()
	}
}

// fix0 restores the heap after the root was replaced.
func (h minHeap) fix0() {
	for i := 0; ; {
		worst, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && h[l].sim < h[worst].sim {
			worst = l
		}
		if r < len(h) && h[r].sim < h[worst].sim {
			worst = r
		}
		if worst == i {
			return
		}
		h[i], h[worst] = h[worst], h[i]
		i = worst
	}
}
