package search

import (
	"errors"
	"net"
	"net/url"
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
