package eval

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/search/replay"
)

// The worlds' recorded answers are the eval's own data (worlds/, with
// worlds/ATTRIBUTION.md), served by search/replay.
//
//go:embed worlds
var worldFiles embed.FS

// recordings are the recorded answers, by their path under worlds/.
var recordings, _ = fs.Sub(worldFiles, "worlds")

// pools are the recorded Semantic Scholar search answers the pool worlds
// search, by pool.
var pools = map[string]string{
	"turing":        "semanticscholar/paper-search-turing-allfields-limit100.json",
	"turing-2":      "semanticscholar/paper-search-turing-allfields-offset100-limit100.json",
	"edit-distance": "semanticscholar/paper-search-edit-distance-allfields-limit100.json",
	"kubernetes":    "semanticscholar/paper-search-kubernetes-allfields-limit100.json",
}

// The recorded references and citing works a pool world answers for every
// paper (50 references of a microfinance paper; 100 citing works in
// development economics).
const (
	referencesPage = "semanticscholar/paper-references-ssrn.2250500-fields-title-offset0.json"
	citationsPage  = "semanticscholar/paper-citations-corpusid-14514057-fields-title-offset0.json"
)

// Paper is one recorded work of the world, as the recording holds it.
type Paper struct {
	ID       string // the world's identifier: Semantic Scholar paperId, or arXiv ID without its version
	DOI      string // lower case, "" when none
	Title    string
	Abstract string
}

// World is a frozen world: recorded answers of one or more sources (the
// eval's own, worlds/; see worlds/ATTRIBUTION.md) served over loopback
// HTTP by search/replay, and the recorded text the scorer reads. Close it
// when done.
type World struct {
	ID     string // what a Question's World names: TuringWorld, TestingWorld
	Name   string
	Papers []Paper

	srv     *replay.Server
	sources func(w *World, c *search.Client) map[string]search.Source
}

// The worlds a Question can be asked in.
const (
	// TuringWorld is the recorded Semantic Scholar pool for "turing".
	TuringWorld = "semanticscholar-turing"
	// TestingWorld is the recorded arXiv answer for "testing"
	// (world_arxiv.go).
	TestingWorld = "arxiv-testing"
)

// WorldName is the name of the Semantic Scholar "turing" world, the first.
const WorldName = "semanticscholar-turing: Semantic Scholar's answer for \"turing\", 100 papers, recorded"

// worldSpec is what a world is before it is opened: the sources a run in
// it searches (the run's Sources option, Setup.Options) and how it opens.
type worldSpec struct {
	sources []string
	open    func(ctx context.Context) (*World, error)
}

var worldSpecs = map[string]worldSpec{
	TuringWorld:       {[]string{"semanticscholar"}, OpenWorld},
	TestingWorld:      {[]string{"arxiv"}, openTesting},
	EditDistanceWorld: {[]string{"semanticscholar"}, poolWorld(EditDistanceWorld, "edit-distance", "Semantic Scholar's answer for \"sublinear near optimal edit distance\", 85 papers, recorded")},
	KubernetesWorld:   {[]string{"semanticscholar"}, poolWorld(KubernetesWorld, "kubernetes", "Semantic Scholar's answer for \"kubernetes\", 100 papers, recorded")},
	TuringPage2World:  {[]string{"semanticscholar"}, poolWorld(TuringPage2World, "turing-2", "Semantic Scholar's second page for \"turing\", 100 papers, recorded")},
}

// Open opens the world with this ID (TuringWorld, TestingWorld).
func Open(ctx context.Context, id string) (*World, error) {
	spec, ok := worldSpecs[id]
	if !ok {
		return nil, fmt.Errorf("eval: no world %q (worlds: %s)", id, strings.Join(names(worldSpecs), ", "))
	}
	return spec.open(ctx)
}

// Worlds give each question of an eval its world: one *World, in which
// every question must be asked, or a WorldSet.
type Worlds interface {
	For(q Question) (*World, error)
}

// For is w when q is asked in it, else an error.
func (w *World) For(q Question) (*World, error) {
	if id := q.WorldID(); id != w.ID {
		return nil, fmt.Errorf("eval: question %s is asked in world %s, not %s", q.ID, id, w.ID)
	}
	return w, nil
}

