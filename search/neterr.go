package search

import (
	"errors"
	"net"
	"net/url"
	"sync"
)

// HostOf is the host (with port, if any) of a URL, or "" when it has none.
func HostOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	return u.Host
}

// IsUnreachable reports errors that say a host can't be reached at all
// (its name does not resolve, or nothing accepts connections), as opposed
// to one slow or failed answer: asking that host again in the same run
// would only cost another wait.
func IsUnreachable(err error) bool {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// HostSet is a set of hosts given up, shared by the downloads of one
// research run: once a host refuses connections, does not resolve or lets
// a download stall, its other links are not tried (nor do they wait for the host's turn
// under its rate limit). The zero value is empty; a nil set holds nothing.
type HostSet struct {
	mu sync.Mutex
	m  map[string]bool
}

// Has reports whether host was found unreachable.
func (h *HostSet) Has(host string) bool {
	if h == nil {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.m[host]
}

// Add records host as unreachable.
func (h *HostSet) Add(host string) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[string]bool{}
	}
	h.m[host] = true
}

// UnreachableError is a download not attempted because its host was given
// up earlier in the run (it could not be reached, or it stalled).
type UnreachableError struct{ Host string }

func (e *UnreachableError) Error() string {
	return e.Host + " was given up earlier in this run (unreachable or stalled)"
}
