package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"sync/atomic"

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

// indexPoll is how often a run waiting for its vector index looks at how
// far the load has got; indexProgressEvery how often it says so.
var (
	indexPoll          = 250 * time.Millisecond
	indexProgressEvery = 2 * time.Second
)

// indexAgent names the vector index in a run's events.
const indexAgent = "vector index"

// index returns the run's vector index (Engine.index). When the index
// cannot serve before its vectors are read back from the store (its file
// is missing, or damaged: found at open, or by the check that follows
// opening a file), the run waits for that, and the wait is shown: warning
// events say what is loaded and why while it lasts (every
// indexProgressEvery), and once more when it is done, so a headless run
// (run --json) and the TUI's run screen show it like other warnings. They
// are progress, not findings: the report's warnings leave them out.
func (o *orchestrator) index(ctx context.Context) (store.RunIndex, error) {
	model := o.opt.EmbedModel
	_, wasOpen := o.engine.Store.IndexStatus(model)
	var ix store.RunIndex
	var err error
	start := time.Now()
	o.watchIndex(ctx, model, func() { ix, err = o.engine.index(model) })
	if err != nil {
		return nil, err
	}
	loaded := !wasOpen
	if ix.Reloading() {
		// The check found the file damaged: searches wait for the reload.
		start, loaded = time.Now(), true
		o.watchIndex(ctx, model, func() { _ = ix.WaitLoaded(ctx) }) // its outcome is watched, not returned
	}
	if st := ix.Status(); loaded && st.Note != "" && st.Vectors > 0 && ctx.Err() == nil && o.indexDone.CompareAndSwap(false, true) {
		o.emit(Event{Type: Warning, Stage: StageIndex, Agent: indexAgent, Elapsed: time.Since(start),
			Message: fmt.Sprintf("vector index of %s: %s; %d vectors loaded in %s", model, st.Note, st.Vectors, time.Since(start).Round(100*time.Millisecond))})
	}
	return ix, nil
}

// watchIndex runs wait, and while it lasts says how far the index of model
// has got loading its vectors from the store. One watcher per run at a
// time: callers that wait together are shown once.
func (o *orchestrator) watchIndex(ctx context.Context, model string, wait func()) {
	if !o.indexWatch.CompareAndSwap(false, true) {
		wait()
		return
	}
	defer o.indexWatch.Store(false)
	done := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		tick := time.NewTicker(indexPoll)
		defer tick.Stop()
		var last time.Time
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			st, ok := o.engine.Store.IndexStatus(model)
			if !ok || st.Phase != "loading vectors from the store" || time.Since(last) < indexProgressEvery {
				continue
			}
			last = time.Now()
			msg := fmt.Sprintf("vector index of %s: %s: %s", model, indexWhy(st), st.Phase)
			if st.Total > 0 {
				msg += fmt.Sprintf(" %d%% (%d of %d chunks); searches wait for it", 100*st.Done/st.Total, st.Done, st.Total)
			}
			o.emit(Event{Type: Warning, Stage: StageIndex, Agent: indexAgent, Message: msg, Count: st.Done})
		}
	}()
	wait()
	close(done)
	<-watched
}

// indexWhy is why an index is loaded from the store.
func indexWhy(st store.IndexStatus) string {
	if st.Note != "" {
		return st.Note
	}
	return "rebuilding from the store"
}

// indexState is the orchestrator's bookkeeping for index.
type indexState struct {
	indexWatch atomic.Bool // a watchIndex is running
	indexDone  atomic.Bool // the load was reported
}
