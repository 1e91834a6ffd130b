package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/researchtui/researchtui/textkit"
)

// DefaultOpenAlexURL is the OpenAlex API base.
const DefaultOpenAlexURL = "https://api.openalex.org"

type openAlexSource struct {
	endpoint
	mailto string
}

// NewOpenAlex returns the OpenAlex source. baseURL "" means
// DefaultOpenAlexURL; mailto (optional) joins OpenAlex's polite pool.
func NewOpenAlex(c *Client, baseURL, mailto string) Source {
	return &openAlexSource{endpoint: newEndpoint(c, baseURL, DefaultOpenAlexURL), mailto: mailto}
}

func (o *openAlexSource) Name() string { return "openalex" }

func (o *openAlexSource) Search(ctx context.Context, query string, limit int) ([]Record, error) {
	query, limit, ok := searchTerms(query, limit, 10)
	if !ok {
		return nil, nil
	}
	v := url.Values{}
	v.Set("search", query)
	v.Set("per-page", strconv.Itoa(min(limit, 200)))
	if o.mailto != "" {
		v.Set("mailto", o.mailto)
	}
	resp, err := o.c.Get(ctx, withQuery(o.base+"/works", v), http2Accept("application/json"))
	if err != nil {
		var he *HTTPError
		if errors.As(err, &he) && he.Status == 404 {
			return nil, fmt.Errorf("openalex: not found (HTTP 404 from %s)", redactURL(he.URL))
		}
		return nil, fmt.Errorf("openalex: %w", err)
	}
	return parseUpTo(ParseOpenAlex, resp.Body, limit)
}

type oaLocation struct {
	LandingPageURL string `json:"landing_page_url"`
	PDFURL         string `json:"pdf_url"`
	Source         *struct {
		DisplayName          string    `json:"display_name"`
		HostOrganizationName laxString `json:"host_organization_name"`
	} `json:"source"`
}

type oaWork struct {
	ID              string `json:"id"`
	DOI             string `json:"doi"`
	DisplayName     string `json:"display_name"`
	Title           string `json:"title"`
	PublicationYear int    `json:"publication_year"`
	CitedByCount    int    `json:"cited_by_count"`
	IDs             struct {
		PMID string `json:"pmid"`
	} `json:"ids"`
	Authorships []struct {
		Author struct {
			DisplayName string `json:"display_name"`
		} `json:"author"`
	} `json:"authorships"`
	PrimaryLocation       *oaLocation      `json:"primary_location"`
	BestOALocation        *oaLocation      `json:"best_oa_location"`
	Locations             []oaLocation     `json:"locations"`
	AbstractInvertedIndex map[string][]int `json:"abstract_inverted_index"`
	ReferencedWorks       []string         `json:"referenced_works"`
	IsRetracted           bool             `json:"is_retracted"`
	Type                  laxString        `json:"type"`
	Biblio                struct {
		Volume    laxString `json:"volume"`
		Issue     laxString `json:"issue"`
		FirstPage laxString `json:"first_page"`
		LastPage  laxString `json:"last_page"`
	} `json:"biblio"`
}

// ParseOpenAlex parses an OpenAlex /works list ({"meta","results"}) or a
// single Work object. A non-JSON body (OpenAlex answers unknown paths with an
// HTML page) is an error.
func ParseOpenAlex(body []byte) ([]Record, error) {
	var env struct {
		Results *[]oaWork `json:"results"`
		Error   string    `json:"error"`
		Message string    `json:"message"`
	}
	if err := decodeObject("openalex", body, &env); err != nil {
		return nil, err
	}
	var works []oaWork
	switch {
	case env.Results != nil:
		works = *env.Results
	case env.Error != "":
		return nil, fmt.Errorf("openalex: %s %s", textkit.CleanLine(env.Error), textkit.CleanLine(env.Message))
	default:
		var w oaWork
		if err := json.Unmarshal(body, &w); err != nil {
			return nil, fmt.Errorf("openalex: malformed work: %w", err)
		}
		if w.ID == "" && w.DOI == "" {
			return nil, fmt.Errorf("openalex: neither a result list nor a work: %q", errorSnippet(body))
		}
		works = []oaWork{w}
	}
	recs := make([]Record, 0, len(works))
	for _, w := range works {
		r := openAlexRecord(w)
		if r.Title == "" && r.DOI == "" {
			continue
		}
		recs = append(recs, r)
	}
	return recs, nil
}

