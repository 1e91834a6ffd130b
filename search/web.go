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
	"sync"

	"github.com/researchtui/researchtui/textkit"
)

// Default web search endpoints.
const (
	DefaultBraveURL  = "https://api.search.brave.com/res/v1/web/search"
	DefaultTavilyURL = "https://api.tavily.com/search"
)

// WebOptions choose the web search engines. Each one is used when set:
// SearxNG by its URL (keyless, self-hosted), Brave and Tavily by their keys.
type WebOptions struct {
	SearxNGURL string // RESEARCHTUI_SEARXNG_URL, the instance root
	BraveKey   string // BRAVE_API_KEY
	BraveURL   string // "" means DefaultBraveURL
	TavilyKey  string // TAVILY_API_KEY
	TavilyURL  string // "" means DefaultTavilyURL
}

// Engines names the configured engines, in query order.
func (o WebOptions) Engines() []string {
	var out []string
	if o.SearxNGURL != "" {
		out = append(out, "searxng")
	}
	if o.BraveKey != "" {
		out = append(out, "brave")
	}
	if o.TavilyKey != "" {
		out = append(out, "tavily")
	}
	return out
}

type webSource struct {
	c   *Client
	opt WebOptions
}

// NewWeb returns the "web" source, which asks every configured engine in
// parallel and merges their results (by URL). It returns nil when no engine
// is configured. One engine failing is not an error while another answers.
func NewWeb(c *Client, opt WebOptions) Source {
	if len(opt.Engines()) == 0 {
		return nil
	}
	if opt.BraveURL == "" {
		opt.BraveURL = DefaultBraveURL
	}
	if opt.TavilyURL == "" {
		opt.TavilyURL = DefaultTavilyURL
	}
	return &webSource{c: c, opt: opt}
}

func (w *webSource) Name() string { return "web" }

func (w *webSource) Search(ctx context.Context, query string, limit int) ([]Record, error) {
	query, limit, ok := searchTerms(query, limit, 10)
	if !ok {
		return nil, nil
	}
	engines := w.opt.Engines()
	lists := make([][]Record, len(engines))
	errs := make([]error, len(engines))
	var wg sync.WaitGroup
	for i, e := range engines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch e {
			case "searxng":
				lists[i], errs[i] = w.searxng(ctx, query, limit)
			case "brave":
				lists[i], errs[i] = w.brave(ctx, query, limit)
			case "tavily":
				lists[i], errs[i] = w.tavily(ctx, query, limit)
			}
		}()
	}
	wg.Wait()
	var all []Record
	for i := 0; ; i++ { // interleave engines
		added := false
		for _, l := range lists {
			if i < len(l) {
				all = append(all, l[i])
				added = true
			}
		}
		if !added {
			break
		}
	}
	if len(all) == 0 {
		if err := errors.Join(errs...); err != nil {
			return nil, fmt.Errorf("web: %w", err)
		}
		return nil, nil
	}
	out := mergeByURL(all)
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (w *webSource) searxng(ctx context.Context, query string, limit int) ([]Record, error) {
	v := url.Values{}
	v.Set("q", query)
	v.Set("format", "json")
	resp, err := w.c.Get(ctx, withQuery(strings.TrimRight(w.opt.SearxNGURL, "/")+"/search", v), http.Header{"Accept": {"application/json"}})
	if err != nil {
		var he *HTTPError
		if errors.As(err, &he) && he.Status == 403 {
			return nil, fmt.Errorf("searxng: %w (enable the json format under search.formats in the instance's settings.yml)", err)
		}
		return nil, fmt.Errorf("searxng: %w", err)
	}
	return parseUpTo(ParseSearxNG, resp.Body, limit)
}

func (w *webSource) brave(ctx context.Context, query string, limit int) ([]Record, error) {
	v := url.Values{}
	v.Set("q", query)
	v.Set("count", strconv.Itoa(min(limit, 20)))
	hdr := http.Header{"Accept": {"application/json"}, "X-Subscription-Token": {w.opt.BraveKey}}
	resp, err := w.c.Get(ctx, withQuery(w.opt.BraveURL, v), hdr)
	if err != nil {
		return nil, fmt.Errorf("brave: %w", err)
	}
	recs, err := ParseBrave(resp.Body)
	if len(recs) > limit {
		recs = recs[:limit]
	}
	return recs, err
}

func (w *webSource) tavily(ctx context.Context, query string, limit int) ([]Record, error) {
	body, _ := json.Marshal(map[string]any{"query": query, "max_results": min(limit, 20), "search_depth": "basic"})
	hdr := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}, "Authorization": {"Bearer " + w.opt.TavilyKey}}
	resp, err := w.c.Post(ctx, w.opt.TavilyURL, hdr, body)
	if err != nil {
		return nil, fmt.Errorf("tavily: %w", err)
	}
	recs, err := ParseTavily(resp.Body)
	if len(recs) > limit {
		recs = recs[:limit]
	}
	return recs, err
}

