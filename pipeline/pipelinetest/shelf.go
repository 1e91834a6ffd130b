package pipelinetest

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/researchtui/researchtui/search"
)

// Shelf is a scholarly source whose works a test controls: a search returns
// every work whose title or abstract holds a word of the query, and works
// added later are found by later searches, as new papers are. It is also a
// citation graph: CitedBy returns the works added as citing a title.
type Shelf struct {
	SourceName string // "openalex" when empty
	// Latency is each request's round trip, as a real API's (~300 ms).
	Latency time.Duration

	mu       sync.Mutex
	works    []search.Record
	citing   map[string][]search.Record // normalised title → works citing it
	searches int
	fail     error
}

// Fail makes every later search and citation request fail with err (nil:
// answer again).
func (s *Shelf) Fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = err
}

var _ search.CitationGraph = (*Shelf)(nil)

// Add puts works on the shelf.
func (s *Shelf) Add(recs ...search.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range recs {
		if r.Source == "" {
			r.Source = s.Name()
		}
		s.works = append(s.works, r)
	}
}

// AddCiting adds works that cite the work titled cited (found by
// following its citations, not by search).
func (s *Shelf) AddCiting(cited string, recs ...search.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.citing == nil {
		s.citing = map[string][]search.Record{}
	}
	for _, r := range recs {
		if r.Source == "" {
			r.Source = s.Name()
		}
		key := search.NormalizeTitle(cited)
		s.citing[key] = append(s.citing[key], r)
	}
}

// Searches counts the searches asked of the shelf.
func (s *Shelf) Searches() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.searches
}

// Name implements search.Source.
func (s *Shelf) Name() string {
	if s.SourceName == "" {
		return "openalex"
	}
	return s.SourceName
}

// wait is the request's round trip.
func (s *Shelf) wait(ctx context.Context) error {
	if s.Latency == 0 {
		return nil
	}
	select {
	case <-time.After(s.Latency):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Search implements search.Source.
func (s *Shelf) Search(ctx context.Context, query string, limit int) ([]search.Record, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.searches++
	if s.fail != nil {
		return nil, s.fail
	}
	var out []search.Record
	for _, r := range s.works {
		text := strings.ToLower(r.Title + " " + r.Abstract)
		for _, w := range strings.Fields(strings.ToLower(query)) {
			if len(w) > 3 && strings.Contains(text, w) {
				out = append(out, r)
				break
			}
		}
		if len(out) == limit {
			break
		}
	}
	return out, nil
}

// References implements search.CitationGraph: the shelf knows none.
func (s *Shelf) References(context.Context, search.Record, int) ([]search.Record, error) {
	return nil, nil
}

// CitedBy implements search.CitationGraph.
func (s *Shelf) CitedBy(ctx context.Context, rec search.Record, limit int) ([]search.Record, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return nil, s.fail
	}
	got := s.citing[search.NormalizeTitle(rec.Title)]
	return append([]search.Record(nil), got[:min(limit, len(got))]...), nil
}
