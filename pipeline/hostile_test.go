package pipeline_test

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/search"
)

// hostileWeb serves what web results can lead to: an endless page, an
// endless "PDF", a body that drips a byte at a time, and a gzip body that
// never ends once decompressed.
func hostileWeb(t *testing.T) (*httptest.Server, func(string) int) {
	var mu sync.Mutex
	hits := map[string]int{}
	chunk := bytes.Repeat([]byte("<p>endless python text</p>\n"), 4000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		fl, _ := w.(http.Flusher)
		switch r.URL.Path {
		case "/endless.html", "/endless.pdf":
			if strings.HasSuffix(r.URL.Path, ".pdf") {
				w.Write([]byte("%PDF-1.5\n"))
			}
			for r.Context().Err() == nil {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		case "/drip.html":
			w.Write([]byte("<html>"))
			for r.Context().Err() == nil {
				fl.Flush()
				time.Sleep(time.Second / 20)
				if _, err := w.Write([]byte("x")); err != nil {
					return
				}
			}
		case "/bomb.html":
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			zeros := make([]byte, 1<<20)
			for r.Context().Err() == nil {
				if _, err := zw.Write(zeros); err != nil {
					return
				}
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv, func(p string) int { mu.Lock(); defer mu.Unlock(); return hits[p] }
}

// TestHostileWebResultsDontHoldTheRun: the recorded SearxNG answer's first
// results are pointed at hostile bodies. The run reads around them: no body
// is fetched twice, the drip is given up as stalled, and a report is made.
// With RESEARCHTUI_REAL_PROGRESS=1 the download rule is the real one (15 s
// to a first byte, 160 KiB per 10 s) and the test logs the wall time.
func TestHostileWebResultsDontHoldTheRun(t *testing.T) {
	t.Parallel()
	hostile, hits := hostileWeb(t)
	recorded, err := os.ReadFile("../search/testdata/searxng/search-q-python-format-json.json")
	if err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"https://www.python.org/about/gettingstarted/":               hostile.URL + "/drip.html",
		"https://wiki.nerdvpn.de/wiki/Python_(programming_language)": hostile.URL + "/endless.html",
		"https://docs.python.org/3/tutorial/index.html":              hostile.URL + "/endless.pdf",
		"https://www.python.org/downloads/":                          hostile.URL + "/bomb.html",
	}
	body := string(recorded)
	for from, to := range links {
		body = strings.Replace(body, `"`+from+`"`, `"`+to+`"`, 1)
	}
	searx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(body))
	}))
	defer searx.Close()

	script := &pipelinetest.Script{Topics: []pipelinetest.Topic{
		{Question: "Where is Python downloaded, taught to beginners in a tutorial, and described as a programming language?", Strict: "python programming language tutorial download beginners", Moderate: "python download tutorial", Broad: "python"},
	}, Canonical: "python"}
	env := pipelinetest.NewEnv(t, script, "")
	env.Client.SetHostLimit(strings.TrimPrefix(hostile.URL, "http://"), 0)
	rule := search.ProgressRule{FirstByte: 2 * time.Second, Window: time.Second, MinBytes: 8 << 10}
	if os.Getenv("RESEARCHTUI_REAL_PROGRESS") == "1" {
		rule = search.DefaultProgress
	}
	env.Engine.Sources["web"] = search.NewWeb(env.Client, search.WebOptions{SearxNGURL: searx.URL})
	env.Engine.Fetcher = search.NewFetcher(env.Client, search.FetchOptions{AllowPrivate: true, Progress: rule})
	opt := env.Options("What is the Python programming language?")
	opt.Sources, opt.Depth = []string{"web"}, runopts.DepthDeep
	start := time.Now()
	evs, _ := pipelinetest.RunToEnd(t, env, opt)
	t.Logf("the run took %s with the %v download rule", time.Since(start).Round(time.Millisecond), rule)
	read := 0
	for _, p := range []string{"/drip.html", "/endless.html", "/endless.pdf", "/bomb.html"} {
		if n := hits(p); n > 1 {
			t.Errorf("%s was fetched %d times", p, n)
		} else {
			read += n
		}
	}
	t.Logf("hostile links fetched: drip %d, endless page %d, endless pdf %d, gzip bomb %d", hits("/drip.html"), hits("/endless.html"), hits("/endless.pdf"), hits("/bomb.html"))
	if read < 3 {
		t.Fatalf("only %d of the hostile links were read; the test needs them chosen", read)
	}
	if hits("/drip.html") == 1 {
		stalled := false
		for _, ev := range evs {
			if ev.Type == pipeline.DocumentRead && strings.Contains(ev.Message, "stalled at") {
				stalled = true
			}
		}
		if !stalled {
			t.Error("the drip's source does not say it stalled")
		}
	}
}
