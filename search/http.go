package search

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/time/rate"

	"github.com/researchtui/researchtui/textkit"
)

// Version goes into the default User-Agent; main may overwrite it at start-up.
var Version = "dev"

// Defaults of ClientOptions.
const (
	DefaultTimeout       = 30 * time.Second
	DefaultMaxBody       = 20 << 20
	DefaultRetries       = 3
	DefaultBaseBackoff   = time.Second
	DefaultMaxRetryAfter = 60 * time.Second
	DefaultHostLimit     = rate.Limit(5)
	DefaultCacheMaxAge   = 7 * 24 * time.Hour
	DefaultCooldown      = 30 * time.Second
	maxBackoff           = 30 * time.Second
)

// DefaultHostLimits are the per-host request rates used unless
// ClientOptions.HostLimits overrides a host. Other hosts get DefaultHostLimit.
func DefaultHostLimits() map[string]rate.Limit {
	return map[string]rate.Limit{
		"export.arxiv.org":        rate.Every(3 * time.Second),
		"arxiv.org":               rate.Every(3 * time.Second),
		"api.semanticscholar.org": 1,
		"eutils.ncbi.nlm.nih.gov": 3,
	}
}

// ClientOptions configure a Client. Zero values mean the defaults.
type ClientOptions struct {
	// UserAgent defaults to "researchtui/<Version> (+https://github.com/researchtui/researchtui)".
	UserAgent string
	// Timeout bounds one request attempt, body included (default 30 s).
	Timeout time.Duration
	// MaxBody caps a response body (default 20 MB); larger bodies fail with ErrBodyTooLarge.
	MaxBody int64
	// Retries is the number of retries after the first attempt (default 3; negative: none).
	Retries int
	// BaseBackoff is the first retry delay, doubled per retry, with jitter (default 1 s).
	BaseBackoff time.Duration
	// MaxRetryAfter is the longest Retry-After the client waits for (default 60 s);
	// a longer one gives up at once (429: *RateLimitedError).
	MaxRetryAfter time.Duration
	// HostLimits override DefaultHostLimits per host ("host" or "host:port").
	HostLimits map[string]rate.Limit
	// Transport defaults to a clone of http.DefaultTransport.
	Transport http.RoundTripper
	// CacheDir, when set, keeps successful answers (API responses and
	// downloaded documents) on disk, so a re-run or browsing a finished
	// session's sources needs no network. Empty: no cache.
	CacheDir string
	// CacheMaxAge is how long a cached answer is served without asking the
	// network again (default DefaultCacheMaxAge). An older entry is still
	// used when the network fails.
	CacheMaxAge time.Duration
	// Cooldown is how long a host that answered 429 (after the retries the
	// client was willing to wait for) is not asked again: requests fail fast
	// with *RateLimitedError instead. A longer Retry-After wins. Default
	// DefaultCooldown; negative: none.
	Cooldown time.Duration
}

// Client is the one HTTP client every source uses: per-host rate limits,
// retries with backoff honouring Retry-After, per-request timeouts, body caps
// and a clear User-Agent. It is safe for concurrent use.
type Client struct {
	opt ClientOptions
	hc  *http.Client

	mu       sync.Mutex
	limits   map[string]rate.Limit
	limiters map[string]*rate.Limiter
	cooling  map[string]time.Time // host → no requests before
	cache    *diskCache
}

// Response is a fully read HTTP response.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	URL    string // final URL after redirects
}

// HTTPError is a non-2xx answer (after retries). Body holds the first 300
// bytes of the answer, cleaned of control characters.
type HTTPError struct {
	URL    string
	Status int
	Body   string
}

