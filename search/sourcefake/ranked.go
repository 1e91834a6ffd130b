package sourcefake

import (
	"sync"

	"github.com/researchtui/researchtui/search/replay"
)

// Pools are the recorded Semantic Scholar answers a Server can search
// (Options.Pool) as the real API searches (search/replay's Pool: ranked by
// the query, a page at a time): each a real response of 100 papers
// (testdata/ATTRIBUTION.md).
var Pools = map[string]string{
	"turing":        "semanticscholar/paper-search-turing-allfields-limit100.json",
	"turing-2":      "semanticscholar/paper-search-turing-allfields-offset100-limit100.json",
	"edit-distance": "semanticscholar/paper-search-edit-distance-allfields-limit100.json",
	"kubernetes":    "semanticscholar/paper-search-kubernetes-allfields-limit100.json",
}

var (
	poolsMu sync.Mutex
	pools   = map[string]*replay.Pool{}
)

// pool is the named pool, parsed once.
func pool(name string) *replay.Pool {
	poolsMu.Lock()
	defer poolsMu.Unlock()
	if p := pools[name]; p != nil {
		return p
	}
	p, err := replay.NewPool(body(Pools[name]))
	if err != nil {
		panic("sourcefake: pool " + name + ": " + err.Error())
	}
	pools[name] = p
	return p
}

// PoolBody is the recorded answer a pool is made of (a key of Pools).
func PoolBody(name string) []byte { return body(Pools[name]) }
