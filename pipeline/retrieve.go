package pipeline

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"encoding/json"

	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/textkit"
)

// ContextChunk is one piece of evidence retrieved for a sub-question.
type ContextChunk struct {
	ID        string  `json:"id"`
	SourceKey string  `json:"source_key"`
	Text      string  `json:"text"`
	Page      int     `json:"page,omitempty"`
	Score     float32 `json:"score"`
}

// Retrieval settings (ARCHITECTURE.md §3, retrieve).
const (
	retrieveTopK       = 8
	retrieveMinScore   = 0.2
	retrieveMaxTokens  = 3000 // per sub-question
	retrieveCandidates = retrieveTopK * 4
	// referencesWeight scales the score of a reference-list chunk: its
	// cited titles match a query's words without giving evidence, so it
	// wins only where nothing in a paper's body comes close.
	referencesWeight = 0.6
)

// weighted is a chunk's retrieval score: the similarity, down-weighted for
// a reference list.
func weighted(c store.Chunk, similarity float32) float32 {
	if c.References {
		return similarity * referencesWeight
	}
	return similarity
}

// neighbourOf says whether chunk n may follow hit c as its neighbour: the
// reference list is never pulled in after a paper's last body chunk.
func neighbourOf(hitIsRefs bool, n store.Chunk) bool {
	return !n.References || hitIsRefs
}

func (o *orchestrator) stageRetrieve(ctx context.Context) error {
	var contexts map[string][]ContextChunk
	if ok, err := o.loadCheckpoint("retrieve", &contexts); err != nil {
		return err
	} else if ok {
		o.st.Contexts = contexts
		o.stageSkipped(StageRetrieve, fmt.Sprintf("%d sub-questions", len(contexts)))
		return nil
	}
	start := o.stageStart(StageRetrieve, "finding the evidence for each sub-question")
	a := o.startAgent(StageRetrieve, "retriever", "vector search over the indexed chunks")
	contexts = map[string][]ContextChunk{}
	vecs := o.subqVecs
	if len(vecs) != len(o.st.Plan.SubQuestions) {
		var qs []string
		for _, sq := range o.st.Plan.SubQuestions {
			qs = append(qs, sq.Question)
		}
		var err error
		vecs, err = o.embed(ctx, a, roleQuery, qs)
		if fatal(ctx, err) {
			return err
		}
		if err != nil {
			a.warn("embedding the sub-questions failed (%s); using the sources' first chunks instead", shortErr(err))
			vecs = nil
		}
	}
	ix, err := o.index(ctx)
	if err != nil {
		return err
	}
	// Only analysed sources can be cited, so only they are searched.
	inRun := map[string]bool{}
	for _, an := range o.st.Analyses {
		inRun[an.SourceKey] = true
	}
	total := 0
	structured := o.structuredKeys() // retrieve.go: structured data bypasses vector filtering
	for i, sq := range o.st.Plan.SubQuestions {
		var got []ContextChunk
		if vecs != nil {
			got = o.retrieveFor(ix, vecs[i], inRun)
		}
		if len(got) == 0 {
			got = o.rawChunks(o.st.Found.BySubQ[sq.ID])
		}
		got = o.withStructured(got, o.st.Found.BySubQ[sq.ID], structured)
		contexts[sq.ID] = got
		total += len(got)
	}
	a.finish(fmt.Sprintf("%s for %s", textkit.Plural(total, "chunk", "chunks"), textkit.Plural(len(contexts), "sub-question", "sub-questions")))
	o.st.Contexts = contexts
	if err := o.checkpoint("retrieve", contexts); err != nil {
		return err
	}
	return o.stageDone(StageRetrieve, start, textkit.Plural(total, "chunk", "chunks"))
}

// retrieveFor is one sub-question's retrieval: top-k above a threshold,
// neighbour expansion, keyword gating on the canonical term, dedup, and a
// cap on context size.
func (o *orchestrator) retrieveFor(ix store.RunIndex, vec []float32, inRun map[string]bool) []ContextChunk {
	hits, err := ix.Search(vec, retrieveCandidates)
	if err != nil {
		return nil
	}
	var top []ContextChunk
	refs := map[string]bool{}
	for _, h := range hits {
		if h.Score < retrieveMinScore {
			break
		}
		key := sourceKeyOf(h.ID)
		if !inRun[key] {
			continue
		}
		c, ok, err := o.engine.Store.Chunk(h.ID)
		if err != nil || !ok {
			continue
		}
		if s := weighted(c, h.Score); s >= retrieveMinScore {
			top = append(top, ContextChunk{ID: c.ID, SourceKey: key, Text: c.Text, Page: c.Page, Score: s})
			refs[c.ID] = c.References
		}
	}
	sort.SliceStable(top, func(i, j int) bool { return top[i].Score > top[j].Score })
	top = top[:min(len(top), retrieveTopK)]
	top = gateByTerm(top, o.st.Plan.CanonicalTerm)
	// Neighbour expansion: the chunk after a hit often finishes its thought.
	seen := map[string]bool{}
	var out []ContextChunk
	for _, c := range top {
		seen[c.ID] = true
	}
	for _, c := range top {
		out = append(out, c)
		if seq, ok := chunkSeq(c.ID); ok {
			nid := store.ChunkID(c.SourceKey, seq+1)
			if !seen[nid] {
				if n, ok, err := o.engine.Store.Chunk(nid); err == nil && ok && neighbourOf(refs[c.ID], n) {
					seen[nid] = true
					out = append(out, ContextChunk{ID: n.ID, SourceKey: c.SourceKey, Text: n.Text, Page: n.Page, Score: c.Score * 0.9})
				}
			}
		}
	}
	return capTokens(out, retrieveMaxTokens)
}

