package eval

import (
	"context"
	"encoding/xml"
	"fmt"
	"strings"

	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/search/replay"
)

// TestingWorldName is the name of the arXiv "testing" world.
const TestingWorldName = "arxiv-testing: arXiv's answer for \"testing\", 10 papers, recorded"

// testingFeed is how many entries the recorded arXiv answer holds.
const testingFeed = 10

// testingFeedFile is the recorded arXiv answer for "testing", in worlds/.
const testingFeedFile = "arxiv/query-all-testing-max10.atom.xml"

// openTesting opens the arXiv "testing" world: the recorded arXiv answer
// for "testing" (worlds/arxiv/query-all-testing-max10.atom.xml: 10
// software-testing papers, from deep learning models and REST APIs to
// GUIs, web and mobile apps, IP cores and driving assistance), which the
// world's server answers every arXiv search with. It reads the feed from
// that server, as the pipeline does, and decodes it itself rather than
// with the pipeline's parser, so the ground truth is the recording's text
// whatever that parser makes of it.
func openTesting(ctx context.Context) (*World, error) {
	srv := replay.Serve(replay.Routes{Arxiv: replay.Recorded(recordings, testingFeedFile, replay.Atom)}.Mux())
	w := &World{ID: TestingWorld, Name: TestingWorldName, srv: srv, sources: arxivSources}
	b, err := recorded(ctx, srv.ArxivURL()+"?search_query=all:testing&start=0&max_results=10")
	if err != nil {
		srv.Close()
		return nil, err
	}
	var feed struct {
		Entries []struct {
			ID      string `xml:"http://www.w3.org/2005/Atom id"`
			Title   string `xml:"http://www.w3.org/2005/Atom title"`
			Summary string `xml:"http://www.w3.org/2005/Atom summary"`
			DOI     string `xml:"http://arxiv.org/schemas/atom doi"`
		} `xml:"http://www.w3.org/2005/Atom entry"`
	}
	if err := xml.Unmarshal(b, &feed); err != nil {
		srv.Close()
		return nil, fmt.Errorf("eval world: the recorded arXiv feed: %w", err)
	}
	for _, e := range feed.Entries {
		id := search.ArxivIDFromURL(e.ID)
		if id == "" {
			continue
		}
		w.Papers = append(w.Papers, Paper{ID: id, DOI: strings.ToLower(strings.TrimSpace(e.DOI)),
			Title: oneLine(e.Title), Abstract: oneLine(e.Summary)})
	}
	if len(w.Papers) != testingFeed {
		srv.Close()
		return nil, fmt.Errorf("eval world: %d papers in the recorded arXiv feed, want %d", len(w.Papers), testingFeed)
	}
	return w, nil
}

// oneLine folds the feed's line breaks and indentation into single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// arxivSources are the "testing" world's: arXiv asked for the whole
// recorded feed whatever the depth, so every question is ranked over the
// same 10 papers. arXiv has no citation graph to follow.
func arxivSources(w *World, c *search.Client) map[string]search.Source {
	return map[string]search.Source{"arxiv": wholeFeed{search.NewArxiv(c, w.ArxivURL())}}
}

// wholeFeed asks the recorded arXiv answer for all of its entries.
type wholeFeed struct{ search.Source }

// Search asks for the whole feed.
func (f wholeFeed) Search(ctx context.Context, q string, _ int) ([]search.Record, error) {
	return f.Source.Search(ctx, q, testingFeed)
}
