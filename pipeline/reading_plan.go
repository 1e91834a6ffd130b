package pipeline

import (
	"context"
	"fmt"
	"strings"

	"regexp"
	"sort"

	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/search"
)

// The reading plan. A run reads a number of sources for all its
// sub-questions together (runopts.DepthPlan.Include: quick 6, standard 12, deep
// 24, a review every candidate the screen judges on topic, up to
// reviewInclude), not a number per sub-question:
//
//   - As soon as a sub-question is ranked, it chooses up to its share of
//     the target (firstShare), so reading starts before the other searches
//     end. A candidate another sub-question already reads counts for this
//     one too without taking one of its places (selectCandidates): an
//     overlapping sub-question takes its next best unread candidate.
//   - When every sub-question of the round has been searched, the fill
//     gives what the shares left (a sub-question with few good candidates,
//     candidates shared by several) to the best unread candidates of all
//     sub-questions, taken in turn (the screen judged them already).
//   - Later rounds add half the target again to the same plan.
//
// Only candidates the screen judged on topic are ever chosen
// (reading_plan.go); the floors choose only when the screen is off or cannot
// judge (floorCalibration keeps them where they were when each
// sub-question read a fixed few).

// firstShare is how many sources a sub-question's own search may choose:
// an even share of the run's target.
func firstShare(include, subqs int) int {
	if subqs <= 0 {
		return include
	}
	return max(2, (include+subqs-1)/subqs)
}

// floorCalibration is how many of a sub-question's best candidates its
// relevance floor is calibrated on: as many as a sub-question read before
// the reading plan (the depth's Calibrate at most, and its Include shared
// out). Calibrating on more would lower the mean and so the floor.
func floorCalibration(p runopts.DepthPlan, subqs int) int {
	if subqs <= 0 {
		return p.Calibrate
	}
	return max(2, min(p.Calibrate, (p.Include+subqs-1)/subqs))
}

// isClaimed says whether a source is already chosen to be read.
func (f *gather) isClaimed(key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.claimed[key]
}

// fillUnit is the checkpoint of one round's fill, so a resume chooses the
// same sources.
type fillUnit struct {
	Picks []fillPick `json:"picks"`
}

// fillPick is one candidate the fill chose for a sub-question, with the
// screen's verdict ("on topic", "" when not screened).
type fillPick struct {
	SubQ   string `json:"subq"`
	Key    string `json:"key"`
	Screen string `json:"screen,omitempty"`
}

// fill tops the round's reading up to the run's target (see above).
func (f *gather) fill(ctx context.Context) error {
	o := f.o
	name := fmt.Sprintf("research/fill/r%d", f.round)
	var unit fillUnit
	ok, err := o.loadCheckpoint(name, &unit)
	if err != nil {
		return err
	}
	if !ok {
		unit = f.planFill()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := o.checkpoint(name, unit); err != nil {
			return err
		}
	}
	return f.applyFill(ctx, unit)
}

// fillQueues are, per sub-question in plan order, the round's candidates
// that passed every bar but found no place, best first.
func (f *gather) fillQueues() [][]Candidate {
	f.mu.Lock()
	defer f.mu.Unlock()
	subqs := f.o.st.Plan.SubQuestions
	queues := make([][]Candidate, len(subqs))
	for i, sq := range subqs {
		for _, c := range f.candidates[sq.ID] {
			if c.Round == f.round && c.Reason == reasonQuota && !f.claimed[c.Key] {
				queues[i] = append(queues[i], c)
			}
		}
	}
	return queues
}

// planFill chooses the fill's candidates, each sub-question's next best
// in turn; the screen has judged them already, with their sub-question's
// shortlist.
func (f *gather) planFill() fillUnit {
	f.mu.Lock()
	free := f.runCap - len(f.claimed)
	f.mu.Unlock()
	queues := f.fillQueues()
	var unit fillUnit
	var chosen []Candidate
	taken := map[string]bool{}
	for free > 0 {
		progress := false
		for i := range queues {
			for len(queues[i]) > 0 && taken[queues[i][0].Key] {
				queues[i] = queues[i][1:]
			}
			if free == 0 || len(queues[i]) == 0 {
				continue
			}
			c := queues[i][0]
			queues[i] = queues[i][1:]
			taken[c.Key] = true
			c.Read = true // what the screen judges
			chosen = append(chosen, c)
			free--
			progress = true
		}
		if !progress {
			break
		}
	}
	for _, c := range chosen {
		unit.Picks = append(unit.Picks, fillPick{SubQ: c.SubQ, Key: c.Key, Screen: c.Screen})
	}
	return unit
}

// applyFill takes the fill's choices into the run and sends them to be
// read; a candidate that another sub-question now reads is linked to every
// sub-question it passed for.
func (f *gather) applyFill(ctx context.Context, unit fillUnit) error {
	o := f.o
	send := map[string][]search.Record{}
	f.mu.Lock()
	for _, p := range unit.Picks {
		c := f.candidateOf(p.SubQ, p.Key)
		if c == nil {
			continue
		}
		if p.Screen != "" {
			c.Screen = p.Screen
		}
		if strings.HasPrefix(p.Screen, screenOffTopic) {
			c.Read, c.Reason = false, reasonOffTopic+" ("+offTopicWhy(p.Screen)+")"
			continue
		}
		c.Read = true
		if f.claimed[c.Key] {
			c.Reason = reasonDuplicate
		} else {
			c.Reason = reasonPlan
			f.claimed[c.Key] = true
			f.readOrder = append(f.readOrder, c.Key)
			send[p.SubQ] = append(send[p.SubQ], f.reg.get(c.Key))
		}
		f.bySubQ[p.SubQ] = append(f.bySubQ[p.SubQ], c.Key)
	}
	for _, sq := range o.st.Plan.SubQuestions {
		cs := f.candidates[sq.ID]
		for i := range cs {
			if c := &cs[i]; c.Round == f.round && c.Reason == reasonQuota && f.claimed[c.Key] {
				c.Read, c.Reason = true, reasonDuplicate
				f.bySubQ[sq.ID] = append(f.bySubQ[sq.ID], c.Key)
			}
		}
	}
	f.mu.Unlock()
	for _, sq := range o.st.Plan.SubQuestions {
		if len(send[sq.ID]) == 0 {
			continue
		}
		if err := f.send(ctx, sq, f.candidatesFor(sq.ID), send[sq.ID]); err != nil {
			return err
		}
	}
	return nil
}