func openAlexRecord(w oaWork) Record {
	r := Record{
		Source:     "openalex",
		FoundBy:    []string{"openalex"},
		DOI:        NormalizeDOI(w.DOI),
		OpenAlexID: textkit.CleanLine(strings.TrimPrefix(w.ID, "https://openalex.org/")),
		References: openAlexIDs(w.ReferencedWorks, maxReferences),
		Title:      MetaText(w.DisplayName),
		Year:       w.PublicationYear,
		Abstract:   CleanAbstract(textkit.CleanLine(RebuildAbstract(w.AbstractInvertedIndex))),
		Citations:  w.CitedByCount,
		Retracted:  w.IsRetracted,
	}
	if r.Title == "" {
		r.Title = textkit.CleanLine(w.Title)
	}
	if p := w.IDs.PMID; p != "" {
		p = strings.TrimRight(p, "/")
		r.PMID = textkit.CleanLine(p[strings.LastIndex(p, "/")+1:])
	}
	for _, a := range w.Authorships {
		if n := MetaText(a.Author.DisplayName); n != "" {
			r.Authors = append(r.Authors, n)
		}
	}
	publisher := ""
	if pl := w.PrimaryLocation; pl != nil {
		if pl.Source != nil {
			r.Venue = MetaText(pl.Source.DisplayName)
			publisher = string(pl.Source.HostOrganizationName)
		}
		r.URL = textkit.CleanLine(pl.LandingPageURL)
	}
	b, typ := w.Biblio, openAlexTypes[string(w.Type)]
	if typ == "" {
		publisher = "" // an article's host is its journal's owner (or arXiv's), not its publisher in APA's sense
	}
	r.Publication = publicationOf(typ, string(b.Volume), string(b.Issue), pageRange(string(b.FirstPage), string(b.LastPage)), publisher)
	if r.URL == "" && r.DOI != "" {
		r.URL = "https://doi.org/" + r.DOI
	}
	if w.BestOALocation != nil {
		r.PDFURL = textkit.CleanLine(w.BestOALocation.PDFURL)
	}
	if r.PDFURL == "" && w.PrimaryLocation != nil {
		r.PDFURL = textkit.CleanLine(w.PrimaryLocation.PDFURL)
	}
	locs := w.Locations
	if w.PrimaryLocation != nil {
		locs = append([]oaLocation{*w.PrimaryLocation}, locs...)
	}
	for _, l := range locs {
		if id := ArxivIDFromURL(l.LandingPageURL); id != "" && strings.Contains(l.LandingPageURL, "arxiv.org/") {
			r.ArxivID = id
			break
		}
	}
	if r.ArxivID == "" && strings.HasPrefix(r.DOI, "10.48550/arxiv.") {
		r.ArxivID = ArxivIDFromURL(r.DOI)
	}
	r.Venue = ArxivVenue(r.Venue) // OpenAlex names the repository by its host: "arXiv (Cornell University)"
	if r.PDFURL == "" {
		for _, l := range locs {
			if l.PDFURL != "" {
				r.PDFURL = textkit.CleanLine(l.PDFURL)
				break
			}
		}
	}
	if r.PDFURL == "" && r.ArxivID != "" {
		r.PDFURL = "https://arxiv.org/pdf/" + r.ArxivID
	}
	AssignKey(&r)
	return r
}

// RebuildAbstract turns OpenAlex's abstract_inverted_index (word → positions)
// back into text.
func RebuildAbstract(idx map[string][]int) string {
	if len(idx) == 0 {
		return ""
	}
	type wp struct {
		pos  int
		word string
	}
	var all []wp
	for w, ps := range idx {
		for _, p := range ps {
			if p >= 0 && p < 1<<20 {
				all = append(all, wp{p, w})
			}
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].pos != all[j].pos {
			return all[i].pos < all[j].pos
		}
		return all[i].word < all[j].word
	})
	words := make([]string, 0, len(all))
	for i, x := range all {
		if i > 0 && x.pos == all[i-1].pos {
			continue
		}
		words = append(words, x.word)
	}
	return strings.Join(words, " ")
}

func http2Accept(ct string) map[string][]string {
	return map[string][]string{"Accept": {ct}}
}
