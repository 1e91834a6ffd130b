package main

import (
	"os"

	"github.com/researchtui/researchtui/search"
)

// newSources builds the searchable sources, with base URLs from the
// environment (for mirrors, proxies and tests).
func newSources(cfg *Config) (map[string]search.Source, *search.Fetcher) {
	client := search.NewClient(search.ClientOptions{UserAgent: "researchtui/" + version + " (+https://github.com/researchtui/researchtui)"})
	srcs := map[string]search.Source{
		"arxiv":    search.NewArxiv(client, os.Getenv("RESEARCHTUI_ARXIV_URL")),
		"openalex": search.NewOpenAlex(client, os.Getenv("RESEARCHTUI_OPENALEX_URL"), cfg.ContactEmail),
	}
	if cfg.FullText != nil && !*cfg.FullText {
		return srcs, nil
	}
	fetcher := search.NewFetcher(client, search.FetchOptions{AllowPrivate: os.Getenv("RESEARCHTUI_ALLOW_PRIVATE_FETCH") == "1"})
	return srcs, fetcher
}
