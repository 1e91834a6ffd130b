package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/researchtui/researchtui/corpus"
	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/textkit"
)

// checkSources tries every configured source once (in parallel, 8 s each)
// and reports per source: reachable or not, keyed or not, the rate limit in
// force. Sources that need a key or an address nobody gave are listed with
// how to turn them on; they are not problems.
func (d *doctor) checkSources(ctx context.Context, cfg *Config) {
	var set *sourceSet
	st, err := openStore(cfg, reach) // the local corpus is read through an owner too
	if err == nil {
		defer st.Close()
		set = buildSources(cfg, st)
	} else {
		set = buildSources(cfg)
	}
	type result struct {
		err  error
		took time.Duration
		n    int
	}
	results := make([]result, len(set.info))
	var wg sync.WaitGroup
	for i, info := range set.info {
		src := set.sources[info.name]
		if src == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := info.probe
			if q == "" {
				q = "graphene"
			}
			cctx, cancel := context.WithTimeout(ctx, 8*time.Second)
			defer cancel()
			start := time.Now()
			recs, err := src.Search(cctx, q, 1)
			results[i] = result{err: err, took: time.Since(start), n: len(recs)}
		}()
	}
	wg.Wait()
	for _, name := range cfg.Sources {
		if n := strings.ToLower(strings.TrimSpace(name)); n != "" && !slices.Contains(search.SourceNames(), n) {
			d.bad("sources", fmt.Sprintf("your config's sources name %q, which is no source", name), "use "+strings.Join(search.SourceNames(), ", "))
		}
	}
	for i, info := range set.info {
		if info.missing != "" {
			if len(cfg.Sources) > 0 && usesSource(cfg, info.name) {
				// Named in the config: every run would go without it.
				d.bad(info.name, "off, but your config's sources name it: "+info.missing, "turn it on as it says, or take it out of your config's sources")
				continue
			}
			d.info(info.name, "off: "+info.missing)
			continue
		}
		key := ""
		if info.keyEnv != "" {
			if info.keyed {
				key = "keyed"
			} else {
				key = "no key (" + info.keyEnv + ")"
			}
		}
		limit := ""
		if info.url != "" {
			hs := set.client.HostStatus(info.url)
			switch {
			case hs.Every >= time.Second:
				limit = fmt.Sprintf("1 request per %s", hs.Every.Round(100*time.Millisecond))
			case hs.Every > 0:
				limit = fmt.Sprintf("≤ %s requests/s", trimFloat(float64(time.Second)/float64(hs.Every)))
			default:
				limit = "no rate limit"
			}
		}
		detail := joinNonEmpty(", ", key, limit)
		r := results[i]
		if r.err != nil {
			var rl *search.RateLimitedError
			if errors.As(r.err, &rl) {
				fix := "wait a minute; runs continue with the other sources meanwhile"
				if info.keyEnv != "" && !info.keyed {
					fix = "set " + info.keyEnv + " for a higher limit; runs continue with the other sources meanwhile"
				}
				d.info(info.name, "reachable but rate limited right now ("+detail+"): "+fix)
				continue
			}
			fix := "check the network"
			if info.urlEnv != "" {
				fix += " or " + info.urlEnv
			}
			// The line is already the source's: its name leading the
			// error would be said twice.
			msg := "unreachable: " + textkit.StripControls(textkit.Clip(strings.TrimPrefix(r.err.Error(), info.name+": "), 100)) + " (" + detail + ")"
			if u, err := url.Parse(info.url); info.url != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
				// Nothing was reached because nothing could be: the
				// address itself is wrong, not the network.
				msg = "its address is not an http(s) URL: " + strconv.Quote(textkit.Clip(info.url, 60))
				fix = "set " + textkit.FirstNonEmpty(info.urlEnv, "its address") + " to the API's base address, or unset it for the default"
			} else if he := (*search.HTTPError)(nil); errors.As(r.err, &he) {
				// It answered, with an error: the status is the news, not
				// an address cut off in its query string.
				msg = fmt.Sprintf("answers HTTP %d %s at %s (%s)", he.Status, http.StatusText(he.Status), textkit.StripControls(textkit.Clip(addressOnly(he.URL), 60)), detail)
				fix = "check " + textkit.FirstNonEmpty(info.urlEnv, "its address") + ": it must be the API's base address"
			}
			if !usesSource(cfg, info.name) {
				// Reported, but not a problem: the config never searches it.
				d.info(info.name, msg+"; not in your config's sources, so runs do not need it")
				continue
			}
			d.bad(info.name, msg, fix+"; runs degrade to the sources that answer")
			continue
		}
		if info.name == "local" {
			m, _ := corpus.LoadManifest(cfg.corpusPath())
			n := 0
			if m != nil {
				n = len(m.Files)
			}
			d.ok(info.name, fmt.Sprintf("%d documents (researchtui corpus add PATH...)", n))
			continue
		}
		d.ok(info.name, fmt.Sprintf("answered in %s (%s)", r.took.Round(time.Millisecond), detail))
	}
	if err := cfg.validCacheMaxAge(); err != nil {
		d.bad("cache", err.Error(), "fix cache_max_age in "+cfg.configPath)
	} else if age, on := cfg.cacheMaxAge(); on {
		d.info("cache", fmt.Sprintf("%s (answers reused for %s; cache_max_age)", cfg.cacheDir(), age))
	} else {
		d.info("cache", "off (cache_max_age)")
	}
	if set.fetcher == nil {
		d.info("downloads", "full text off (full_text = false): abstracts only")
	}
	if os.Getenv("RESEARCHTUI_ALLOW_PRIVATE_FETCH") == "1" {
		d.info("downloads", "private and loopback addresses allowed (RESEARCHTUI_ALLOW_PRIVATE_FETCH=1)")
	}
}

// usesSource says whether runs with this config may search the source: the
// config's sources when it names them (the sources key), every source when
// it leaves them to the question's topic.
func usesSource(cfg *Config, name string) bool {
	if len(cfg.Sources) == 0 {
		return true
	}
	for _, s := range cfg.Sources {
		if strings.EqualFold(strings.TrimSpace(s), name) {
			return true
		}
	}
	return false
}

// addressOnly is a URL without its query and fragment: where a request
// went, without the parameters (and keys) it carried.
func addressOnly(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.RawQuery, u.Fragment, u.User = "", "", nil
	return u.String()
}
