package main

import (
	"context"
	"fmt"
	"os"
	"time"
)

func (d *doctor) checkSources(ctx context.Context, cfg *Config) {
	srcs, _ := newSources(cfg)
	for _, name := range []string{"arxiv", "openalex"} {
		src := srcs[name]
		cctx, cancel := context.WithTimeout(ctx, 8*time.Second)
		start := time.Now()
		_, err := src.Search(cctx, "graphene", 1)
		cancel()
		if err != nil {
			d.bad(name, "unreachable: "+sanitize(truncate(err.Error(), 100)), "check the network or RESEARCHTUI_"+envName(name)+"_URL; runs degrade to the sources that answer")
			continue
		}
		d.ok(name, fmt.Sprintf("answered in %s", time.Since(start).Round(time.Millisecond)))
	}
	for _, name := range []string{"pubmed", "semanticscholar", "crossref", "web", "local"} {
		d.info(name, "not available in this build yet")
	}
	if os.Getenv("RESEARCHTUI_ALLOW_PRIVATE_FETCH") == "1" {
		d.info("downloads", "private and loopback addresses allowed (RESEARCHTUI_ALLOW_PRIVATE_FETCH=1)")
	}
}

func envName(source string) string {
	switch source {
	case "arxiv":
		return "ARXIV"
	case "openalex":
		return "OPENALEX"
	}
	return source
}