// gateByTerm keeps chunks that mention the canonical term, unless that
// would leave nothing.
func gateByTerm(cs []ContextChunk, term string) []ContextChunk {
	tw := textkit.ContentWords(term)
	if len(tw) == 0 {
		return cs
	}
	var kept []ContextChunk
	for _, c := range cs {
		lw := strings.ToLower(c.Text)
		for _, w := range tw {
			if strings.Contains(lw, w) {
				kept = append(kept, c)
				break
			}
		}
	}
	if len(kept) == 0 {
		return cs
	}
	return kept
}

// capTokens keeps the best chunks that fit in the token budget.
func capTokens(cs []ContextChunk, budget int) []ContextChunk {
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].Score > cs[j].Score })
	var out []ContextChunk
	used := 0
	for _, c := range cs {
		t := search.EstimateTokens(c.Text)
		if used+t > budget && len(out) > 0 {
			continue
		}
		used += t
		out = append(out, c)
	}
	return out
}

// rawChunks is the fallback when filtering left nothing: the first chunks
// of the sub-question's sources.
func (o *orchestrator) rawChunks(keys []string) []ContextChunk {
	var out []ContextChunk
	for _, k := range keys {
		cs, err := o.engine.Store.Chunks(k)
		if err != nil || len(cs) == 0 {
			continue
		}
		c := cs[0]
		out = append(out, ContextChunk{ID: c.ID, SourceKey: k, Text: c.Text, Page: c.Page})
	}
	return capTokens(out, retrieveMaxTokens)
}

func chunkSeq(id string) (int, bool) {
	i := strings.LastIndexByte(id, '#')
	if i < 0 {
		return 0, false
	}
	var n int
	_, err := fmt.Sscanf(id[i+1:], "%d", &n)
	return n, err == nil
}

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

// Structured data (ARCHITECTURE.md §3, retrieve): records that carry properties in
// search.Record.Data (the Materials Project's computed band gaps, formation
// energies, ...) are facts, not prose. Vector similarity says nothing useful
// about a table of numbers, so their chunks bypass vector filtering: every
// sub-question that found such a record gets its chunks as evidence
// (withStructured, hooked into stageRetrieve), and the writer and reviewer
// see the properties themselves as a data block (structuredBrief, hooked
// into sourcesBrief).

// structuredScore ranks structured evidence first: it was not ranked by
// similarity, and it is exact.
const structuredScore = 1

// structuredKeys are the keys of this run's records with structured data.
func (o *orchestrator) structuredKeys() map[string]bool {
	out := map[string]bool{}
	if o.st.Found == nil {
		return out
	}
	for _, r := range o.st.Found.Records {
		if r.HasData() {
			out[r.Key] = true
		}
	}
	return out
}

// withStructured adds the chunks of the structured-data records a
// sub-question found to its retrieved context, whatever the vector search
// made of them.
func (o *orchestrator) withStructured(got []ContextChunk, keys []string, data map[string]bool) []ContextChunk {
	have := map[string]bool{}
	for _, c := range got {
		have[c.ID] = true
	}
	var extra []ContextChunk
	for _, k := range keys {
		if !data[k] {
			continue
		}
		chunks, err := o.engine.Store.Chunks(k)
		if err != nil {
			continue
		}
		for _, c := range chunks {
			if !have[c.ID] {
				have[c.ID] = true
				extra = append(extra, ContextChunk{ID: c.ID, SourceKey: k, Text: c.Text, Page: c.Page, Score: structuredScore})
			}
		}
	}
	if len(extra) == 0 {
		return got
	}
	return append(extra, got...)
}

// structuredBrief is the "Structured data" block of the writer's brief:
// each record's properties as key = value lines, numbered like the other
// sources when it was analysed (so it can be cited), else marked [data].
func (o *orchestrator) structuredBrief() string {
	data := o.structuredKeys()
	if len(data) == 0 {
		return ""
	}
	num := map[string]int{}
	for i, an := range o.st.Analyses {
		num[an.SourceKey] = i + 1
	}
	var b strings.Builder
	b.WriteString("\nStructured data (computed properties; quote the numbers exactly and cite them like the sources above):\n")
	for _, r := range o.st.Found.Records {
		if !data[r.Key] {
			continue
		}
		label := "[data]"
		if n := num[r.Key]; n > 0 {
			label = fmt.Sprintf("[%d]", n)
		}
		fmt.Fprintf(&b, "%s %s — %s\n", label, r.Title, r.Venue)
		for _, line := range dataLines(r.Data) {
			fmt.Fprintf(&b, "  - %s\n", line)
		}
	}
	return b.String()
}

// dataLines renders a record's properties as sorted "key = value" lines.
func dataLines(d map[string]any) []string {
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		var v string
		switch x := d[k].(type) {
		case string:
			v = x
		case float64, bool, int:
			v = fmt.Sprint(x)
		default:
			raw, err := json.Marshal(x)
			if err != nil {
				continue
			}
			v = string(raw)
		}
		out = append(out, k+" = "+textkit.Clip(textkit.CleanLine(v), 200))
	}
	return out
}
