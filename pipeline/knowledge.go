package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/textkit"
)

// Passage is one stored chunk that answers a knowledge-base search.
type Passage struct {
	Score     float32 `json:"score"`
	ChunkID   string  `json:"chunk_id"`
	SourceKey string  `json:"source_key"`
	Title     string  `json:"title"`
	Year      int     `json:"year,omitempty"`
	URL       string  `json:"url,omitempty"`
	DOI       string  `json:"doi,omitempty"`
	Source    string  `json:"source"`
	Page      int     `json:"page,omitempty"`
	Text      string  `json:"text"`
}

// SearchKnowledge searches everything ever read — every session's sources
// and the local corpus — for a query. It is semantic (the embedding model
// ranks chunks) when the backend answers, and falls back to keyword
// matching offline; semantic reports which one ran. At most one passage per
// source is returned, best first.
func (e *Engine) SearchKnowledge(ctx context.Context, query, embedModel string, k int) (passages []Passage, semantic bool, err error) {
	query = runopts.NormalizeQuestion(query)
	if query == "" {
		return nil, false, errors.New("the search is empty")
	}
	if k <= 0 {
		k = 10
	}
	if e.LLM != nil {
		if ps, err := e.semanticSearch(ctx, query, embedModel, k); err == nil {
			return ps, true, nil
		} else if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
	}
	ps, err := e.keywordSearch(query, k)
	return ps, false, err
}

// semanticSearch embeds the query and asks the vector index (this
// process's, or the data dir owner's through store.Conn): one passage per
// source, best first.
func (e *Engine) semanticSearch(ctx context.Context, query, model string, k int) ([]Passage, error) {
	vecs, _, err := e.LLM.Embed(ctx, model, withTaskPrefix(model, roleQuery, []string{query}))
	if err != nil {
		return nil, err
	}
	if len(vecs) != 1 {
		return nil, errors.New("the embedding model returned no vector")
	}
	ix, err := e.index(model)
	if err != nil {
		return nil, err
	}
	// Search first: it waits for the index file's check (and a reload from
	// the store if the check fails), while Len may see the index mid-reload.
	hits, err := ix.Search(vecs[0], k*4)
	if err != nil {
		return nil, err
	}
	if len(hits) == 0 && ix.Len() == 0 {
		return nil, errors.New("nothing embedded with " + model)
	}
	// One passage per source: its best chunk, a reference list counting
	// for less than the paper's own text (retrieve.go's weighting).
	best := map[string]int{}
	var out []Passage
	for _, h := range hits {
		c, ok, err := e.Store.Chunk(h.ID)
		if err != nil || !ok {
			continue
		}
		score := weighted(c, h.Score)
		if i, seen := best[c.SourceKey]; seen {
			if score > out[i].Score {
				out[i] = e.passage(c, score)
			}
			continue
		}
		best[c.SourceKey] = len(out)
		out = append(out, e.passage(c, score))
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out[:min(len(out), k)], nil
}

// EmbedDocuments embeds passages for the knowledge base the way a run's
// indexer does (with the model's document task prefix, so the vectors match
// the ones runs cache under the same content hash), for callers that fill
// the knowledge base outside a run: corpus add.
func (e *Engine) EmbedDocuments(ctx context.Context, model string, texts []string) ([][]float32, error) {
	return EmbedDocuments(ctx, e.LLM, model, texts)
}

// EmbedDocuments is Engine.EmbedDocuments for a caller with a backend and
// no engine.
func EmbedDocuments(ctx context.Context, b llm.Backend, model string, texts []string) ([][]float32, error) {
	if b == nil {
		return nil, errors.New("no model backend")
	}
	vecs, _, err := b.Embed(ctx, model, withTaskPrefix(model, roleDocument, texts))
	if err == nil && len(vecs) != len(texts) {
		err = fmt.Errorf("the embedding model returned %d vectors for %d texts", len(vecs), len(texts))
	}
	return vecs, err
}

// keywordSearch ranks chunks by the share of the query's words they contain.
func (e *Engine) keywordSearch(query string, k int) ([]Passage, error) {
	qw := textkit.ContentWords(query)
	if len(qw) == 0 {
		return nil, errors.New("the search has no words to match")
	}
	best := map[string]Passage{} // per source
	err := e.Store.AllChunks(func(c store.Chunk) error {
		score := float32(textkit.Overlap(query, textkit.WordSet(c.Text)))
		if score == 0 {
			return nil
		}
		if p, ok := best[c.SourceKey]; !ok || score > p.Score {
			best[c.SourceKey] = Passage{Score: score, ChunkID: c.ID, SourceKey: c.SourceKey, Page: c.Page, Text: c.Text}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []Passage
	for _, p := range best {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].ChunkID < out[j].ChunkID
	})
	if len(out) > k {
		out = out[:k]
	}
	for i := range out {
		c := store.Chunk{ID: out[i].ChunkID, SourceKey: out[i].SourceKey, Page: out[i].Page, Text: out[i].Text}
		out[i] = e.passage(c, out[i].Score)
	}
	return out, nil
}

// passage fills in the source's metadata for a chunk.
func (e *Engine) passage(c store.Chunk, score float32) Passage {
	p := Passage{Score: score, ChunkID: c.ID, SourceKey: c.SourceKey, Page: c.Page, Text: strings.TrimSpace(c.Text)}
	if raw, ok, err := e.Store.Source(c.SourceKey); err == nil && ok {
		var r search.Record
		if json.Unmarshal(raw, &r) == nil {
			p.Title, p.Year, p.Source, p.DOI = r.Title, r.Year, r.Source, r.DOI
			p.URL = textkit.FirstNonEmpty(r.URL, r.PDFURL)
		}
	}
	return p
}
