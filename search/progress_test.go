package search

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/researchtui/researchtui/testkit/hostileweb"
)

// pacedScripts are the answers judged by their pace, for a rule of at
// least 4 KiB a second: a page of 1 MiB in 64 KiB pieces every 100 ms (slow,
// never stalled), and a page that drips a byte every 50 ms (20 bytes a
// second, for ever).
func pacedScripts() map[string]func(*pacer) {
	return map[string]func(*pacer){
		"/steady.html": func(p *pacer) {
			p.send([]byte("<html><body><p>"))
			piece := bytes.Repeat([]byte("steady words "), 64<<10/13)
			for range 16 {
				if !p.send(piece) || !p.wait(100*time.Millisecond) {
					return
				}
			}
			p.send([]byte("</p></body></html>"))
			p.end()
		},
		"/drip.html": func(p *pacer) {
			p.send([]byte("<html>"))
			for p.wait(50*time.Millisecond) && p.send([]byte("x")) {
			}
		},
	}
}

func TestDownloadsAreJudgedByProgress(t *testing.T) {
	t.Parallel()
	srv := hostileweb.New(t)
	// The paced answers come on a fake clock, so the test, not the
	// machine's load, decides how much time passes between their bytes;
	// the fake clock never moves while the sized bodies are read, so only
	// their size can end them.
	clk := newFakeClock()
	paced := &pacedHost{clock: clk, scripts: pacedScripts(), hits: map[string]int{}}
	const pacedURL = "http://paced.test"
	sized := srv.Client().Transport
	route := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.URL.Host == "paced.test" {
			return paced.RoundTrip(req)
		}
		return sized.RoundTrip(req)
	})
	c := NewClient(ClientOptions{BaseBackoff: time.Millisecond})
	// Scaled down from the real rule: the drip brings 20 bytes a second,
	// the steady body 640 KiB.
	rule := ProgressRule{FirstByte: 2 * time.Second, Window: time.Second, MinBytes: 4 << 10}
	f := NewFetcher(c, FetchOptions{AllowPrivate: true, MaxBytes: 4 << 20, Progress: rule, Transport: route, clock: clk})
	var gate HostSet
	ctx := context.Background()

	for _, path := range []string{"/endless.html", "/endless.pdf", "/bomb.html"} {
		_, err := f.FetchGated(ctx, srv.URL+path, nil)
		if !errors.Is(err, ErrBodyTooLarge) {
			t.Errorf("%s: %v, want the size cap", path, err)
		}
		if n := srv.Hits(path); n != 1 {
			t.Errorf("%s was fetched %d times; a body over the cap is not fetched again", path, n)
		}
	}
	// The steady body is slow but never stalls: read in full.
	doc, err := f.FetchGated(ctx, pacedURL+"/steady.html", nil)
	if err != nil || strings.Count(doc.Text, "steady") < 70000 {
		t.Fatalf("steady download: %v, %d words", err, strings.Count(doc.Text, "steady"))
	}
	// The drip stalls: given up once, not retried, and its host is not
	// asked again in the run.
	_, err = f.FetchGated(ctx, pacedURL+"/drip.html", &gate)
	var se *StalledError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "stalled at") {
		t.Fatalf("drip: %v, want a stall", err)
	}
	if n := paced.count("/drip.html"); n != 1 {
		t.Errorf("the drip was fetched %d times", n)
	}
	_, err = f.FetchGated(ctx, pacedURL+"/drip-again.html", &gate)
	var ue *UnreachableError
	if !errors.As(err, &ue) || paced.count("/drip-again.html") != 0 {
		t.Errorf("a host that stalled was asked again: %v (%d requests)", err, paced.count("/drip-again.html"))
	}
}

// TestSteady30MBPDFWithTheRealRule sends a 30 MB PDF at 200 KiB/s (2.5
// minutes) through the real download rule: it must be read in full. It is
// slow, so it runs only with RESEARCHTUI_SLOW_TESTS=1.
func TestSteady30MBPDFWithTheRealRule(t *testing.T) {
	t.Parallel()
	if os.Getenv("RESEARCHTUI_SLOW_TESTS") != "1" {
		t.Skip("set RESEARCHTUI_SLOW_TESTS=1 (takes 2.5 minutes)")
	}
	const size, rate = 30 << 20, 200 << 10
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(size))
		fl, _ := w.(http.Flusher)
		piece := bytes.Repeat([]byte("x"), rate/10)
		for sent := 0; sent < size && r.Context().Err() == nil; sent += len(piece) {
			if size-sent < len(piece) {
				piece = piece[:size-sent]
			}
			w.Write(piece)
			fl.Flush()
			time.Sleep(100 * time.Millisecond)
		}
	}))
	defer srv.Close()
	c := NewClient(ClientOptions{})
	resp, err := c.get(context.Background(), srv.URL+"/big.pdf", nil, getOptions{hc: http.DefaultClient, maxBody: 50 << 20, timeout: 10 * time.Minute, progress: &DefaultProgress})
	if err != nil || len(resp.Body) != size {
		t.Fatalf("steady 30 MB: %v, %d bytes", err, len(resp.Body))
	}
}
