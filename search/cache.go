package search

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// diskCache keeps successful HTTP answers on disk, one file per request:
// <dir>/<2 hex>/<sha256>, holding a one-line JSON header and then the body.
// A nil *diskCache caches nothing.
type diskCache struct {
	dir    string
	maxAge time.Duration
}

type cacheMeta struct {
	URL         string    `json:"url"`
	Status      int       `json:"status"`
	ContentType string    `json:"content_type,omitempty"`
	Time        time.Time `json:"time"`
}

func newDiskCache(dir string, maxAge time.Duration) *diskCache {
	if dir == "" {
		return nil
	}
	return &diskCache{dir: dir, maxAge: maxAge}
}

// cacheKey identifies a request: method, URL, the headers that change the
// answer (everything but the User-Agent) and the body. API keys in headers
// only ever enter the hash.
func cacheKey(method, rawURL string, header http.Header, body []byte) string {
	if method == "" {
		method = http.MethodGet
	}
	h := sha256.New()
	h.Write([]byte(method + " " + rawURL + "\n"))
	keys := make([]string, 0, len(header))
	for k := range header {
		if !strings.EqualFold(k, "User-Agent") {
			keys = append(keys, http.CanonicalHeaderKey(k))
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		h.Write([]byte(k + ": " + strings.Join(header.Values(k), ",") + "\n"))
	}
	h.Write([]byte("\n"))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

func (c *diskCache) path(key string) string {
	return filepath.Join(c.dir, key[:2], key)
}

func (c *diskCache) read(key string) (*Response, time.Time) {
	if c == nil || key == "" {
		return nil, time.Time{}
	}
	raw, err := os.ReadFile(c.path(key))
	if err != nil {
		return nil, time.Time{}
	}
	head, body, ok := bytes.Cut(raw, []byte("\n"))
	if !ok {
		return nil, time.Time{}
	}
	var m cacheMeta
	if json.Unmarshal(head, &m) != nil || m.Status == 0 {
		return nil, time.Time{}
	}
	hdr := http.Header{"X-Researchtui-Cache": {"hit"}}
	if m.ContentType != "" {
		hdr.Set("Content-Type", m.ContentType)
	}
	return &Response{Status: m.Status, Header: hdr, Body: body, URL: m.URL}, m.Time
}

// get returns the cached answer and whether it is younger than maxAge.
func (c *diskCache) get(key string) (*Response, bool) {
	resp, t := c.read(key)
	if resp == nil {
		return nil, false
	}
	return resp, time.Since(t) <= c.maxAge
}

// stale returns a cached answer of any age (for when the network fails).
func (c *diskCache) stale(key string) *Response {
	resp, _ := c.read(key)
	return resp
}

// put stores a successful answer; errors are ignored (a cache that cannot
// write is just a slower cache). The write is atomic.
func (c *diskCache) put(key string, resp *Response) {
	if c == nil || key == "" || resp == nil || resp.Status < 200 || resp.Status > 299 {
		return
	}
	head, err := json.Marshal(cacheMeta{URL: resp.URL, Status: resp.Status, ContentType: resp.Header.Get("Content-Type"), Time: time.Now()})
	if err != nil {
		return
	}
	p := c.path(key)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return
	}
	_, werr := f.Write(append(append(head, '\n'), resp.Body...))
	cerr := f.Close()
	if werr != nil || cerr != nil || os.Rename(f.Name(), p) != nil {
		os.Remove(f.Name())
	}
}

type freshKey struct{}

// WithFreshAnswers asks every request made with ctx of the network, not
// of the cache, however young its cached answer: a living review's update
// is there to see what changed since. The answer still refreshes the
// cache; when the network fails the request fails too (an old answer
// would pass for "nothing new").
func WithFreshAnswers(ctx context.Context) context.Context {
	return context.WithValue(ctx, freshKey{}, true)
}

func wantsFresh(ctx context.Context) bool {
	fresh, _ := ctx.Value(freshKey{}).(bool)
	return fresh
}
