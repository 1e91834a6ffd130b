package search

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestClientRetries503ThenSuccess(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) < 3 {
			w.WriteHeader(503)
			return
		}
		if !strings.HasPrefix(r.UserAgent(), "researchtui/") {
			t.Errorf("user agent %q", r.UserAgent())
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	c := testClient()
	c.SetHostLimit(hostOf(srv.URL), 0)
	resp, err := c.Get(context.Background(), srv.URL, nil)
	if err != nil || string(resp.Body) != "ok" || n.Load() != 3 {
		t.Fatalf("resp %v err %v attempts %d", resp, err, n.Load())
	}
}

func TestClientGivesUpWithHTTPError(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.WriteHeader(502)
		w.Write([]byte("<html>bad \x1b[31mgateway</html>" + strings.Repeat("x", 1000)))
	}))
	defer srv.Close()
	c := NewClient(ClientOptions{BaseBackoff: time.Millisecond, Retries: 2})
	c.SetHostLimit(hostOf(srv.URL), 0)
	_, err := c.Get(context.Background(), srv.URL, nil)
	var he *HTTPError
	if !errors.As(err, &he) || he.Status != 502 || n.Load() != 3 {
		t.Fatalf("err %v attempts %d", err, n.Load())
	}
	if len(he.Body) > 300 || strings.Contains(he.Body, "\x1b") || !strings.Contains(err.Error(), "502") {
		t.Errorf("body %q / msg %q", he.Body, err.Error())
	}
}

func TestClientRetryAfter(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	var first time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			first = time.Now()
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(429)
			return
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	c := testClient()
	c.SetHostLimit(hostOf(srv.URL), 0)
	start := time.Now()
	if _, err := c.Get(context.Background(), srv.URL, nil); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 900*time.Millisecond {
		t.Errorf("Retry-After: 1 not honoured (%v, first at %v)", el, first.Sub(start))
	}
}

func TestClientLongRetryAfterGivesUp(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Retry-After", time.Now().Add(2*time.Hour).UTC().Format(http.TimeFormat))
		w.WriteHeader(429)
		w.Write(fixtureBytes("../../shared/fixtures/semanticscholar/error-429-too-many-requests.json"))
	}))
	defer srv.Close()
	c := testClient()
	start := time.Now()
	_, err := c.Get(context.Background(), srv.URL, nil)
	var rl *RateLimitedError
	if !errors.As(err, &rl) || rl.RetryAfter < time.Hour || n.Load() != 1 {
		t.Fatalf("err %v attempts %d", err, n.Load())
	}
	if time.Since(start) > 10*time.Second { // it would have waited an hour
		t.Errorf("waited %v", time.Since(start))
	}
}

func TestClientSizeCap(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(strings.Repeat("a", 5000)))
	}))
	defer srv.Close()
	c := NewClient(ClientOptions{MaxBody: 1000, BaseBackoff: time.Millisecond})
	_, err := c.Get(context.Background(), srv.URL, nil)
	if !errors.Is(err, ErrBodyTooLarge) {
		t.Fatalf("err %v", err)
	}
	// chunked, no Content-Length
	srv2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i < 10; i++ {
			w.Write([]byte(strings.Repeat("b", 500)))
			w.(http.Flusher).Flush()
		}
	}))
	defer srv2.Close()
	if _, err := c.Get(context.Background(), srv2.URL, nil); !errors.Is(err, ErrBodyTooLarge) {
		t.Fatalf("chunked: %v", err)
	}
}

func TestClientPerHostRateLimit(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var times []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		times = append(times, time.Now())
		mu.Unlock()
	}))
	defer srv.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer other.Close()
	c := testClient()
	every := 50 * time.Millisecond
	c.SetHostLimit(hostOf(srv.URL), every)
	c.SetHostLimit(hostOf(other.URL), 0)
	start := time.Now()
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Get(context.Background(), srv.URL, nil); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if el := time.Since(start); el < 3*every-10*time.Millisecond {
		t.Errorf("4 requests at 1/%v took only %v", every, el)
	}
	// another host is not slowed down by the first one's limiter: with the
	// first host now allowed one request an hour and a request waiting on
	// it, the other host still answers at once
	c.SetHostLimit(hostOf(srv.URL), time.Hour)
	waitCtx, stopWaiting := context.WithCancel(context.Background())
	defer stopWaiting()
	go c.Get(waitCtx, srv.URL, nil)
	s2 := time.Now()
	for i := 0; i < 3; i++ {
		if _, err := c.Get(context.Background(), other.URL, nil); err != nil {
			t.Fatal(err)
		}
	}
	if time.Since(s2) > 10*time.Second {
		t.Errorf("other host throttled: %v", time.Since(s2))
	}
}

func TestDefaultHostLimits(t *testing.T) {
	t.Parallel()
	c := NewClient(ClientOptions{})
	for host, want := range map[string]time.Duration{"export.arxiv.org": 3 * time.Second, "api.semanticscholar.org": time.Second} {
		lim := c.limiter(&url.URL{Host: host})
		if got := time.Duration(float64(time.Second) / float64(lim.Limit())); got != want {
			t.Errorf("%s: every %v, want %v", host, got, want)
		}
	}
}

func TestRetryAfterParse(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if d, ok := retryAfter("7", now); !ok || d != 7*time.Second {
		t.Error(d, ok)
	}
	if d, ok := retryAfter(now.Add(90*time.Second).Format(http.TimeFormat), now); !ok || d != 90*time.Second {
		t.Error(d, ok)
	}
	if _, ok := retryAfter("soon", now); ok {
		t.Error("garbage accepted")
	}
}

func hostOf(raw string) string {
	u, _ := url.Parse(raw)
	return u.Host
}
