package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/textkit"
)

// embedBatch is how many chunks go to the embedding model per call.
const embedBatch = 32

func (o *orchestrator) saveSource(r search.Record) error {
	raw, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return o.engine.Store.PutSource(r.Key, raw)
}

func (o *orchestrator) loadSource(key string) (search.Record, bool) {
	if o.st.Found != nil {
		if r, ok := o.st.Found.record(key); ok {
			return r, true
		}
	}
	raw, ok, err := o.engine.Store.Source(key)
	if err != nil || !ok {
		return search.Record{}, false
	}
	var r search.Record
	if json.Unmarshal(raw, &r) != nil {
		return search.Record{}, false
	}
	return r, true
}

// Embedding roles: some embedding models are trained with a task prefix
// on each text and retrieve markedly worse without it.
const (
	roleDocument = iota
	roleQuery
)

// embedPrefixes are the task prefixes of the models that want them, by
// model name prefix: {document, query}.
var embedPrefixes = map[string][2]string{
	"nomic-embed-text":       {"search_document: ", "search_query: "},
	"mxbai-embed-large":      {"", "Represent this sentence for searching relevant passages: "},
	"snowflake-arctic-embed": {"", "Represent this sentence for searching relevant passages: "},
}

// withTaskPrefix returns the texts as the embedding model expects them.
func withTaskPrefix(model string, role int, texts []string) []string {
	name := strings.TrimPrefix(model, "hf.co/")
	for m, p := range embedPrefixes {
		if strings.HasPrefix(name, m) && p[role] != "" {
			out := make([]string, len(texts))
			for i, t := range texts {
				out[i] = p[role] + t
			}
			return out
		}
	}
	return texts
}

// embed embeds texts with the run's embedding model, recording usage.
func (o *orchestrator) embed(ctx context.Context, a *agentCall, role int, texts []string) ([][]float32, error) {
	start := time.Now()
	vecs, u, err := o.engine.LLM.Embed(ctx, o.opt.EmbedModel, withTaskPrefix(o.opt.EmbedModel, role, texts))
	a.record(u)
	a.called(start, llm.ChatRequest{Model: o.opt.EmbedModel}, &Call{Operation: "embeddings", Attempts: 1}, u, err)
	if err == nil && len(vecs) != len(texts) {
		err = fmt.Errorf("the embedding model returned %d vectors for %d texts", len(vecs), len(texts))
	}
	return vecs, err
}

// indexChunks embeds the chunks not yet cached and adds all of them to the
// index. It returns how many were newly embedded.
func (o *orchestrator) indexChunks(ctx context.Context, a *agentCall, ix store.RunIndex, chunks []store.Chunk) (int, error) {
	model := o.opt.EmbedModel
	hashes := make([]string, len(chunks))
	for i, c := range chunks {
		hashes[i] = c.Hash
	}
	missing, err := o.engine.Store.MissingEmbeddings(model, hashes)
	if err != nil {
		return 0, err
	}
	need := map[string]bool{}
	for _, h := range missing {
		need[h] = true
	}
	var texts []string
	var todo []store.Chunk
	for _, c := range chunks {
		if need[c.Hash] {
			need[c.Hash] = false
			texts = append(texts, c.Text)
			todo = append(todo, c)
		}
	}
	if len(texts) > 0 {
		vecs, err := o.embed(ctx, a, roleDocument, texts)
		if err != nil {
			return 0, err
		}
		items := map[string][]float32{}
		for i, c := range todo {
			items[c.Hash] = vecs[i]
		}
		if err := o.engine.Store.PutEmbeddings(model, items); err != nil {
			return 0, err
		}
	}
	for _, c := range chunks {
		vec, ok, err := o.engine.Store.Embedding(model, c.Hash)
		if err != nil {
			return 0, err
		}
		if !ok {
			continue
		}
		if err := ix.Add(c.ID, vec); err != nil {
			return len(texts), fmt.Errorf("index %s: %w (was the embedding model changed? vectors of different models are never mixed)", c.ID, err)
		}
	}
	return len(texts), nil
}

// localKnowledge looks in what past sessions and the local corpus already
// read: for each sub-question, the stored sources whose chunks match it
// closely. They join the sub-question's candidates and are ranked like any
// other. An empty knowledge base costs nothing.
func (o *orchestrator) localKnowledge(ctx context.Context, queryVecs map[string][][]float32) map[string][]search.Record {
	out := map[string][]search.Record{}
	ix, err := o.index(ctx)
	if err != nil || ix.Len() == 0 || len(queryVecs) == 0 {
		return out
	}
	a := o.startAgent(StageResearch, "librarian", "looking in the local knowledge base first")
	total := 0
	for _, sq := range o.st.Plan.SubQuestions {
		qv := queryVecs[sq.ID]
		if qv == nil {
			continue
		}
		hits, err := ix.Search(qv[0], 40)
		if err != nil {
			continue
		}
		seen := map[string]bool{}
		for _, h := range hits {
			if h.Score < localEnough {
				break
			}
			key := sourceKeyOf(h.ID)
			if seen[key] {
				continue
			}
			seen[key] = true
			if r, ok := o.loadSource(key); ok {
				out[sq.ID] = append(out[sq.ID], r)
			}
		}
		total += len(out[sq.ID])
	}
	a.finish(fmt.Sprintf("%d known sources match", total))
	return out
}

// sourceKeyOf is the source key part of a chunk ID (key#seq).
func sourceKeyOf(chunkID string) string {
	if i := strings.LastIndexByte(chunkID, '#'); i >= 0 {
		return chunkID[:i]
	}
	return chunkID
}

// embedCached embeds texts through the store's embedding cache (model,
// content hash): a text embedded before, in this run, an interrupted
// attempt of it or another session, costs no model call. Document texts
// share their hash with identical chunks (an abstract-only source's chunk
// is its candidate text), queries are kept apart.
func (o *orchestrator) embedCached(ctx context.Context, a *agentCall, role int, texts []string) ([][]float32, error) {
	model := o.opt.EmbedModel
	hashes := make([]string, len(texts))
	for i, t := range texts {
		if role == roleQuery {
			t = "query\x00" + t
		}
		hashes[i] = store.HashText(t)
	}
	missing, err := o.engine.Store.MissingEmbeddings(model, hashes)
	if err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		need := map[string]bool{}
		for _, h := range missing {
			need[h] = true
		}
		var todo []string
		var todoHashes []string
		for i, h := range hashes {
			if need[h] {
				need[h] = false
				todo = append(todo, texts[i])
				todoHashes = append(todoHashes, h)
			}
		}
		items := map[string][]float32{}
		for start := 0; start < len(todo); start += embedBatch {
			end := min(start+embedBatch, len(todo))
			vecs, err := o.embed(ctx, a, role, todo[start:end])
			if err != nil {
				return nil, err
			}
			for i, v := range vecs {
				items[todoHashes[start+i]] = v
			}
		}
		if err := o.engine.Store.PutEmbeddings(model, items); err != nil {
			return nil, err
		}
	}
	out := make([][]float32, len(texts))
	for i, h := range hashes {
		v, ok, err := o.engine.Store.Embedding(model, h)
		if err != nil {
			return nil, err
		}
		if ok {
			out[i] = v
		}
	}
	return out, nil
}

// indexLoop embeds sources as they are read. Sources waiting together are
// embedded together (fewer, fuller calls); each is passed on to analysis
// as soon as its own chunks are in the index.
func (f *gather) indexLoop(ctx context.Context) error {
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
				a.finish(fmt.Sprintf("%s, %d newly embedded", textkit.Plural(total, "chunk", "chunks"), embedded))
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
