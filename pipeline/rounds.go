package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/textkit"
)

// RoundSummary is what one round of research did (`sessions show --json`
// "rounds", the report's method note).
type RoundSummary struct {
	Round    int      `json:"round"`
	Queries  []string `json:"queries"`  // the queries run
	Chased   []string `json:"chased"`   // sources whose references and citing works were followed
	Found    int      `json:"found"`    // new candidates
	Read     int      `json:"read"`     // new sources read
	Analysed int      `json:"analysed"` // new sources analysed
	Missing  []string `json:"missing"`  // slots still open after the round
	// Missing0 are the slots the round set out to fill.
	Missing0 []string `json:"looked_for,omitempty"`
}

// Citation chasing bounds (per sub-question and round).
const (
	chaseSources = 3  // the best analysed sources whose links are followed
	chaseLinks   = 50 // references, and citing works, asked per source
)

// followUpRounds is how many rounds may follow the first: the depth's, or
// --rounds.
func (o *orchestrator) followUpRounds() int {
	if o.opt.Rounds != nil {
		return max(0, *o.opt.Rounds)
	}
	return o.opt.DepthRow().FollowUpRounds
}

// roundPlan is what a later round does for one sub-question.
type roundPlan struct {
	sq      SubQuestion
	missing []string
	queries []string
	// chase, when not nil, are the sources whose citations are followed
	// (an update's cited sources) instead of the round's best analysed;
	// quota, when set, how many of the candidates may be read.
	chase []string
	quota int
	// citingOnly follows only the works citing the chased sources, not
	// their references: an update looks for what appeared since, and a
	// source's references are older than it.
	citingOnly bool
}

// rounds runs the first round, then reflects and runs follow-up rounds
// while something is missing, a round adds analysed sources, and the round
// cap and budget allow.
func (f *gather) rounds(ctx context.Context) error {
	o := f.o
	last := 1 + o.followUpRounds()
	var next []roundPlan
	for round := 1; round <= last; round++ {
		f.round = round
		f.mu.Lock()
		found0, read0, analysed0 := len(f.distinct), len(f.claimed), f.counts.analysed
		f.mu.Unlock()
		sum := RoundSummary{Round: round, Queries: []string{}, Chased: []string{}, Missing: []string{}}
		research := f.researchAll
		if round == 1 {
			for _, sq := range o.st.Plan.SubQuestions {
				sum.Queries = append(sum.Queries, sq.Queries.tiers()...)
			}
		} else {
			var missing []string
			for _, p := range next {
				sum.Queries = append(sum.Queries, p.queries...)
				missing = append(missing, p.missing...)
			}
			sum.Missing0 = dedupe(missing)
			o.emit(Event{Type: RoundStarted, Stage: StageResearch, Count: round,
				Message: fmt.Sprintf("round %d of %d — missing: %s", round, last, orNone(sum.Missing0))})
			f.runCap += o.plan.Include / 2
			plans := next
			research = func(ctx context.Context) error {
				chased, err := f.researchLater(ctx, round, plans)
				sum.Chased = append(sum.Chased, chased...)
				return err
			}
		}
		if err := f.runRound(ctx, research); err != nil {
			return err
		}
		f.mu.Lock()
		sum.Found, sum.Read, sum.Analysed = len(f.distinct)-found0, len(f.claimed)-read0, f.counts.analysed-analysed0
		f.mu.Unlock()
		gaps := f.unfilled()
		for _, sq := range o.st.Plan.SubQuestions {
			sum.Missing = append(sum.Missing, gaps[sq.ID]...)
		}
		sum.Missing = dedupe(sum.Missing)
		f.summaries = append(f.summaries, sum)
		if round > 1 && sum.Analysed == 0 {
			break // the round added nothing: more of the same won't either
		}
		if round == last || o.meter.exhausted() || o.cut.passed() || o.overHalfTime() {
			break // no time or budget for another round
		}
		r, err := o.reflect(ctx, round, f)
		if err != nil {
			return err
		}
		next = next[:0]
		for _, s := range r.SubQuestions {
			for _, q := range s.Queries {
				f.markRun(q) // also when the reflection was restored
			}
			for _, sq := range o.st.Plan.SubQuestions {
				if sq.ID == s.ID {
					next = append(next, roundPlan{sq: sq, missing: s.Missing, queries: s.Queries})
				}
			}
		}
		if len(next) == 0 {
			break
		}
	}
	return nil
}

