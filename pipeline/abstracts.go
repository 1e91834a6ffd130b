package pipeline

import (
	"context"

	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/textkit"
)

// Works known by title only (a reference or citing work a source listed
// without its abstract, a search result whose source withholds it) are
// never read: a title is not evidence. Before a sub-question's candidates
// are judged, those works are looked up in one batch request at a source
// that can (search.AbstractFinder: Semantic Scholar's /paper/batch, when
// the run searches it), so citation chasing adds evidence and not only
// names. Works that source itself listed are not asked again (it answered
// without an abstract already), and no work is asked twice in a run.

// lookUpAbstracts returns pool with the abstracts found merged in.
func (f *gather) lookUpAbstracts(ctx context.Context, a *agentCall, pool []search.Record) []search.Record {
	o := f.o
	var finder search.AbstractFinder
	var name string
	for _, n := range o.st.Plan.Sources {
		if af, ok := o.engine.Sources[n].(search.AbstractFinder); ok {
			finder, name = af, n
			break
		}
	}
	if finder == nil {
		return pool
	}
	var ask []search.Record
	var at []int
	f.mu.Lock()
	if f.lookedUp == nil {
		f.lookedUp = map[string]bool{}
	}
	for i, r := range pool {
		if hasText(r) || r.Source == name || f.lookedUp[r.Key] {
			continue
		}
		f.lookedUp[r.Key] = true
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
	f.abstractsAsked += len(ask)
	f.abstractsFound += got
	f.mu.Unlock()
	return out
}