func webRecord(engine, title, link, snippet, date string) (Record, bool) {
	link = textkit.CleanLine(link)
	u, err := url.Parse(link)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Record{}, false
	}
	r := Record{
		Source:   "web",
		FoundBy:  []string{"web"},
		Title:    InlineText(title),
		URL:      link,
		Abstract: InlineText(snippet),
		Venue:    strings.TrimPrefix(strings.ToLower(u.Hostname()), "www."),
		Year:     leadingYear(date),
	}
	if r.Title == "" {
		r.Title = r.Venue
	}
	if strings.HasSuffix(strings.ToLower(u.Path), ".pdf") {
		r.PDFURL = link
	}
	if id := ArxivIDFromURL(link); id != "" && strings.Contains(u.Host, "arxiv.org") {
		r.ArxivID = id
	}
	if d := doiFromURL(u); d != "" {
		r.DOI = d
	}
	AssignKey(&r)
	if r.DOI == "" && r.ArxivID == "" {
		r.Key = "url:" + NormalizeURL(link)
	}
	return r, true
}

func doiFromURL(u *url.URL) string {
	h := strings.ToLower(u.Hostname())
	if h == "doi.org" || h == "dx.doi.org" {
		return NormalizeDOI(strings.TrimPrefix(u.Path, "/"))
	}
	return ""
}

// NormalizeURL folds a URL for matching: lower-case scheme-less host
// without www., no fragment, no trailing slash.
func NormalizeURL(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return strings.ToLower(raw)
	}
	host := strings.TrimPrefix(strings.ToLower(u.Host), "www.")
	p := strings.TrimRight(u.EscapedPath(), "/")
	s := host + p
	if u.RawQuery != "" {
		s += "?" + u.RawQuery
	}
	return s
}

// mergeByURL folds web results that point at the same page.
func mergeByURL(recs []Record) []Record {
	seen := map[string]int{}
	var out []Record
	for _, r := range recs {
		k := NormalizeURL(r.URL)
		if i, ok := seen[k]; ok {
			if len(r.Abstract) > len(out[i].Abstract) {
				out[i].Abstract = r.Abstract
			}
			if out[i].Year == 0 {
				out[i].Year = r.Year
			}
			continue
		}
		seen[k] = len(out)
		out = append(out, r)
	}
	return out
}

// ParseSearxNG parses SearxNG's /search?format=json answer.
func ParseSearxNG(body []byte) ([]Record, error) {
	var env struct {
		Results []struct {
			URL           string `json:"url"`
			Title         string `json:"title"`
			Content       string `json:"content"`
			PublishedDate any    `json:"publishedDate"`
		} `json:"results"`
	}
	if err := decodeObject("searxng", body, &env, " (is format=json enabled?)"); err != nil {
		return nil, err
	}
	var out []Record
	for _, x := range env.Results {
		date, _ := x.PublishedDate.(string)
		if r, ok := webRecord("searxng", x.Title, x.URL, x.Content, date); ok {
			out = append(out, r)
		}
	}
	return out, nil
}

// ParseBrave parses Brave Search's /res/v1/web/search answer (the web
// results; news and videos are left out). Extra snippets lengthen the
// abstract.
func ParseBrave(body []byte) ([]Record, error) {
	var env struct {
		Type string `json:"type"`
		Web  struct {
			Results []struct {
				Title         string   `json:"title"`
				URL           string   `json:"url"`
				Description   string   `json:"description"`
				PageAge       string   `json:"page_age"`
				ExtraSnippets []string `json:"extra_snippets"`
			} `json:"results"`
		} `json:"web"`
		Error *struct {
			Detail string `json:"detail"`
			Code   string `json:"code"`
		} `json:"error"`
	}
	if err := decodeObject("brave", body, &env); err != nil {
		return nil, err
	}
	if env.Error != nil {
		return nil, fmt.Errorf("brave: %s %s", textkit.CleanLine(env.Error.Code), textkit.CleanLine(env.Error.Detail))
	}
	var out []Record
	for _, x := range env.Web.Results {
		snippet := x.Description
		for _, e := range x.ExtraSnippets {
			snippet += " " + e
		}
		if r, ok := webRecord("brave", x.Title, x.URL, snippet, x.PageAge); ok {
			out = append(out, r)
		}
	}
	return out, nil
}

// ParseTavily parses Tavily's /search answer.
func ParseTavily(body []byte) ([]Record, error) {
	var env struct {
		Results []struct {
			Title         string `json:"title"`
			URL           string `json:"url"`
			Content       string `json:"content"`
			PublishedDate string `json:"published_date"`
		} `json:"results"`
		Detail any `json:"detail"`
	}
	if err := decodeObject("tavily", body, &env); err != nil {
		return nil, err
	}
	if env.Results == nil {
		if err := detailError("tavily", env.Detail); err != nil {
			return nil, err
		}
	}
	var out []Record
	for _, x := range env.Results {
		if r, ok := webRecord("tavily", x.Title, x.URL, x.Content, x.PublishedDate); ok {
			out = append(out, r)
		}
	}
	return out, nil
}