// candidateOf is the round's candidate of a sub-question by key (f.mu
// held).
func (f *gather) candidateOf(subq, key string) *Candidate {
	cs := f.candidates[subq]
	for i := range cs {
		if cs[i].Key == key && cs[i].Round == f.round {
			return &cs[i]
		}
	}
	return nil
}

// candidatesFor is a copy of a sub-question's candidates.
func (f *gather) candidatesFor(subq string) []Candidate {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Candidate(nil), f.candidates[subq]...)
}

// Who judges relevance (issue 44). Word overlap cannot tell "Turing test"
// from "software testing", so it no longer decides what is read. Each
// sub-question's candidates are ordered by ranking, and every readable
// one above a low absolute floor, up to the depth's shortlist, goes to the
// model's screen (screening.go); what is read is chosen among those the
// screen judged on topic, best ranked first (chooseByVerdict). Ranking
// only orders, and drops what is clearly unrelated: no word of the query
// and a similarity far below the pool's best. The relative floors and
// near-best cuts (selectCandidates) decide only when the screen is off or
// cannot judge (screenFallback).

const (
	// lowFloor is the absolute relevance a candidate needs to be screened
	// at all: a few words of the query, or some similarity.
	lowFloor = 0.08
	// unrelatedShare: a candidate with no word of the query whose
	// similarity is under this share of the pool's best is not screened.
	unrelatedShare = 0.6
)

// shortlist orders candidates best first and returns the places of those
// the screen judges: readable, above lowFloor, not clearly unrelated, at
// most limit. The rest get the reason they were passed over; structured
// data is always read (facts, not prose to rank).
func shortlist(cands []Candidate, recs map[string]search.Record, limit int) []int {
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].Score > cands[j].Score })
	bestSem := 0.0
	for _, c := range cands {
		bestSem = max(bestSem, c.Semantic)
	}
	var out []int
	for i := range cands {
		c := &cands[i]
		r, known := recs[c.Key]
		switch {
		case r.HasData():
			c.Read, c.Reason = true, reasonStructured
		case known && !hasText(r) && c.Origin != originKnowledge:
			c.Reason = reasonNoText
		case notAWork(c.Title):
			c.Reason = reasonNotAWork
		case c.Relevance < lowFloor:
			c.Reason = belowFloor(c.Relevance, lowFloor)
		case c.Coverage == 0 && c.Phrase == 0 && c.Semantic < unrelatedShare*bestSem:
			c.Reason = reasonUnrelated
		case len(out) >= limit:
			c.Reason = reasonPastCap
		default:
			c.Read, c.Reason = false, ""
			out = append(out, i)
		}
	}
	return out
}

// chooseByVerdict marks what to read among the shortlisted candidates the
// screen judged on topic, best ranked first: at most quota of its own; one
// another sub-question already reads (claimed, may be nil) counts too
// without taking a place. On-topic candidates left for want of room keep
// reasonQuota, for the reading plan's fill (reading_plan.go).
func chooseByVerdict(cands []Candidate, idx []int, quota int, claimed func(string) bool) {
	taken := 0
	for _, i := range idx {
		c := &cands[i]
		switch {
		case c.Screen == screenOnTopic && claimed != nil && claimed(c.Key):
			c.Read, c.Reason = true, reasonDuplicate
		case c.Screen == screenOnTopic && taken < quota:
			c.Read, c.Reason = true, reasonRead
			taken++
		case c.Screen == screenOnTopic:
			c.Reason = reasonQuota
		case c.Screen == "":
			c.Reason = reasonUnjudged
		default:
			c.Reason = reasonOffTopic + " (" + offTopicWhy(c.Screen) + ")"
		}
	}
}

// frontMatter are titles of records that index a volume rather than
// report a study: a table of contents, an index, a preface.
var frontMatter = regexp.MustCompile(`(?i)^\s*(front matter|back matter|(table of )?contents|(author |subject )?index|preface|foreword|editorial board|title page|copyright( page)?|masthead|cover( page)?|list of (reviewers|referees|contributors)|acknowledge?ments?|(issue )?information( for authors)?)\s*[.:]?\s*$`)

// wholeVolume are titles of a proceedings volume itself: "Algorithms --
// ESA 2003 : 11th Annual European Symposium … : proceedings",
// "Proceedings of the 17th International Symposium on …".
var wholeVolume = regexp.MustCompile(`(?i)(^\s*proceedings of\b|:\s*proceedings\s*\.?\s*$|\bproceedings\s*\.?\s*$)`)

// notAWork says a candidate's title names front matter or a whole
// proceedings volume, which a search returns beside the papers but no
// report should read or cite (issue 46: ISAAC 2006's and ESA 2002's
// tables of contents were cited).
func notAWork(title string) bool {
	return frontMatter.MatchString(title) || wholeVolume.MatchString(title)
}
