package cli

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/researchtui/researchtui/pipeline/corpus"
	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/store"
)

// sourceInfo describes one configured source for `doctor`.
type sourceInfo struct {
	name    string
	url     string // the base URL in use (probe target)
	urlEnv  string // RESEARCHTUI_*_URL
	keyEnv  string // the key variable, "" when the source takes none
	keyed   bool
	missing string // why the source is not available ("" when it is)
}

// sourceSet is everything newSources builds.
type sourceSet struct {
	client  *search.Client
	sources map[string]search.Source
	fetcher *search.Fetcher
	info    []sourceInfo
}

// newSources builds the searchable sources, with base URLs from the
// environment (for mirrors, proxies and tests) and keys where given. With a
// store, the local corpus (`researchtui corpus add`) is one of them.
func newSources(cfg *Config, st ...store.DB) (map[string]search.Source, *search.Fetcher, map[string]string) {
	set := buildSources(cfg, st...)
	off := map[string]string{}
	for _, info := range set.info {
		if info.missing != "" {
			off[info.name] = info.missing
		}
	}
	return set.sources, set.fetcher, off
}

func buildSources(cfg *Config, st ...store.DB) *sourceSet {
	opt := search.ClientOptions{UserAgent: "researchtui/" + version + " (+https://github.com/researchtui/researchtui)"}
	if age, on := cfg.cacheMaxAge(); on {
		opt.CacheDir = filepath.Join(cfg.cacheDir(), "http")
		opt.CacheMaxAge = age
	}
	client := search.NewClient(opt)
	set := &sourceSet{client: client, sources: map[string]search.Source{}}
	env := func(name string) string { return strings.TrimSpace(os.Getenv(name)) }
	add := func(info sourceInfo, src search.Source) {
		if src == nil && info.missing == "" {
			info.missing = "not configured"
		}
		if src != nil {
			set.sources[info.name] = src
		}
		set.info = append(set.info, info)
	}
	orDefault := func(v, def string) string {
		if v == "" {
			return def
		}
		return v
	}

	arxivURL := orDefault(env("RESEARCHTUI_ARXIV_URL"), search.DefaultArxivURL)
	add(sourceInfo{name: "arxiv", url: arxivURL, urlEnv: "RESEARCHTUI_ARXIV_URL"}, search.NewArxiv(client, arxivURL))

	oaURL := orDefault(env("RESEARCHTUI_OPENALEX_URL"), search.DefaultOpenAlexURL)
	add(sourceInfo{name: "openalex", url: oaURL, urlEnv: "RESEARCHTUI_OPENALEX_URL"}, search.NewOpenAlex(client, oaURL, cfg.ContactEmail))

	pmURL := orDefault(env("RESEARCHTUI_PUBMED_URL"), search.DefaultPubMedURL)
	pmKey := env("NCBI_API_KEY")
	add(sourceInfo{name: "pubmed", url: pmURL, urlEnv: "RESEARCHTUI_PUBMED_URL", keyEnv: "NCBI_API_KEY", keyed: pmKey != ""},
		search.NewPubMed(client, pmURL, pmKey, cfg.ContactEmail))

	s2URL := orDefault(env("RESEARCHTUI_SEMANTICSCHOLAR_URL"), search.DefaultSemanticScholarURL)
	s2Key := env("SEMANTIC_SCHOLAR_API_KEY")
	add(sourceInfo{name: "semanticscholar", url: s2URL, urlEnv: "RESEARCHTUI_SEMANTICSCHOLAR_URL", keyEnv: "SEMANTIC_SCHOLAR_API_KEY", keyed: s2Key != ""},
		search.NewSemanticScholar(client, s2URL, s2Key))

	crURL := orDefault(env("RESEARCHTUI_CROSSREF_URL"), search.DefaultCrossrefURL)
	add(sourceInfo{name: "crossref", url: crURL, urlEnv: "RESEARCHTUI_CROSSREF_URL"}, search.NewCrossref(client, crURL, cfg.ContactEmail))

	web := search.WebOptions{
		SearxNGURL: env("RESEARCHTUI_SEARXNG_URL"),
		BraveKey:   env("BRAVE_API_KEY"), BraveURL: env("RESEARCHTUI_BRAVE_URL"),
		TavilyKey: env("TAVILY_API_KEY"), TavilyURL: env("RESEARCHTUI_TAVILY_URL"),
	}
	webInfo := sourceInfo{name: "web", url: web.SearxNGURL, urlEnv: "RESEARCHTUI_SEARXNG_URL", keyEnv: "BRAVE_API_KEY or TAVILY_API_KEY", keyed: web.BraveKey != "" || web.TavilyKey != ""}
	if len(web.Engines()) == 0 {
		webInfo.missing = "no engine: set RESEARCHTUI_SEARXNG_URL (a SearxNG instance with format=json), BRAVE_API_KEY or TAVILY_API_KEY"
	} else if webInfo.url == "" {
		webInfo.url = orDefault(web.BraveURL, search.DefaultBraveURL)
		if web.BraveKey == "" {
			webInfo.url = orDefault(web.TavilyURL, search.DefaultTavilyURL)
		}
	}
	add(webInfo, search.NewWeb(client, web))

	mpURL := orDefault(env("RESEARCHTUI_MATERIALSPROJECT_URL"), search.DefaultMaterialsProjectURL)
	mpKey := env("MP_API_KEY")
	mpInfo := sourceInfo{name: "materials", url: mpURL, urlEnv: "RESEARCHTUI_MATERIALSPROJECT_URL", keyEnv: "MP_API_KEY", keyed: mpKey != ""}
	if mpKey == "" {
		mpInfo.missing = "needs MP_API_KEY (free at materialsproject.org)"
	}
	add(mpInfo, search.NewMaterialsProject(client, mpURL, mpKey))

	localInfo := sourceInfo{name: "local"}
	if len(st) > 0 && st[0] != nil {
		add(localInfo, search.NewLocal(corpus.Docs(cfg.corpusPath(), st[0])))
	} else {
		localInfo.missing = "the store is not open"
		add(localInfo, nil)
	}

	if cfg.FullText != nil && !*cfg.FullText {
		return set
	}
	set.fetcher = search.NewFetcher(client, search.FetchOptions{AllowPrivate: os.Getenv("RESEARCHTUI_ALLOW_PRIVATE_FETCH") == "1"})
	return set
}