// researchLater is a follow-up round's research: per sub-question, the
// reflection's new queries, and the references and citing works of its
// best analysed sources. Only works never found before are candidates;
// they are ranked like the first round's and the best sent to be read. A
// failing API costs its own results, never the round.
func (f *gather) researchLater(ctx context.Context, round int, plans []roundPlan) ([]string, error) {
	o := f.o
	var chasedMu sync.Mutex
	var chased []string
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(o.engine.workers())
	sqs := make([]SubQuestion, len(plans))
	for i, p := range plans {
		sqs[i] = p.sq
	}
	f.expectScreens(sqs)
	for _, p := range plans {
		g.Go(func() error {
			defer f.screenArrived(p.sq.ID) // a search that ends without a screen
			name := fmt.Sprintf("research/r%d/%s", round, p.sq.ID)
			var unit researchUnit
			if ok, err := o.loadCheckpoint(name, &unit); err != nil {
				return err
			} else if ok {
				f.mu.Lock()
				for _, k := range unit.Chased {
					f.chased[k] = true
				}
				f.mu.Unlock()
				chasedMu.Lock()
				chased = append(chased, unit.Chased...)
				chasedMu.Unlock()
				f.meetAgain(unit.Met)
				return f.apply(gctx, p.sq, unit, true)
			}
			agent := fmt.Sprintf("researcher %s (round %d)", p.sq.ID, round)
			if o.follow != nil && o.follow.Update > 0 {
				agent = fmt.Sprintf("researcher %s (update %d)", p.sq.ID, o.follow.Update)
			}
			a := o.startAgent(StageResearch, agent, "missing: "+orNone(p.missing))
			var recs []search.Record
			var origins []string
			for _, q := range p.queries {
				for _, r := range o.searchOnce(gctx, a, q, func(src string, err error) { a.warn("%s failed: %s", src, shortErr(err)) }) {
					recs, origins = append(recs, r), append(origins, "query: "+q)
				}
			}
			var keys []string
			toChase := p.chase
			if toChase == nil {
				toChase = f.bestAnalysed(p.sq.ID, chaseSources)
			}
			for _, key := range toChase {
				got, asked := o.chase(gctx, a, f.reg.get(key), p.citingOnly)
				if asked {
					keys = append(keys, key)
				}
				for _, r := range got {
					recs, origins = append(recs, r.rec), append(origins, r.origin)
				}
			}
			if gctx.Err() != nil {
				return gctx.Err()
			}
			identified := identifiedBy(recs, origins, round)
			var met []metWork
			recs, origins, met = f.unseen(recs, origins)
			quota := max(2, f.share/2)
			if p.quota > 0 {
				quota = p.quota
			}
			unit = f.rank(gctx, a, p.sq, recs, origins, quota)
			unit.Chased, unit.Identified, unit.Met = keys, identified, met
			if err := o.checkpoint(name, unit); err != nil {
				return err
			}
			chasedMu.Lock()
			chased = append(chased, keys...)
			chasedMu.Unlock()
			if err := f.apply(gctx, p.sq, unit, false); err != nil {
				return err
			}
			a.finish(fmt.Sprintf("%d new candidates (%d links followed from %d sources)", len(unit.Candidates), countPrefix(origins, "reference of", "cites"), len(keys)))
			return nil
		})
	}
	err := g.Wait()
	if err == nil {
		err = f.fill(ctx)
	}
	sort.Strings(chased)
	return dedupe(chased), err
}

// searchOnce runs one query on every chosen source (no tier widening).
func (o *orchestrator) searchOnce(ctx context.Context, a *agentCall, q string, onFail func(string, error)) []search.Record {
	sq := SubQuestion{Queries: Queries{Strict: q}}
	return o.searchSources(ctx, a, sq, onFail)
}

type chasedRecord struct {
	rec    search.Record
	origin string
}