func (e *HTTPError) Error() string {
	msg := fmt.Sprintf("GET %s: HTTP %d %s", redactURL(e.URL), e.Status, http.StatusText(e.Status))
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

// RateLimitedError reports a 429 the client did not (or no longer) wait out.
type RateLimitedError struct {
	Host       string
	RetryAfter time.Duration // 0 when the server did not say
}

func (e *RateLimitedError) Error() string {
	if e.RetryAfter > 0 {
		return fmt.Sprintf("%s: rate limited (HTTP 429), retry after %s", e.Host, e.RetryAfter.Round(time.Second))
	}
	return fmt.Sprintf("%s: rate limited (HTTP 429)", e.Host)
}

// ErrBodyTooLarge is returned (wrapped) when a body exceeds the size cap.
var ErrBodyTooLarge = errors.New("response body too large")

// NewClient builds a Client; zero options get the defaults.
func NewClient(opt ClientOptions) *Client {
	if opt.UserAgent == "" {
		opt.UserAgent = "researchtui/" + Version + " (+https://github.com/researchtui/researchtui)"
	}
	if opt.Timeout <= 0 {
		opt.Timeout = DefaultTimeout
	}
	if opt.MaxBody <= 0 {
		opt.MaxBody = DefaultMaxBody
	}
	if opt.Retries == 0 {
		opt.Retries = DefaultRetries
	} else if opt.Retries < 0 {
		opt.Retries = 0
	}
	if opt.BaseBackoff <= 0 {
		opt.BaseBackoff = DefaultBaseBackoff
	}
	if opt.MaxRetryAfter <= 0 {
		opt.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if opt.Transport == nil {
		opt.Transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	if opt.CacheMaxAge <= 0 {
		opt.CacheMaxAge = DefaultCacheMaxAge
	}
	if opt.Cooldown == 0 {
		opt.Cooldown = DefaultCooldown
	}
	limits := DefaultHostLimits()
	for h, l := range opt.HostLimits {
		limits[strings.ToLower(h)] = l
	}
	return &Client{
		opt:      opt,
		hc:       &http.Client{Transport: opt.Transport},
		limits:   limits,
		limiters: map[string]*rate.Limiter{},
		cooling:  map[string]time.Time{},
		cache:    newDiskCache(opt.CacheDir, opt.CacheMaxAge),
	}
}

// Get fetches url with retries. A non-2xx answer after retries returns both
// the *Response (so callers can parse error bodies) and an *HTTPError, or a
// *RateLimitedError for 429.
func (c *Client) Get(ctx context.Context, rawURL string, header http.Header) (*Response, error) {
	return c.get(ctx, rawURL, header, getOptions{hc: c.hc, maxBody: c.opt.MaxBody, timeout: c.opt.Timeout})
}

// Post sends body (JSON APIs such as Tavily) with the same limits,
// retries and cache as Get; the cache key includes the body.
func (c *Client) Post(ctx context.Context, rawURL string, header http.Header, body []byte) (*Response, error) {
	return c.get(ctx, rawURL, header, getOptions{hc: c.hc, maxBody: c.opt.MaxBody, timeout: c.opt.Timeout, method: http.MethodPost, body: body})
}

type getOptions struct {
	hc      *http.Client
	maxBody int64
	timeout time.Duration
	// noRetry reports errors that must not be retried.
	noRetry func(error) bool
	method  string // default GET
	body    []byte
	noCache bool
	// gate, when set, is asked before every attempt (after the host's
	// turn came) and told when the host turned out to be unreachable.
	gate *HostSet
	// progress, when set, judges the download by its progress (the
	// timeout is then only a ceiling).
	progress *ProgressRule
	// clock is the progress watch's clock (nil: the real one).
	clock clock
}

// errMidBody marks a download that failed after its answer began: it is
// not retried for documents (the next attempt would most likely fail the
// same way, and has to start over).
var errMidBody = errors.New("the download broke off")

func (c *Client) get(ctx context.Context, rawURL string, header http.Header, o getOptions) (*Response, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("bad URL %q: %w", rawURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("bad URL %q: only http and https are supported", rawURL)
	}
	var ckey string
	if c.cache != nil && !o.noCache {
		ckey = cacheKey(o.method, u.String(), header, o.body)
		if resp, fresh := c.cache.get(ckey); resp != nil && fresh && !wantsFresh(ctx) {
			return resp, nil
		}
	}
	if d := c.coolingFor(u.Host); d > 0 {
		if resp := c.cache.stale(ckey); resp != nil && !wantsFresh(ctx) {
			return resp, nil
		}
		return nil, &RateLimitedError{Host: u.Host, RetryAfter: d}
	}
	resp, err := c.attempts(ctx, u, header, o)
	if err != nil {
		var rl *RateLimitedError
		if errors.As(err, &rl) {
			c.coolDown(u.Host, rl.RetryAfter)
		}
		if resp == nil && ctx.Err() == nil && !wantsFresh(ctx) {
			// offline or the host is down: an expired cache entry beats nothing
			if stale := c.cache.stale(ckey); stale != nil {
				return stale, nil
			}
		}
		return resp, err
	}
	c.cache.put(ckey, resp)
	return resp, nil
}

func (c *Client) attempts(ctx context.Context, u *url.URL, header http.Header, o getOptions) (*Response, error) {
	lim := c.limiter(u)
	for attempt := 0; ; attempt++ {
		if err := lim.Wait(ctx); err != nil {
			return nil, err
		}
		if o.gate.Has(u.Host) {
			return nil, &UnreachableError{Host: u.Host}
		}
		resp, err := c.once(ctx, u.String(), header, o)
		var stalled *StalledError
		if err != nil && (IsUnreachable(err) || errors.As(err, &stalled)) {
			o.gate.Add(u.Host)
		}
		last := attempt >= c.opt.Retries
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if last || !retryable(err) || (o.noRetry != nil && o.noRetry(err)) {
				return nil, err
			}
			if err := sleep(ctx, c.backoff(attempt)); err != nil {
				return nil, err
			}
			continue
		}
		if resp.Status >= 200 && resp.Status < 300 {
			return resp, nil
		}
		wait, hasWait := retryAfter(resp.Header.Get("Retry-After"), time.Now())
		retryStatus := resp.Status == 429 || resp.Status == 502 || resp.Status == 503 || resp.Status == 504
		if retryStatus && !last && (!hasWait || wait <= c.opt.MaxRetryAfter) {
			if !hasWait {
				wait = c.backoff(attempt)
			}
			if err := sleep(ctx, wait); err != nil {
				return nil, err
			}
			continue
		}
		if resp.Status == 429 {
			return resp, &RateLimitedError{Host: u.Host, RetryAfter: wait}
		}
		return resp, &HTTPError{URL: resp.URL, Status: resp.Status, Body: errorSnippet(resp.Body)}
	}
}

func (c *Client) once(ctx context.Context, rawURL string, header http.Header, o getOptions) (*Response, error) {
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	var watch *progressWatch
	if o.progress != nil {
		var stop func()
		ctx, watch, stop = watchProgress(ctx, *o.progress, hostOfURL(rawURL), o.clock)
		defer stop()
	}
	method := o.method
	if method == "" {
		method = http.MethodGet
	}
	var rd io.Reader
	if o.body != nil {
		rd = bytes.NewReader(o.body)
	}
	req, err := http.NewRequestWithContext(ctx, method, rawURL, rd)
	if err != nil {
		return nil, err
	}
	for k, vs := range header {
		req.Header[k] = append([]string(nil), vs...)
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", c.opt.UserAgent)
	}
	resp, err := o.hc.Do(req)
	if err != nil {
		if se := stalledCause(ctx); se != nil {
			return nil, se
		}
		return nil, &TransportError{Host: req.URL.Host, Err: err, Timeout: o.timeout}
	}
	defer resp.Body.Close()
	var bodyReader io.Reader = resp.Body
	if watch != nil {
		watch.started.Store(true)
		bodyReader = watch.reader(resp.Body)
	}
	if resp.ContentLength > o.maxBody {
		return nil, fmt.Errorf("GET %s: %w (%d bytes, limit %d)", redactURL(rawURL), ErrBodyTooLarge, resp.ContentLength, o.maxBody)
	}
	body, err := io.ReadAll(io.LimitReader(bodyReader, o.maxBody+1))
	if err != nil {
		if se := stalledCause(ctx); se != nil {
			return nil, se
		}
		if watch != nil {
			return nil, fmt.Errorf("GET %s: %w after %s: %w", redactURL(rawURL), errMidBody, sizeText(watch.count.Load()), err)
		}
		return nil, fmt.Errorf("GET %s: reading body: %w", redactURL(rawURL), err)
	}
	if int64(len(body)) > o.maxBody {
		return nil, fmt.Errorf("GET %s: %w (limit %d bytes)", redactURL(rawURL), ErrBodyTooLarge, o.maxBody)
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: body, URL: resp.Request.URL.String()}, nil
}

// stalledCause is the *StalledError a progress watch cancelled ctx with.
func stalledCause(ctx context.Context) *StalledError {
	var se *StalledError
	if errors.As(context.Cause(ctx), &se) {
		return se
	}
	return nil
}

func hostOfURL(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Host
	}
	return raw
}

// backoff is BaseBackoff·2^attempt with "equal jitter" (half fixed, half random).
func (c *Client) backoff(attempt int) time.Duration {
	d := c.opt.BaseBackoff << min(attempt, 16)
	if d > maxBackoff || d <= 0 {
		d = maxBackoff
	}
	half := d / 2
	return half + rand.N(half+1)
}

// retryable reports transport errors worth another attempt: timeouts,
// connection resets and refusals, and truncated answers.
func retryable(err error) bool {
	if errors.Is(err, ErrBodyTooLarge) || errors.Is(err, ErrBlockedAddress) {
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, context.DeadlineExceeded)
}

// retryAfter parses a Retry-After header: delta-seconds or an HTTP date.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			n = 0
		}
		if n > 1<<31 {
			n = 1 << 31
		}
		return time.Duration(n) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		d := t.Sub(now)
		if d < 0 {
			d = 0
		}
		return d, true
	}
	return 0, false
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// errorSnippet is the first 300 bytes of an error body on one clean line.
func errorSnippet(b []byte) string {
	if len(b) > 300 {
		b = b[:300]
	}
	return textkit.CleanLine(strings.ToValidUTF8(string(b), ""))
}

