package search

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// AbstractFinder is implemented by sources that can look up, many works to
// a request, the abstracts of works known to the run by title and
// identifiers only (a reference or citing work another source listed
// without its abstract): a title alone is never read, and a review chasing
// citations would otherwise list such works and never judge them.
type AbstractFinder interface {
	// FindAbstracts returns one record per record asked, in order: the
	// work with its abstract and metadata where this source knows it with
	// an abstract (matched to the asked record by an identifier, never by
	// position alone), the zero Record where it does not.
	FindAbstracts(ctx context.Context, recs []Record) ([]Record, error)
}

// s2BatchMax is how many IDs Semantic Scholar's /paper/batch takes at once.
const s2BatchMax = 500

// FindAbstracts asks Semantic Scholar's POST /paper/batch for recs (one
// request per 500 works that have an identifier it can name).
func (s *semanticScholarSource) FindAbstracts(ctx context.Context, recs []Record) ([]Record, error) {
	out := make([]Record, len(recs))
	var at []int
	var ids []string
	for i, r := range recs {
		if id := s2PaperID(r); id != "" {
			at, ids = append(at, i), append(ids, id)
		}
	}
	for start := 0; start < len(ids); start += s2BatchMax {
		end := min(start+s2BatchMax, len(ids))
		found, err := s.batch(ctx, ids[start:end])
		if err != nil {
			return out, err
		}
		for k, f := range found {
			i := at[start+k]
			if f != nil && f.Abstract != "" && sameWork(recs[i], *f) {
				out[i] = *f
			}
		}
	}
	return out, nil
}

func (s *semanticScholarSource) batch(ctx context.Context, ids []string) ([]*Record, error) {
	body, _ := json.Marshal(map[string][]string{"ids": ids})
	v := url.Values{}
	v.Set("fields", s2GraphFields)
	hdr := http.Header{"Accept": {"application/json"}, "Content-Type": {"application/json"}}
	if s.key != "" {
		hdr.Set("x-api-key", s.key)
	}
	resp, err := s.c.Post(ctx, withQuery(s.base+"/paper/batch", v), hdr, body)
	if err != nil {
		return nil, fmt.Errorf("semanticscholar batch: %w", err)
	}
	found, err := ParseS2Batch(resp.Body)
	if err != nil {
		return nil, err
	}
	if len(found) != len(ids) {
		return nil, fmt.Errorf("semanticscholar batch: %d answers for %d works asked", len(found), len(ids))
	}
	return found, nil
}

// ParseS2Batch parses a /paper/batch answer: a JSON array with one entry
// per ID asked, in order, null where the ID is unknown.
func ParseS2Batch(body []byte) ([]*Record, error) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '[' {
		if msg := s2ErrorMessage(body); msg != "" {
			return nil, fmt.Errorf("semanticscholar batch: %s", msg)
		}
		return nil, fmt.Errorf("semanticscholar batch: expected a JSON array, got %q", errorSnippet(body))
	}
	var papers []*s2Paper
	if err := json.Unmarshal(trimmed, &papers); err != nil {
		return nil, fmt.Errorf("semanticscholar batch: malformed JSON: %w", err)
	}
	out := make([]*Record, len(papers))
	for i, p := range papers {
		if p == nil {
			continue
		}
		if recs := s2Records([]s2Paper{*p}); len(recs) == 1 {
			out[i] = &recs[0]
		}
	}
	return out, nil
}

// sameWork says got is the work asked for: one identifier in common.
func sameWork(asked, got Record) bool {
	switch {
	case asked.S2ID != "" && asked.S2ID == got.S2ID:
	case asked.DOI != "" && NormalizeDOI(asked.DOI) == NormalizeDOI(got.DOI):
	case asked.ArxivID != "" && asked.ArxivID == got.ArxivID:
	case asked.PMID != "" && asked.PMID == got.PMID:
	default:
		return false
	}
	return true
}

// oaDOIBatch is how many DOIs one OpenAlex filter takes (its OR syntax,
// doi:A|B|…, allows up to 100 values).
const oaDOIBatch = 50

// FindAbstracts asks OpenAlex for recs by DOI (GET /works?filter=doi:A|B,
// 50 a request); works without a DOI are not asked.
func (o *openAlexSource) FindAbstracts(ctx context.Context, recs []Record) ([]Record, error) {
	out := make([]Record, len(recs))
	var at []int
	var dois []string
	for i, r := range recs {
		if d := NormalizeDOI(r.DOI); d != "" && !strings.ContainsAny(d, "|,") {
			at, dois = append(at, i), append(dois, d)
		}
	}
	for start := 0; start < len(dois); start += oaDOIBatch {
		end := min(start+oaDOIBatch, len(dois))
		v := url.Values{}
		v.Set("filter", "doi:"+strings.Join(dois[start:end], "|"))
		v.Set("per-page", strconv.Itoa(end-start))
		if o.mailto != "" {
			v.Set("mailto", o.mailto)
		}
		resp, err := o.c.Get(ctx, withQuery(o.base+"/works", v), http2Accept("application/json"))
		if err != nil {
			return out, fmt.Errorf("openalex: %w", err)
		}
		found, err := ParseOpenAlex(resp.Body)
		if err != nil {
			return out, err
		}
		for _, f := range found {
			if f.Abstract == "" {
				continue
			}
			for _, i := range at[start:end] {
				if out[i].Abstract == "" && sameWork(recs[i], f) {
					out[i] = f
				}
			}
		}
	}
	return out, nil
}