// chase follows rec's references and citing works through every chosen
// source that can; asked is false when none could (no identifier).
func (o *orchestrator) chase(ctx context.Context, a *agentCall, rec search.Record, citingOnly bool) (out []chasedRecord, asked bool) {
	for _, name := range o.st.Plan.Sources {
		cg, ok := o.engine.Sources[name].(search.CitationGraph)
		if !ok {
			continue
		}
		if !citingOnly {
			refs, err := cg.References(ctx, rec, chaseLinks)
			asked = asked || !errors.Is(err, search.ErrNoGraphID)
			if err != nil && !errors.Is(err, search.ErrNoGraphID) && ctx.Err() == nil {
				a.warn("%s: the references of %q could not be followed: %s", name, textkit.Clip(rec.Title, 50), shortErr(err))
			}
			for _, r := range refs {
				out = append(out, chasedRecord{r, "reference of " + rec.Key})
			}
		}
		cites, err := cg.CitedBy(ctx, rec, chaseLinks)
		asked = asked || !errors.Is(err, search.ErrNoGraphID)
		if err != nil && !errors.Is(err, search.ErrNoGraphID) && ctx.Err() == nil {
			a.warn("%s: the works citing %q could not be followed: %s", name, textkit.Clip(rec.Title, 50), shortErr(err))
		}
		for _, r := range cites {
			out = append(out, chasedRecord{r, "cites " + rec.Key})
		}
	}
	return out, asked
}

// bestAnalysed are a sub-question's n best analysed sources not chased
// before, by the analyst's confidence; they are marked chased.
func (f *gather) bestAnalysed(subq string, n int) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var keys []string
	for _, k := range f.bySubQ[subq] {
		if an, ok := f.analyses[k]; ok && !an.Degraded && !f.chased[k] {
			keys = append(keys, k)
		}
	}
	sort.SliceStable(keys, func(i, j int) bool { return f.analyses[keys[i]].Confidence > f.analyses[keys[j]].Confidence })
	keys = keys[:min(n, len(keys))]
	for _, k := range keys {
		f.chased[k] = true
	}
	return keys
}

// unseen drops works found before (in any round or sub-question). In an
// update it also returns the works this search met first (met), so a
// resumed update counts them again from the unit's checkpoint.
func (f *gather) unseen(recs []search.Record, origins []string) ([]search.Record, []string, []metWork) {
	var r2 []search.Record
	var o2 []string
	var met []metWork
	for i, r := range recs {
		if f.known != nil {
			// An update: every new work is ranked for every sub-question
			// that finds it (another one ranking it first must not hide
			// it); what is known is the session's, not this round's.
			known, first := f.knownBefore(r)
			if first {
				met = append(met, metWork{IDs: search.WorkIDs(r), Known: known})
			}
			if !known {
				f.reg.add(r)
				r2, o2 = append(r2, r), append(o2, origins[i])
			}
			continue
		}
		key, _ := f.reg.add(r)
		f.mu.Lock()
		seen := f.distinct[key]
		f.mu.Unlock()
		if !seen {
			r2, o2 = append(r2, r), append(o2, origins[i])
		}
	}
	return r2, o2, met
}

// metWork is a work an update's search met first: its identifiers, and
// whether the session knew it.
type metWork struct {
	IDs   []string `json:"ids"`
	Known bool     `json:"known,omitempty"`
}

// meetAgain counts the works a restored research unit met, as knownBefore
// counted them when it ran.
func (f *gather) meetAgain(met []metWork) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, m := range met {
		dup := false
		for _, id := range m.IDs {
			if _, ok := f.seen[id]; ok {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		for _, id := range m.IDs {
			f.seen[id] = ""
		}
		f.seenN++
		if m.Known {
			f.knownSeen++
		}
	}
}

func countPrefix(ss []string, prefixes ...string) int {
	n := 0
	for _, s := range ss {
		for _, p := range prefixes {
			if strings.HasPrefix(s, p) {
				n++
				break
			}
		}
	}
	return n
}

// knownBefore says whether an update's search result is a work the
// session met before, and whether this is the update's first meeting with
// it; a published version of a cited work is kept aside, to merge its
// metadata into the cited record (same number, no reading).
func (f *gather) knownBefore(r search.Record) (known, first bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	key, known := f.known.match(r)
	if _, dup := f.seen.match(r); !dup {
		first = true
		f.seen.add(r)
		f.seenN++
		if known {
			f.knownSeen++
		}
	}
	if known && f.cited[key] && isPublished(r) {
		if f.published == nil {
			f.published = map[string]search.Record{}
		}
		f.published[key] = r
	}
	return known, first
}