// decodeObject reads a source's answer, a JSON object, into v. A body that
// is no object at all (an HTML error page, a proxy's text) is quoted in the
// message rather than reported by a decoder's offset; hint says what the
// person may fix (a server that answers HTML by default).
func decodeObject(source string, body []byte, v any, hint ...string) error {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return fmt.Errorf("%s: expected JSON, got %q%s", source, errorSnippet(body), strings.Join(hint, ""))
	}
	if err := json.Unmarshal(trimmed, v); err != nil {
		return fmt.Errorf("%s: malformed JSON: %w", source, err)
	}
	return nil
}

// detailError is the error of an answer that carries no results but a
// "detail" (FastAPI's error body), or nil when there is none.
func detailError(source string, detail any) error {
	if detail == nil {
		return nil
	}
	return fmt.Errorf("%s: %s", source, textkit.CleanLine(fmt.Sprint(detail)))
}

// redactURL drops query values that look like keys from URLs in messages.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	q := u.Query()
	changed := false
	for k := range q {
		lk := strings.ToLower(k)
		if strings.Contains(lk, "key") || strings.Contains(lk, "token") || lk == "mailto" || lk == "email" {
			q.Set(k, "REDACTED")
			changed = true
		}
	}
	if changed {
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// TransportError is a request that got no HTTP answer. Its message leads
// with the reason (connection refused, timed out, no such host) so that it
// survives being shortened for a warning; Unwrap gives the net/http error.
type TransportError struct {
	Host    string
	Err     error
	Timeout time.Duration
}

func (e *TransportError) Unwrap() error { return e.Err }

func (e *TransportError) Error() string {
	var dns *net.DNSError
	var ne net.Error
	switch {
	case errors.Is(e.Err, syscall.ECONNREFUSED):
		return e.Host + ": connection refused"
	case errors.Is(e.Err, syscall.ECONNRESET):
		return e.Host + ": connection reset"
	case errors.As(e.Err, &dns) && dns.IsNotFound:
		return e.Host + ": no such host"
	case errors.Is(e.Err, context.DeadlineExceeded) || errors.As(e.Err, &ne) && ne.Timeout():
		return fmt.Sprintf("%s: no answer within %s", e.Host, e.Timeout)
	case errors.Is(e.Err, ErrBlockedAddress):
		return e.Host + ": " + unwrapAll(e.Err).Error()
	}
	return e.Host + ": " + unwrapAll(e.Err).Error()
}

// unwrapAll returns the innermost *url.Error's cause, or err.
func unwrapAll(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