// WorldSet are open worlds by ID.
type WorldSet map[string]*World

// OpenWorlds opens each world the questions are asked in, once.
func OpenWorlds(ctx context.Context, qs []Question) (WorldSet, error) {
	ws := WorldSet{}
	for _, q := range qs {
		id := q.WorldID()
		if ws[id] != nil {
			continue
		}
		w, err := Open(ctx, id)
		if err != nil {
			ws.Close()
			return nil, err
		}
		ws[id] = w
	}
	return ws, nil
}

// For is the world q is asked in, or an error when it is not open.
func (ws WorldSet) For(q Question) (*World, error) {
	if w := ws[q.WorldID()]; w != nil {
		return w, nil
	}
	return nil, fmt.Errorf("eval: question %s is asked in world %s, which is not open", q.ID, q.WorldID())
}

// Close closes every world.
func (ws WorldSet) Close() {
	for _, w := range ws {
		w.Close()
	}
}

// OpenWorld opens the Semantic Scholar "turing" world: its search ranks
// the recorded pool by each query and honours the limit, as the real API
// does (search/replay ranked.go); the scorer reads exactly the bytes
// the pipeline is served.
func OpenWorld(ctx context.Context) (*World, error) {
	return poolWorld(TuringWorld, "turing", strings.TrimPrefix(WorldName, TuringWorld+": "))(ctx)
}

// poolWorld opens a world over one recorded Semantic Scholar pool (a key
// of pools): its search ranks the pool, and it answers the recorded
// references and citing works of every paper.
func poolWorld(id, pool, name string) func(context.Context) (*World, error) {
	return func(ctx context.Context) (*World, error) {
		recorded := replay.Body(recordings, pools[pool])
		ranked, err := replay.NewPool(recorded)
		if err != nil {
			return nil, fmt.Errorf("eval world: the recorded pool: %w", err)
		}
		srv := replay.Serve(replay.Routes{
			SemanticScholarSearch: ranked,
			SemanticScholarGraph:  replay.SemanticScholarGraph(recordings, referencesPage, citationsPage),
		}.Mux())
		w := &World{ID: id, Name: id + ": " + name, srv: srv, sources: semanticScholarSources}
		var page struct {
			Data []struct {
				PaperID     string         `json:"paperId"`
				Title       string         `json:"title"`
				Abstract    *string        `json:"abstract"`
				ExternalIDs map[string]any `json:"externalIds"`
			} `json:"data"`
		}
		if err := json.Unmarshal(recorded, &page); err != nil {
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
}

// recorded is the body the world's server answers a GET of url with.
func recorded(ctx context.Context, url string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("eval world: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("eval world: the recording answered %s", resp.Status)
	}
	return io.ReadAll(resp.Body)
}

// Close stops the world's server.
func (w *World) Close() { w.srv.Close() }

// SemanticScholarURL is the world's Semantic Scholar base URL.
func (w *World) SemanticScholarURL() string { return w.srv.SemanticScholarURL() }

// Host is the world server's host:port, for search.Client.SetHostLimit.
func (w *World) Host() string { return w.srv.Host() }

// ArxivURL is the world's arXiv base URL.
func (w *World) ArxivURL() string { return w.srv.ArxivURL() }

// Sources are the sources a run in this world searches, by name.
func (w *World) Sources(c *search.Client) map[string]search.Source { return w.sources(w, c) }

// semanticScholarSources are a pool world's: Semantic Scholar, ranked by
// the query within the recorded pool. References and citing works are
// followed as usual (their recordings are economics papers).
func semanticScholarSources(w *World, c *search.Client) map[string]search.Source {
	return map[string]search.Source{"semanticscholar": search.NewSemanticScholar(c, w.SemanticScholarURL(), "")}
}

// Find returns the recorded work a cited source is, by the work's ID
// (paperId, arXiv ID) in its URL or key, then DOI, then title; nil when it
// is not in the pool (a work reached through the recorded references or
// citations).
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

// Paper is the recorded work with this ID (paperId, arXiv ID), or nil.
func (w *World) Paper(id string) *Paper {
	for i := range w.Papers {
		if w.Papers[i].ID == id {
			return &w.Papers[i]
		}
	}
	return nil
}

func normTitle(s string) string { return strings.Join(words(s), " ") }
