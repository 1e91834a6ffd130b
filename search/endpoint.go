package search

import (
	"strings"

	"github.com/researchtui/researchtui/textkit"
)

// endpoint is a source's HTTP client and the base address of its API.
type endpoint struct {
	c    *Client
	base string
}

// newEndpoint is the API at baseURL, or at def when baseURL is "" (the
// environment names none), without a trailing slash.
func newEndpoint(c *Client, baseURL, def string) endpoint {
	if baseURL == "" {
		baseURL = def
	}
	return endpoint{c: c, base: strings.TrimRight(baseURL, "/")}
}

// searchTerms is a search's query as it is sent (one line, no control
// characters) and how many results to ask for (limit, or def when the
// caller set none); ok is false when nothing is left to ask.
func searchTerms(query string, limit, def int) (q string, n int, ok bool) {
	q = textkit.CleanLine(query)
	if limit <= 0 {
		limit = def
	}
	return q, limit, q != ""
}
