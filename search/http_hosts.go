package search

import (
	"net/url"
	"strings"
	"time"

	"golang.org/x/time/rate"
)

// Each host's pace: how often the client may ask it, and how long it
// waits after the host said "too many requests".

// HostStatus is what the client knows about a host, for `doctor`.
type HostStatus struct {
	// Every is the minimum spacing of requests (0: unlimited).
	Every time.Duration
	// CoolingFor is how long the host is still skipped after a 429.
	CoolingFor time.Duration
}

// HostStatus reports the rate limit in force for a URL's host and whether it
// is cooling down after a 429.
func (c *Client) HostStatus(rawURL string) HostStatus {
	u, err := url.Parse(rawURL)
	if err != nil {
		return HostStatus{}
	}
	lim := c.limiter(u)
	var st HostStatus
	if l := lim.Limit(); l != rate.Inf && l > 0 {
		st.Every = time.Duration(float64(time.Second) / float64(l))
	}
	c.mu.Lock()
	if until, ok := c.cooling[strings.ToLower(u.Host)]; ok {
		st.CoolingFor = max(time.Until(until), 0)
	}
	c.mu.Unlock()
	return st
}

// coolingFor is the remaining cool-down of a host after a 429, or 0.
func (c *Client) coolingFor(host string) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	until, ok := c.cooling[strings.ToLower(host)]
	if !ok {
		return 0
	}
	d := time.Until(until)
	if d <= 0 {
		delete(c.cooling, strings.ToLower(host))
		return 0
	}
	return d
}

func (c *Client) coolDown(host string, retryAfter time.Duration) {
	if c.opt.Cooldown < 0 {
		return
	}
	d := max(c.opt.Cooldown, retryAfter)
	c.mu.Lock()
	c.cooling[strings.ToLower(host)] = time.Now().Add(d)
	c.mu.Unlock()
}

// SetHostLimit sets the minimum spacing of requests to host ("host" or
// "host:port"); every <= 0 removes the limit.
func (c *Client) SetHostLimit(host string, every time.Duration) {
	host = strings.ToLower(host)
	l := rate.Inf
	if every > 0 {
		l = rate.Every(every)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.limits[host] = l
	if lim, ok := c.limiters[host]; ok {
		lim.SetLimit(l)
	}
}

// UserAgent is the User-Agent the client sends.
func (c *Client) UserAgent() string { return c.opt.UserAgent }

// limiter returns the limiter of a request host, keyed by host:port so that
// every test server gets its own; a limit set for the bare host name applies.
func (c *Client) limiter(u *url.URL) *rate.Limiter {
	key := strings.ToLower(u.Host)
	c.mu.Lock()
	defer c.mu.Unlock()
	if lim, ok := c.limiters[key]; ok {
		return lim
	}
	l, ok := c.limits[key]
	if !ok {
		l, ok = c.limits[strings.ToLower(u.Hostname())]
	}
	if !ok {
		l = DefaultHostLimit
	}
	lim := rate.NewLimiter(l, 1)
	c.limiters[key] = lim
	return lim
}
