package pipeline

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/researchtui/researchtui/llm"
)

// Looking again. A screen that sees a title and 20 words errs now and
// then, and each error that decides costs: a namesake read and cited, or
// an on-topic work left out. So every verdict that decides is judged a
// second time, with three times as much of each abstract
// (screenRecheckWords), in the first look's conversation (the model's
// prompt cache holds it; the candidates keep their numbers), for every
// sub-question of the first: each on-topic verdict (what
// may be read), and each off-topic verdict the words would have read (at
// or above the sub-question's floor). Where the two looks disagree, a
// third look decides: the verdict is the majority. Off-topic verdicts the
// words agree with are not asked again: they decide nothing the words
// would have chosen. A first look that rejected nothing is not looked at
// again: it showed no judgement to confirm. The words choose nothing here: they only say which
// off-topic verdicts are worth a second look.

// screenRecheckWords is how much of each abstract a later look sees.
const screenRecheckWords = 60

// screenLookPrompt opens a later look: it continues the first look's
// conversation, by the same numbers.
const screenLookPrompt = `Take a %s look at these candidates, with more of each abstract, and answer the same way, about these candidates only: numbers only, the shorter list.

`

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
func (f *gather) recheck(ctx context.Context, a *agentCall, conv *screenConv, vs []screenVerdict) {
	batch := conv.batch
	first := make([]map[int]bool, len(vs))
	for i := range vs {
		first[i] = maps.Clone(vs[i].on)
	}
	n := f.look(ctx, a, conv, vs, "second", func(ji int, j *screenJob) []int {
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
	f.look(ctx, a, conv, vs, "third", func(ji int, j *screenJob) []int {
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

// look asks the model again, in the first look's conversation and by its
// numbers, about the places pick chooses in each job (0-based), each with
// more of its abstract, and replaces their verdicts with the answer; it
// returns how many of each job's verdicts it judged.
func (f *gather) look(ctx context.Context, a *agentCall, conv *screenConv, vs []screenVerdict, nth string, pick func(int, *screenJob) []int) []int {
	judged := make([]int, len(conv.batch))
	if !vs[0].ok || ctx.Err() != nil {
		return judged
	}
	want := map[screenPlace]bool{}
	for ji, j := range conv.batch {
		for _, k := range pick(ji, j) {
			want[screenPlace{ji, k + 1}] = true
		}
	}
	var asked []int
	var b strings.Builder
	fmt.Fprintf(&b, screenLookPrompt, nth)
	for n, ps := range conv.places {
		for _, p := range ps {
			if want[p] {
				asked = append(asked, n+1)
				fmt.Fprintf(&b, "[%d] %s\n", n+1, conv.batch[p.job].long[p.n-1])
				break
			}
		}
	}
	if len(asked) == 0 {
		return judged
	}
	conv.msgs = append(conv.msgs, llm.Message{Role: "user", Content: b.String()})
	verdict, why, usage, ok := f.askScreen(ctx, a, conv, asked)
	vs[0].usage.PromptTokens += usage.PromptTokens
	vs[0].usage.CompletionTokens += usage.CompletionTokens
	vs[0].calls++
	if !ok {
		return judged // the earlier verdicts stand
	}
	for n, v := range verdict {
		for _, p := range conv.places[n-1] {
			jv := &vs[p.job]
			delete(jv.on, p.n)
			delete(jv.off, p.n)
			if v == 1 {
				jv.on[p.n] = true
			} else {
				jv.off[p.n] = "on a " + nth + " look"
				if w := why[n]; w != "" && w != notNamed && w != "named off topic" {
					jv.off[p.n] += ", " + w
				}
			}
			judged[p.job]++
		}
	}
	return judged
}
