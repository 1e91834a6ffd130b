package pipeline

import (
	"context"
	"fmt"
	"strings"

	"github.com/researchtui/researchtui/search"
)

// The reading plan. A run reads a number of sources for all its
// sub-questions together (depthPlan.Include: quick 6, standard 12, deep
// 24, a review every candidate that passes, up to reviewInclude), not a
// number per sub-question:
//
//   - As soon as a sub-question is ranked, it chooses up to its share of
//     the target (firstShare), so reading starts before the other searches
//     end. A candidate another sub-question already reads counts for this
//     one too without taking one of its places (selectCandidates): an
//     overlapping sub-question takes its next best unread candidate.
//   - When every sub-question of the round has been searched, the fill
//     gives what the shares left (a sub-question with few good candidates,
//     candidates shared by several) to the best unread candidates of all
//     sub-questions, taken in turn, and the screen judges them in one call.
//   - Later rounds add half the target again to the same plan.
//
// Only candidates that cleared the floors and are not far below their
// sub-question's best are ever chosen: breadth comes from reading more of
// what passes, never from a lower bar (floorCalibration keeps the floors
// where they were when each sub-question read a fixed few).

const (
	// reviewInclude bounds what a literature review includes.
	reviewInclude = 60
	// reviewSteps is a review's bound on model calls, room for its
	// analyses.
	reviewSteps = 160
)

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
// the reading plan (at most 3, 5 or 8 by depth, and the run's 5, 12 or 24
// shared out). Calibrating on more would lower the mean and so the floor.
func floorCalibration(depth string, subqs int) int {
	per, run := 5, 12
	switch depth {
	case DepthQuick:
		per, run = 3, 5
	case DepthDeep:
		per, run = 8, 24
	}
	if subqs <= 0 {
		return per
	}
	return max(2, min(per, (run+subqs-1)/subqs))
}

func (f *gather) setUnranked(n int) {
	f.mu.Lock()
	f.unranked = n
	f.mu.Unlock()
}

func (f *gather) ranked() {
	f.mu.Lock()
	f.unranked--
	f.mu.Unlock()
}

// reserve is how many of a sub-question's unplaced candidates its screen
// judges too, for the fill: the room the run's target will have once this
// sub-question's own choices (own) and the shares of those still to be
// ranked are taken, at most one share. Judging more would spend the
// screen's prompt on candidates the fill has no room for.
func (f *gather) reserve(own int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	room := f.runCap - len(f.claimed) - own - f.share*max(0, f.unranked-1)
	return max(0, min(f.share, room))
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
	Picks  []fillPick  `json:"picks"`
	Screen *screenUnit `json:"screen,omitempty"`
}

// fillPick is one candidate the fill chose for a sub-question, with the
// screen's verdict ("on topic", "off topic: …", "" when not screened).
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
		unit = f.planFill(ctx)
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
// in turn, and has the screen judge them.
func (f *gather) planFill(ctx context.Context) fillUnit {
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
	if len(chosen) == 0 {
		return unit
	}
	verdicts := f.screenFill(ctx, chosen, &unit)
	for i, c := range chosen {
		unit.Picks = append(unit.Picks, fillPick{SubQ: c.SubQ, Key: c.Key, Screen: verdicts[i]})
	}
	return unit
}

// screenFill has the screen judge the fill's candidates in one call,
// grouped by sub-question; it returns each one's verdict. The fill's
// rejections always count: its sub-questions already read something.
func (f *gather) screenFill(ctx context.Context, chosen []Candidate, unit *fillUnit) []string {
	o := f.o
	verdicts := make([]string, len(chosen))
	if o.opt.Screen == ScreenOff {
		return verdicts
	}
	type group struct {
		job *screenJob
		at  []int // places in chosen
	}
	var groups []*group
	bySubQ := map[string]*group{}
	for _, sq := range o.st.Plan.SubQuestions {
		var cands []Candidate
		var at []int
		for i, c := range chosen {
			switch {
			case c.SubQ != sq.ID:
			case c.Screen != "": // judged with its sub-question's first candidates
				verdicts[i] = c.Screen
			default:
				cands, at = append(cands, c), append(at, i)
			}
		}
		recs := map[string]search.Record{}
		for _, c := range cands {
			recs[c.Key] = f.reg.get(c.Key)
		}
		idx, lines, clear := f.screenLines(sq, cands, recs, 0)
		if len(idx) == 0 || clear {
			continue
		}
		g := &group{job: &screenJob{sq: sq, lines: lines}}
		for _, i := range idx {
			g.at = append(g.at, at[i])
			g.job.keys = append(g.job.keys, cands[i].Key)
		}
		groups = append(groups, g)
		bySubQ[sq.ID] = g
	}
	if len(groups) == 0 {
		unit.Screen = &screenUnit{Skipped: true}
		return verdicts
	}
	a := o.startAgent(StageResearch, fmt.Sprintf("reading plan (round %d)", f.round), fmt.Sprintf("screening %d more of the best candidates", len(chosen)))
	release, err := o.engine.acquireModel(ctx)
	if err != nil {
		a.finish("cancelled")
		return verdicts
	}
	a.slotHeld = true
	jobs := make([]*screenJob, len(groups))
	for i, g := range groups {
		jobs[i] = g.job
	}
	vs := f.screenCall(ctx, a, jobs)
	release()
	u := &screenUnit{PromptTokens: vs[0].usage.PromptTokens, CompletionTokens: vs[0].usage.CompletionTokens}
	for gi, g := range groups {
		u.Screened += len(g.at)
		if !vs[gi].ok {
			continue
		}
		for k, i := range g.at {
			if why, off := vs[gi].why[k+1]; off {
				if why == "" {
					why = "no reason given"
				}
				verdicts[i] = "off topic: " + why
				u.Rejected++
			} else {
				verdicts[i] = "on topic"
			}
		}
	}
	if u.Rejected == u.Screened && f.round == 1 { // a blanket rejection, as screening.go overrules it
		a.warn("the relevance screen judged all %d of the reading plan's candidates off topic; they clear the relevance floor, so they are read anyway", u.Screened)
		for i, v := range verdicts {
			if strings.HasPrefix(v, "off topic: ") {
				verdicts[i] = "off topic (overruled: the floors say it is relevant)"
			}
		}
		u.Overruled, u.Rejected = u.Rejected, 0
	}
	unit.Screen = u
	if !vs[0].ok && ctx.Err() == nil {
		a.warn("the relevance screen gave no usable answer; the reading plan's candidates are read as ranked")
	}
	a.finish(fmt.Sprintf("%d chosen, %d judged off topic", len(chosen)-u.Rejected, u.Rejected))
	return verdicts
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
		if why, off := strings.CutPrefix(p.Screen, "off topic: "); off {
			c.Read, c.Reason = false, "not read: the relevance screen judged it off topic ("+why+")"
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
	f.screened.add(unit.Screen)
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
