package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/search/sourcefake"
)

// Paper is one recorded work of the world, as the recording holds it.
type Paper struct {
	ID       string // Semantic Scholar paperId
	DOI      string // lower case, "" when none
	Title    string
	Abstract string
}

// World is a frozen world: the recorded Semantic Scholar pool for
// "turing" (search/sourcefake; its attribution is in
// search/sourcefake/testdata/ATTRIBUTION.md) served over loopback HTTP,
// and the recorded text the scorer reads. Close it when done.
type World struct {
	Name   string
	Papers []Paper

	srv *sourcefake.Server
}

// WorldName is the name of the one world so far.
const WorldName = "semanticscholar-turing-100 (recorded; search/sourcefake)"

// OpenWorld starts the world's server and reads the recorded pool from it,
// so the scorer reads exactly the bytes the pipeline is served.
func OpenWorld(ctx context.Context) (*World, error) {
	srv := sourcefake.New()
	w := &World{Name: WorldName, srv: srv}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.SemanticScholarURL()+"/graph/v1/paper/search?query=turing&limit=100", nil)
	if err != nil {
		srv.Close()
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		srv.Close()
		return nil, fmt.Errorf("eval world: %w", err)
	}
	defer resp.Body.Close()
	var page struct {
		Data []struct {
			PaperID     string         `json:"paperId"`
			Title       string         `json:"title"`
			Abstract    *string        `json:"abstract"`
			ExternalIDs map[string]any `json:"externalIds"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		srv.Close()
		return nil, fmt.Errorf("eval world: the recorded pool: %w", err)
	}
	for _, d := range page.Data {
		p := Paper{ID: d.PaperID, Title: d.Title}
		if d.Abstract != nil {
			p.Abstract = *d.Abstract
		}
		if doi, ok := d.ExternalIDs["DOI"].(string); ok {
			p.DOI = strings.ToLower(doi)
		}
		w.Papers = append(w.Papers, p)
	}
	if len(w.Papers) == 0 {
		srv.Close()
		return nil, fmt.Errorf("eval world: the recorded pool is empty")
	}
	return w, nil
}

// Close stops the world's server.
func (w *World) Close() { w.srv.Close() }

// SemanticScholarURL is the world's Semantic Scholar base URL.
func (w *World) SemanticScholarURL() string { return w.srv.SemanticScholarURL() }

// Host is the world server's host:port, for search.Client.SetHostLimit.
func (w *World) Host() string { return strings.TrimPrefix(w.srv.URL, "http://") }

// Sources are the sources a run in this world searches: Semantic Scholar
// asked for the whole recorded pool whatever the depth, so every question
// is ranked over the same 100 papers.
func (w *World) Sources(c *search.Client) map[string]search.Source {
	return map[string]search.Source{"semanticscholar": WholePool{search.NewSemanticScholar(c, w.SemanticScholarURL(), "")}}
}

// WholePool asks the recorded Semantic Scholar answer for all of its 100
// papers whatever the depth's results per call; references and citing
// works are followed as usual (their recordings are economics papers).
type WholePool struct{ search.Source }

// Search asks for the whole pool.
func (p WholePool) Search(ctx context.Context, q string, _ int) ([]search.Record, error) {
	return p.Source.Search(ctx, q, 100)
}

// References are the source's.
func (p WholePool) References(ctx context.Context, r search.Record, n int) ([]search.Record, error) {
	return p.Source.(search.CitationGraph).References(ctx, r, n)
}

// CitedBy are the source's.
func (p WholePool) CitedBy(ctx context.Context, r search.Record, n int) ([]search.Record, error) {
	return p.Source.(search.CitationGraph).CitedBy(ctx, r, n)
}

// Find returns the recorded work a cited source is, by paperId in its URL
// or key, then DOI, then title; nil when it is not in the pool (a work
// reached through the recorded references or citations).
func (w *World) Find(key, url, doi, title string) *Paper {
	for i := range w.Papers {
		p := &w.Papers[i]
		if strings.Contains(url, p.ID) || strings.Contains(key, p.ID) {
			return p
		}
	}
	if doi = strings.ToLower(strings.TrimSpace(doi)); doi != "" {
		for i := range w.Papers {
			if w.Papers[i].DOI == doi {
				return &w.Papers[i]
			}
		}
	}
	t := normTitle(title)
	for i := range w.Papers {
		if t != "" && normTitle(w.Papers[i].Title) == t {
			return &w.Papers[i]
		}
	}
	return nil
}

// Paper is the recorded work with this paperId, or nil.
func (w *World) Paper(id string) *Paper {
	for i := range w.Papers {
		if w.Papers[i].ID == id {
			return &w.Papers[i]
		}
	}
	return nil
}

func normTitle(s string) string { return strings.Join(words(s), " ") }
