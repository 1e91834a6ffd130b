package pipeline

import (
	"context"

	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/textkit"
)

// Works known by title only (a reference or citing work a source listed
// without its abstract, a search result whose source withholds it) are
// never read: a title is not evidence. Before a sub-question's candidates
// are judged, those works are looked up in one batch request at each
// source of the run that can (search.AbstractFinder: Semantic Scholar's
// /paper/batch, OpenAlex by DOI), so citation chasing adds evidence and
// not only names. Works a source itself listed are not asked of it again
// (it answered without an abstract already), and no source is asked about
// a work twice in a run.

// lookUpAbstracts returns pool with the abstracts found merged in: each
// source of the run that can look works up (Semantic Scholar by its batch
// endpoint, OpenAlex by DOI) is asked in turn for those still without one.
func (f *gather) lookUpAbstracts(ctx context.Context, a *agentCall, pool []search.Record) []search.Record {
	for _, name := range f.o.st.Plan.Sources {
		if af, ok := f.o.engine.Sources[name].(search.AbstractFinder); ok {
			pool = f.lookUpAt(ctx, a, name, af, pool)
		}
	}
	return pool
}

// lookUpAt asks one finder for the pool's works known by title only.
func (f *gather) lookUpAt(ctx context.Context, a *agentCall, name string, finder search.AbstractFinder, pool []search.Record) []search.Record {
	var ask []search.Record
	var at []int
	f.mu.Lock()
	if f.lookedUp == nil {
		f.lookedUp = map[string]bool{}
	}
	for i, r := range pool {
		if hasText(r) || r.Source == name || f.lookedUp[name+"|"+r.Key] {
			continue
		}
		f.lookedUp[name+"|"+r.Key] = true
		if !f.lookedUp[r.Key] { // counted once, however many sources are asked
			f.lookedUp[r.Key] = true
			f.abstractsAsked++
		}
		ask, at = append(ask, r), append(at, i)
	}
	f.mu.Unlock()
	if len(ask) == 0 {
		return pool
	}
	found, err := finder.FindAbstracts(ctx, ask)
	if err != nil && ctx.Err() == nil {
		a.warn("looking up the abstracts of %s known by title only at %s failed: %s", textkit.Plural(len(ask), "work", "works"), name, shortErr(err))
	}
	out := append([]search.Record(nil), pool...)
	got := 0
	for k, r := range found {
		if k >= len(at) || r.Abstract == "" {
			continue
		}
		key, _ := f.reg.add(r) // shares an identifier with the asked work: merged into it
		if key != ask[k].Key {
			continue // it names another known work too: leave both as they were
		}
		out[at[k]] = f.reg.get(key)
		got++
	}
	f.mu.Lock()
	f.abstractsFound += got
	f.mu.Unlock()
	return out
}
