package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/researchtui/researchtui/textkit"
)

// DefaultSemanticScholarURL is the Semantic Scholar Graph API base.
const DefaultSemanticScholarURL = "https://api.semanticscholar.org/graph/v1"

// semanticScholarFields are the paper fields a search asks for.
const semanticScholarFields = "title,abstract,authors,year,venue,externalIds,openAccessPdf,citationCount,url,journal"

type semanticScholarSource struct {
	endpoint
	key string
}

// NewSemanticScholar returns the Semantic Scholar source
// (/paper/search). baseURL "" means DefaultSemanticScholarURL (a base
// without /graph/v1 gets it appended); apiKey (SEMANTIC_SCHOLAR_API_KEY) is
// optional. Without a key, 429 is routine: the client waits out short
// Retry-After answers and backs off; after that the host cools down and
// searches fail fast, so a run continues with the other sources.
func NewSemanticScholar(c *Client, baseURL, apiKey string) Source {
	e := newEndpoint(c, baseURL, DefaultSemanticScholarURL)
	if !strings.HasSuffix(e.base, "/graph/v1") {
		e.base += "/graph/v1"
	}
	return &semanticScholarSource{endpoint: e, key: apiKey}
}

func (s *semanticScholarSource) Name() string { return "semanticscholar" }

func (s *semanticScholarSource) Search(ctx context.Context, query string, limit int) ([]Record, error) {
	query, limit, ok := searchTerms(query, limit, 10)
	if !ok {
		return nil, nil
	}
	v := url.Values{}
	v.Set("query", query)
	v.Set("limit", strconv.Itoa(min(limit, 100)))
	v.Set("fields", semanticScholarFields)
	hdr := http.Header{"Accept": {"application/json"}}
	if s.key != "" {
		hdr.Set("x-api-key", s.key)
	}
	resp, err := s.c.Get(ctx, withQuery(s.base+"/paper/search", v), hdr)
	if err != nil {
		var he *HTTPError
		if errors.As(err, &he) && resp != nil {
			if msg := s2ErrorMessage(resp.Body); msg != "" {
				return nil, fmt.Errorf("semanticscholar: HTTP %d: %s", he.Status, msg)
			}
		}
		var rl *RateLimitedError
		if errors.As(err, &rl) && s.key == "" {
			return nil, fmt.Errorf("semanticscholar: %w (set SEMANTIC_SCHOLAR_API_KEY for a higher limit)", err)
		}
		return nil, fmt.Errorf("semanticscholar: %w", err)
	}
	return parseUpTo(ParseSemanticScholar, resp.Body, limit)
}

// s2ErrorMessage reads {"error": "..."} or {"message": "..."} bodies.
func s2ErrorMessage(body []byte) string {
	var e struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	return textkit.CleanLine(textkit.FirstNonEmpty(e.Error, e.Message))
}

type s2Paper struct {
	PaperID       string         `json:"paperId"`
	Title         string         `json:"title"`
	Abstract      *string        `json:"abstract"`
	Year          *int           `json:"year"`
	Venue         string         `json:"venue"`
	URL           string         `json:"url"`
	CitationCount int            `json:"citationCount"`
	ExternalIDs   map[string]any `json:"externalIds"`
	Journal       *struct {
		Name   string    `json:"name"`
		Volume laxString `json:"volume"`
		Pages  laxString `json:"pages"`
	} `json:"journal"`
	OpenAccessPDF *struct {
		URL string `json:"url"`
	} `json:"openAccessPdf"`
	Authors []struct {
		Name string `json:"name"`
	} `json:"authors"`
}

// ParseSemanticScholar parses a /paper/search answer. An empty search
// ({"total":0} with no data key) gives no records; an error body is an error.
func ParseSemanticScholar(body []byte) ([]Record, error) {
	var env struct {
		Data    []s2Paper `json:"data"`
		Total   *int      `json:"total"`
		Error   string    `json:"error"`
		Message string    `json:"message"`
	}
	if err := decodeObject("semanticscholar", body, &env); err != nil {
		return nil, err
	}
	if env.Data == nil && env.Total == nil {
		if msg := textkit.CleanLine(textkit.FirstNonEmpty(env.Error, env.Message)); msg != "" {
			return nil, fmt.Errorf("semanticscholar: %s", msg)
		}
		return nil, fmt.Errorf("semanticscholar: neither results nor an error: %q", errorSnippet(body))
	}
	return s2Records(env.Data), nil
}

// s2Records normalises Semantic Scholar papers; works with neither a title
// nor an ID are skipped.
func s2Records(papers []s2Paper) []Record {
	recs := make([]Record, 0, len(papers))
	for _, p := range papers {
		r := Record{
			Source:    "semanticscholar",
			FoundBy:   []string{"semanticscholar"},
			S2ID:      textkit.CleanLine(p.PaperID),
			Title:     MetaText(p.Title),
			Venue:     ArxivVenue(MetaText(p.Venue)), // "arXiv.org"
			URL:       textkit.CleanLine(p.URL),
			Citations: p.CitationCount,
		}
		if p.Abstract != nil {
			r.Abstract = CleanAbstract(textkit.CleanLine(*p.Abstract))
		}
		if p.Year != nil {
			r.Year = *p.Year
		}
		if j := p.Journal; j != nil {
			if r.Venue == "" {
				r.Venue = MetaText(j.Name)
			}
			// arXiv's "journal" carries "abs/2503.23674" as its volume
			if name := MetaText(j.Name); name != "" && !strings.EqualFold(name, "arxiv") && !strings.HasPrefix(string(j.Volume), "abs/") {
				r.Publication = publicationOf("", string(j.Volume), "", string(j.Pages), "")
			}
		}
		for _, a := range p.Authors {
			if n := MetaText(a.Name); n != "" {
				r.Authors = append(r.Authors, n)
			}
		}
		ext := func(k string) string {
			switch v := p.ExternalIDs[k].(type) {
			case string:
				return textkit.CleanLine(v)
			case float64:
				return strconv.FormatFloat(v, 'f', -1, 64)
			}
			return ""
		}
		r.DOI = NormalizeDOI(ext("DOI"))
		r.ArxivID = ArxivIDFromURL(ext("ArXiv"))
		if id := ext("PubMed"); pmidRe.MatchString(id) {
			r.PMID = id
		}
		if pmc := ext("PubMedCentral"); pmc != "" {
			r.PMCID = "PMC" + strings.TrimPrefix(strings.ToUpper(pmc), "PMC")
		}
		if p.OpenAccessPDF != nil {
			r.PDFURL = textkit.CleanLine(p.OpenAccessPDF.URL)
		}
		if r.PDFURL == "" && r.ArxivID != "" {
			r.PDFURL = "https://arxiv.org/pdf/" + r.ArxivID
		}
		if r.PDFURL == "" && r.PMCID != "" {
			r.PDFURL = PMCPDFURL(r.PMCID)
		}
		if r.Title == "" {
			continue // an unresolved reference: nothing to read or cite
		}
		AssignKey(&r)
		recs = append(recs, r)
	}
	return recs
}
