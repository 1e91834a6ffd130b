package pipeline

import (
	"context"
	"maps"
)

// Looking again. A screen that sees a title and 20 words errs now and
// then, and each error that decides costs: a namesake read and cited, or
// an on-topic work left out. So every verdict that decides is judged a
// second time, with twice as much of each abstract (screenRecheckWords), in one
// call for every sub-question of the first: each on-topic verdict (what
// may be read), and each off-topic verdict the words would have read (at
// or above the sub-question's floor). Where the two looks disagree, a
// third look decides: the verdict is the majority. Off-topic verdicts the
// words agree with are not asked again: they decide nothing the words
// would have chosen. A first look that rejected nothing is not looked at
// again: it showed no judgement to confirm. The words choose nothing here: they only say which
// off-topic verdicts are worth a second look.

// screenRecheckWords is how much of each abstract a later look sees.
const screenRecheckWords = 60

// screenSystemLook is the prompt of the nth look (second, third).
func screenSystemLook(nth string) string {
	return `You are a relevance screening agent for a research assistant, taking a ` + nth + ` look. You get research sub-questions, each with candidate papers (title and the start of the abstract) whose relevance decides what is read, numbered across the lists. Read each carefully and say which are on topic for their own sub-question. ` + screenRules
}

// decisive are the places (0-based) of a job's candidates whose verdict
// decides: on topic, or off topic though the words would have read it.
// Every on-topic verdict is confirmed, not only those the budget reaches
// first: the fill and later rounds read further down the list.
func (j *screenJob) decisive(v screenVerdict) []int {
	var out []int
	for k := range j.lines {
		if k >= len(j.rel) {
			break
		}
		if _, off := v.off[k+1]; v.on[k+1] || (off && j.rel[k] >= j.floor) {
			out = append(out, k)
		}
	}
	return out
}

// recheck takes the second look at the batch's decisive verdicts and a
// third where the two disagree, writing the majority into vs (the calls'
// usage into vs[0]).
func (f *gather) recheck(ctx context.Context, a *agentCall, batch []*screenJob, vs []screenVerdict) {
	first := make([]map[int]bool, len(vs))
	for i := range vs {
		first[i] = maps.Clone(vs[i].on)
	}
	n := f.look(ctx, a, batch, vs, "second", func(ji int, j *screenJob) []int {
		// A first look that rejected nothing showed no judgement to
		// confirm: a screen that cannot judge falls back to the words
		// (screenFallback), and a pool all on topic needs no second look.
		if j.floor <= 0 || len(vs[ji].off) == 0 || f.o.screenBlind.Load() {
			return nil
		}
		return j.decisive(vs[ji])
	})
	for i := range vs {
		vs[i].rechecked += n[i]
	}
	f.look(ctx, a, batch, vs, "third", func(ji int, j *screenJob) []int {
		var ks []int
		for k := range j.lines {
			if _, judged := vs[ji].off[k+1]; (judged || vs[ji].on[k+1]) && vs[ji].on[k+1] != first[ji][k+1] {
				ks = append(ks, k)
			}
		}
		return ks
	})
	for i := range vs {
		for k := range batch[i].lines {
			if vs[i].on[k+1] != first[i][k+1] {
				vs[i].changed++
			}
		}
	}
}

// look asks the model again about the places pick chooses in each job
// and replaces their verdicts with its answer; it returns how many of
// each job's verdicts it judged.
func (f *gather) look(ctx context.Context, a *agentCall, batch []*screenJob, vs []screenVerdict, nth string, pick func(int, *screenJob) []int) []int {
	judged := make([]int, len(batch))
	var jobs []*screenJob
	var from [][]int // per job of this look: the places in its first job
	var of []int     // per job of this look: its first job
	for ji, j := range batch {
		if !vs[ji].ok {
			continue
		}
		ks := pick(ji, j)
		if len(ks) == 0 {
			continue
		}
		r := &screenJob{sq: j.sq, look: nth}
		for _, k := range ks {
			r.lines = append(r.lines, j.long[k])
			r.keys = append(r.keys, j.keys[k])
		}
		jobs, from, of = append(jobs, r), append(from, ks), append(of, ji)
	}
	if len(jobs) == 0 || ctx.Err() != nil {
		return judged
	}
	again := f.screenCall(ctx, a, jobs)
	vs[0].usage.PromptTokens += again[0].usage.PromptTokens
	vs[0].usage.CompletionTokens += again[0].usage.CompletionTokens
	vs[0].calls++
	for ri, r := range again {
		if !r.ok {
			continue
		}
		v := &vs[of[ri]]
		for n, k := range from[ri] {
			why, off := r.off[n+1]
			if !off && !r.on[n+1] {
				continue // not judged this time: the earlier verdict stands
			}
			delete(v.on, k+1)
			delete(v.off, k+1)
			if off {
				v.off[k+1] = "on a " + nth + " look"
				if why != "" && why != notNamed {
					v.off[k+1] += ", " + why
				}
			} else {
				v.on[k+1] = true
			}
			judged[of[ri]]++
		}
	}
	return judged
}
