package search

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/researchtui/researchtui/textkit"
)

// CitationGraph is implemented by sources that can follow a work's
// references (what it cites) and its citing works (what cites it):
// citation chasing, as researchers extend a literature search.
type CitationGraph interface {
	// References returns up to limit works that rec cites.
	References(ctx context.Context, rec Record, limit int) ([]Record, error)
	// CitedBy returns up to limit works that cite rec.
	CitedBy(ctx context.Context, rec Record, limit int) ([]Record, error)
}

// ErrNoGraphID: the source has no identifier for the work, so its
// citations can't be asked for.
var ErrNoGraphID = errors.New("no identifier this source can follow citations from")

// maxReferences bounds the referenced works kept per record.
const maxReferences = 200

var openAlexIDRe = regexp.MustCompile(`^W\d{1,12}$`)

// openAlexIDs keeps well-formed work IDs ("W123") from OpenAlex URLs.
func openAlexIDs(urls []string, n int) []string {
	var out []string
	for _, u := range urls {
		id := strings.TrimPrefix(textkit.CleanLine(u), "https://openalex.org/")
		if openAlexIDRe.MatchString(id) && len(out) < n {
			out = append(out, id)
		}
	}
	return out
}

// References follows OpenAlex's referenced_works: the works are fetched in
// one request (filter openalex_id:W1|W2|...).
func (o *openAlexSource) References(ctx context.Context, rec Record, limit int) ([]Record, error) {
	ids := rec.References
	if len(ids) == 0 {
		if rec.OpenAlexID == "" {
			return nil, ErrNoGraphID
		}
		return nil, nil // OpenAlex lists no references for it
	}
	if len(ids) > min(limit, 50) {
		ids = ids[:min(limit, 50)]
	}
	return o.list(ctx, "openalex_id:"+strings.Join(ids, "|"), len(ids))
}

// CitedBy asks OpenAlex for the works that cite rec (filter cites:W123).
func (o *openAlexSource) CitedBy(ctx context.Context, rec Record, limit int) ([]Record, error) {
	if !openAlexIDRe.MatchString(rec.OpenAlexID) {
		return nil, ErrNoGraphID
	}
	return o.list(ctx, "cites:"+rec.OpenAlexID, limit)
}

func (o *openAlexSource) list(ctx context.Context, filter string, limit int) ([]Record, error) {
	v := url.Values{}
	v.Set("filter", filter)
	v.Set("per-page", strconv.Itoa(max(1, min(limit, 200))))
	if o.mailto != "" {
		v.Set("mailto", o.mailto)
	}
	resp, err := o.c.Get(ctx, withQuery(o.base+"/works", v), http2Accept("application/json"))
	if err != nil {
		return nil, fmt.Errorf("openalex: %w", err)
	}
	return parseUpTo(ParseOpenAlex, resp.Body, limit)
}

// s2GraphFields are asked of the works on either side of a citation.
const s2GraphFields = "title,abstract,year,venue,url,citationCount,externalIds,journal,openAccessPdf,authors"

// s2PaperID is how Semantic Scholar names rec in a /paper/{id} path.
func s2PaperID(rec Record) string {
	switch {
	case rec.S2ID != "":
		return rec.S2ID
	case rec.DOI != "":
		return "DOI:" + rec.DOI
	case rec.ArxivID != "":
		return "ARXIV:" + rec.ArxivID
	case rec.PMID != "":
		return "PMID:" + rec.PMID
	}
	return ""
}

// References asks Semantic Scholar for the works rec cites.
func (s *semanticScholarSource) References(ctx context.Context, rec Record, limit int) ([]Record, error) {
	return s.graph(ctx, rec, "references", limit)
}

// CitedBy asks Semantic Scholar for the works that cite rec. The endpoint
// answers 504 when a page is too large to assemble in time: that is an
// error for this one work, nothing more.
func (s *semanticScholarSource) CitedBy(ctx context.Context, rec Record, limit int) ([]Record, error) {
	return s.graph(ctx, rec, "citations", limit)
}

func (s *semanticScholarSource) graph(ctx context.Context, rec Record, edge string, limit int) ([]Record, error) {
	id := s2PaperID(rec)
	if id == "" {
		return nil, ErrNoGraphID
	}
	v := url.Values{}
	v.Set("fields", s2GraphFields)
	v.Set("limit", strconv.Itoa(max(1, min(limit, 100))))
	hdr := http.Header{"Accept": {"application/json"}}
	if s.key != "" {
		hdr.Set("x-api-key", s.key)
	}
	resp, err := s.c.Get(ctx, withQuery(s.base+"/paper/"+url.PathEscape(id)+"/"+edge, v), hdr)
	if err != nil {
		var he *HTTPError
		if errors.As(err, &he) && resp != nil {
			if msg := s2ErrorMessage(resp.Body); msg != "" {
				return nil, fmt.Errorf("semanticscholar %s: HTTP %d: %s", edge, he.Status, msg)
			}
		}
		return nil, fmt.Errorf("semanticscholar %s: %w", edge, err)
	}
	return parseUpTo(ParseS2Edges, resp.Body, limit)
}

// ParseS2Edges parses a /references or /citations page: {"data": [{"citedPaper":
// {...}} or {"citingPaper": {...}}]}. Unresolved works (paperId null and no
// title) are skipped.
func ParseS2Edges(body []byte) ([]Record, error) {
	var env struct {
		Data []struct {
			Cited  *s2Paper `json:"citedPaper"`
			Citing *s2Paper `json:"citingPaper"`
		} `json:"data"`
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	if err := decodeObject("semanticscholar", body, &env); err != nil {
		return nil, err
	}
	if env.Data == nil {
		if msg := textkit.CleanLine(textkit.FirstNonEmpty(env.Error, env.Message)); msg != "" {
			return nil, fmt.Errorf("semanticscholar: %s", msg)
		}
		return nil, nil
	}
	var papers []s2Paper
	for _, d := range env.Data {
		switch {
		case d.Cited != nil:
			papers = append(papers, *d.Cited)
		case d.Citing != nil:
			papers = append(papers, *d.Citing)
		}
	}
	return s2Records(papers), nil
}
