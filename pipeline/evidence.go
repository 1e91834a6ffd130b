package pipeline

import (
	"sort"

	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/store"
)

// Retrieval within one source, for its analyst (the retrieve stage's rules, ARCHITECTURE.md §3).
const (
	evidenceTopK = 6 // best chunks of a source, before neighbour expansion
)

// sourceEvidence is what a source's analyst reads: the source's own chunks
// that best match the sub-questions it serves (queryVecs) above the
// retrieval threshold, each followed by the chunk after it (which often
// finishes its thought), within the token cap. When nothing matches (or
// nothing was embedded) it falls back to the source's opening chunks, which
// hold the abstract.
func (o *orchestrator) sourceEvidence(rec search.Record, chunks []store.Chunk, queryVecs [][]float32) []ContextChunk {
	if len(chunks) == 0 {
		return nil
	}
	bySeq := map[int]store.Chunk{}
	for _, c := range chunks {
		bySeq[c.Seq] = c
	}
	var scored []ContextChunk
	if len(queryVecs) > 0 {
		for _, c := range chunks {
			vec, ok, err := o.engine.Store.Embedding(o.opt.EmbedModel, c.Hash)
			if err != nil || !ok {
				continue
			}
			best := -1.0
			for _, q := range queryVecs {
				best = max(best, cosine(vec, q))
			}
			if s := weighted(c, float32(best)); s >= retrieveMinScore {
				scored = append(scored, ContextChunk{ID: c.ID, SourceKey: rec.Key, Text: c.Text, Page: c.Page, Score: s})
			}
		}
	}
	sort.SliceStable(scored, func(i, j int) bool { return scored[i].Score > scored[j].Score })
	if len(scored) > evidenceTopK {
		scored = scored[:evidenceTopK]
	}
	if len(scored) == 0 {
		for _, c := range chunks[:min(2, len(chunks))] {
			scored = append(scored, ContextChunk{ID: c.ID, SourceKey: rec.Key, Text: c.Text, Page: c.Page})
		}
		return capTokens(scored, analyseMaxToks)
	}
	seen := map[string]bool{}
	for _, c := range scored {
		seen[c.ID] = true
	}
	out := make([]ContextChunk, 0, 2*len(scored))
	for _, c := range scored {
		out = append(out, c)
		if seq, ok := chunkSeq(c.ID); ok {
			if n, ok := bySeq[seq+1]; ok && !seen[n.ID] && neighbourOf(bySeq[seq].References, n) {
				seen[n.ID] = true
				out = append(out, ContextChunk{ID: n.ID, SourceKey: rec.Key, Text: n.Text, Page: n.Page, Score: c.Score * 0.9})
			}
		}
	}
	return capTokens(out, analyseMaxToks)
}
