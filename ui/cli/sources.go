package cli

import (
	"os"
	"path/filepath"

	"github.com/researchtui/researchtui/corpus"
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
	probe   string // the query doctor tries ("" the default)
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
	e := search.Env{Client: client, Getenv: os.Getenv, ContactEmail: cfg.ContactEmail}
	if len(st) > 0 && st[0] != nil {
		e.LocalDocs = corpus.Docs(cfg.corpusPath(), st[0])
	}
	for _, d := range search.Descriptors {
		b := d.New(e)
		if b.Source != nil {
			set.sources[d.Name] = b.Source
		}
		set.info = append(set.info, sourceInfo{name: d.Name, url: b.URL, urlEnv: d.URLEnv, keyEnv: d.KeyEnv, keyed: b.Keyed, missing: b.Missing, probe: d.Probe})
	}

	if cfg.FullText != nil && !*cfg.FullText {
		return set
	}
	set.fetcher = search.NewFetcher(client, search.FetchOptions{AllowPrivate: os.Getenv("RESEARCHTUI_ALLOW_PRIVATE_FETCH") == "1"})
	return set
}
