package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"maps"

	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/textkit"
)

// Sub-questions searched at the same time reach their screens together,
// and on one GPU each screen call would wait for the one before and pay
// its own ~0.3 s to the first token for an answer of a few tokens. So
// screens queue like short analyses (analyse_batch.go): whoever gets the
// model takes every screen waiting into one call, the candidates numbered
// across the sub-questions, and each sub-question gets back its own
// verdicts.

// screenPerCall bounds the candidates one screen call judges: about 40
// prompt tokens each (a title and 20 words), so a call stays near 3,500
// tokens, within any model's context, and its answer short.
const screenPerCall = 80

const screenRules = `Judge each candidate by what it is about, not by the words it shares with the question: another meaning of a name, another field, or a method used for something else is off topic. Answer JSON only, numbers only, naming whichever list is shorter: {"on_topic":[2,5]} when fewer are on topic (every other candidate is then off topic), or {"off_topic":[3,7]} when fewer are off topic (every other candidate is then on topic). {"on_topic":[]} says none is on topic.`

const screenSystem = `You are a relevance screening agent for a research assistant. You get one research sub-question and a numbered list of candidate papers (title and the start of the abstract). Say which are on topic for it. ` + screenRules

const screenSystemSeveral = `You are a relevance screening agent for a research assistant. You get research sub-questions, each with a list of candidate papers (title and the start of the abstract), numbered across the lists. Say which are on topic for their own sub-question. ` + screenRules

const screenSchema = `{
  "type": "object",
  "properties": {
    "on_topic": {"type": "array", "items": {"type": "integer"}},
    "off_topic": {"type": "array", "items": {"type": "integer"}}
  }
}`

// screenAnswer is the screen's answer: one of the two lists (nil when
// absent). Numbers are asked for, not reasons: a reason of a few words
// costs ~7 generated tokens a candidate, seconds a call on one GPU. A
// model that writes objects ({"n":3,"why":"GPU hardware"}) is read too,
// its reason kept.
type screenAnswer struct {
	OnTopic  *[]screenMark `json:"on_topic,omitempty"`
	OffTopic *[]screenMark `json:"off_topic,omitempty"`
}

type screenMark struct {
	N   int    `json:"n"`
	Why string `json:"why,omitempty"`
}

// UnmarshalJSON reads a number, an object, or a string: small models
// write "3" or "[3]" for 3, and sometimes a title where a number was
// asked. A string that is no number names no candidate (N 0): it is
// dropped, and a list of nothing else judges nothing (readScreenAnswer).
func (r *screenMark) UnmarshalJSON(b []byte) error {
	var n int
	if json.Unmarshal(b, &n) == nil {
		r.N = n
		return nil
	}
	var str string
	if json.Unmarshal(b, &str) == nil {
		r.N, _ = strconv.Atoi(strings.Trim(str, "[]#() "))
		return nil
	}
	type plain screenMark
	return json.Unmarshal(b, (*plain)(r))
}

// notNamed is the reason of an off-topic verdict by omission: the model
// listed the on-topic candidates and not this one.
const notNamed = "not named on topic"

// errNoList: an answer with neither list judged nothing.
var errNoList = errors.New(`the answer has neither "on_topic" nor "off_topic"`)

// screenJob is one sub-question's candidates waiting for the screen.
type screenJob struct {
	sq    SubQuestion
	lines []string // per candidate: its title, then the start of its abstract
	keys  []string // per candidate: its source key (a work listed once per call)
	// For looking again (screening_batch.go): per candidate its
	// relevance and a line with more of its abstract; the sub-question's
	// floor (0: no second look).
	rel   []float64
	long  []string
	floor float64
	taken bool // a screen call has taken it (under gather.mu)
	res   chan screenVerdict
}

// screenVerdict is what the screen said of one job's candidates, by
// 1-based place in the job; a place in neither map was not judged.
type screenVerdict struct {
	ok     bool // a usable answer
	on     map[int]bool
	off    map[int]string // with the reason
	usage  llm.Usage      // the calls', for the job that made them
	calls  int            // calls made for it, 0 when judged in another job's
	shared bool           // judged in the call another job made
	// rechecked verdicts had a second look; changed of them changed.
	rechecked, changed int
}

// screenGrace is how long a screen that has the model waits for the
// screens of sub-questions still searching. Searches of one round ask the
// same sources and end within moments of each other, and while they run
// the model has nothing else to do; waiting saves a call per sub-question.
const screenGrace = 500 * time.Millisecond

// expectScreens notes the sub-questions about to search, whose screens the
// first screen may wait for.
func (f *gather) expectScreens(sqs []SubQuestion) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.unscreened == nil {
		f.unscreened = map[string]bool{}
		f.screenBell = make(chan struct{}, 1)
	}
	for _, sq := range sqs {
		f.unscreened[sq.ID] = true
	}
}

// screenArrived says a sub-question's screen is queued, or that its
// search ended without one.
func (f *gather) screenArrived(id string) {
	f.mu.Lock()
	delete(f.unscreened, id)
	bell := f.screenBell
	f.mu.Unlock()
	if bell != nil {
		select {
		case bell <- struct{}{}:
		default:
		}
	}
}

// awaitSiblingScreens waits, holding the model, until every sub-question
// still searching has queued its screen, at most screenGrace.
func (f *gather) awaitSiblingScreens(ctx context.Context) {
	timeout := time.NewTimer(screenGrace)
	defer timeout.Stop()
	for {
		f.mu.Lock()
		waiting, bell := len(f.unscreened), f.screenBell
		f.mu.Unlock()
		if waiting == 0 || bell == nil {
			return
		}
		select {
		case <-bell:
		case <-timeout.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// screenTogether queues a job and returns its verdict, from the call it
// makes for every job waiting or from the call another job made.
func (f *gather) screenTogether(ctx context.Context, job *screenJob) screenVerdict {
	f.mu.Lock()
	f.screenQ = append(f.screenQ, job)
	f.mu.Unlock()
	f.screenArrived(job.sq.ID)
	release, err := f.o.engine.acquireModel(ctx)
	if err != nil {
		return screenVerdict{}
	}
	f.mu.Lock()
	taken := job.taken
	f.mu.Unlock()
	if !taken {
		f.awaitSiblingScreens(ctx)
	}
	f.mu.Lock()
	if job.taken {
		f.mu.Unlock()
		release()
		select {
		case v := <-job.res:
			return v
		case <-ctx.Done():
			return screenVerdict{}
		}
	}
	batch := []*screenJob{job}
	job.taken = true
	lines := len(job.lines)
	rest := f.screenQ[:0]
	for _, j := range f.screenQ {
		switch {
		case j == job:
		case !j.taken && lines+len(j.lines) <= screenPerCall:
			j.taken = true
			lines += len(j.lines)
			batch = append(batch, j)
		default:
			rest = append(rest, j)
		}
	}
	f.screenQ = rest
	f.mu.Unlock()
	// The screen is an agent of its own, so a person sees it work and
	// its tokens are not a researcher's.
	var ids []string
	for _, j := range batch {
		ids = append(ids, j.sq.ID)
	}
	sa := f.o.startAgent(StageResearch, fmt.Sprintf("screener (round %d)", max(1, f.round)), fmt.Sprintf("judging %s of %s", textkit.Plural(lines, "candidate", "candidates"), strings.Join(ids, ", ")))
	sa.slotHeld = true
	vs, conv := f.screenCall(ctx, sa, batch)
	vs[0].calls = 1
	f.recheck(ctx, sa, conv, vs)
	release()
	on, looked := 0, 0
	for _, v := range vs {
		on += len(v.on)
		looked += v.rechecked
	}
	if !vs[0].ok {
		sa.finish("no usable answer")
	} else {
		sa.finish(fmt.Sprintf("%d of %d on topic (%d looked at again)", on, lines, looked))
	}
	for i, j := range batch[1:] {
		j.res <- vs[i+1]
	}
	return vs[0]
}

// screenPlace is a candidate of a screen call: its job and its 1-based
// place in the job.
type screenPlace struct{ job, n int }

// screenConv is a screen call's conversation, which a later look
// continues (screening_batch.go): the model's prompt cache holds it, so
// a look pays only for what it adds.
type screenConv struct {
	msgs   []llm.Message
	places [][]screenPlace // by the number shown: the candidates it stands for
	batch  []*screenJob
}

// screenCall asks the model about the batch's candidates: one sub-question
// as the single screen always has, several numbered across their lists.
func (f *gather) screenCall(ctx context.Context, a *agentCall, batch []*screenJob) ([]screenVerdict, *screenConv) {
	o := f.o
	var b strings.Builder
	system := screenSystem
	if len(batch) == 1 {
		fmt.Fprintf(&b, "Research question: %s\nSub-question: %s\n\nCandidates:\n", o.opt.Question, batch[0].sq.Question)
	} else {
		system = screenSystemSeveral
		fmt.Fprintf(&b, "Research question: %s\n", o.opt.Question)
	}
	// A work two sub-questions both screen (they rank at the same time,
	// before either has claimed it) is listed once, under the first, and
	// its verdict counts for both.
	conv := &screenConv{batch: batch}
	shown := map[string]int{}
	for ji, j := range batch {
		if len(batch) > 1 {
			fmt.Fprintf(&b, "\nSub-question: %s\nCandidates:\n", j.sq.Question)
		}
		for k, line := range j.lines {
			key := ""
			if k < len(j.keys) {
				key = j.keys[k]
			}
			if n, ok := shown[key]; ok && key != "" {
				conv.places[n-1] = append(conv.places[n-1], screenPlace{ji, k + 1})
				continue
			}
			conv.places = append(conv.places, []screenPlace{{ji, k + 1}})
			if key != "" {
				shown[key] = len(conv.places)
			}
			fmt.Fprintf(&b, "[%d] %s\n", len(conv.places), line)
		}
	}
	conv.msgs = []llm.Message{{Role: "system", Content: system}, {Role: "user", Content: b.String()}}
	all := make([]int, len(conv.places))
	for i := range all {
		all[i] = i + 1
	}
	verdict, why, usage, ok := f.askScreen(ctx, a, conv, all)
	vs := make([]screenVerdict, len(batch))
	for i := range vs {
		vs[i] = screenVerdict{ok: ok, on: map[int]bool{}, off: map[int]string{}, shared: i > 0}
	}
	vs[0].usage = usage
	for n, v := range verdict {
		for _, p := range conv.places[n-1] {
			switch v {
			case 1:
				vs[p.job].on[p.n] = true
			case -1:
				vs[p.job].off[p.n] = why[n]
			}
		}
	}
	return vs, conv
}

// askScreen sends the conversation and reads the verdict on the numbers
// asked (by number: 1 on topic, -1 off topic; a number not judged is
// absent), then adds the answer to the conversation.
func (f *gather) askScreen(ctx context.Context, a *agentCall, conv *screenConv, asked []int) (map[int]int, map[int]string, llm.Usage, bool) {
	req := llm.ChatRequest{
		Messages:    conv.msgs,
		Schema:      json.RawMessage(screenSchema),
		Temperature: ptr(0.0),
		// Room for the shorter list (and a model's reasons, if it gives
		// them) and no more: every generated token costs time.
		MaxTokens: 24 + 6*len(asked),
	}
	valid := func(v *screenAnswer) error { // numbers out of range are dropped
		if v.OnTopic == nil && v.OffTopic == nil {
			return errNoList
		}
		return nil
	}
	ans, info, err := structured(ctx, a, req, valid, func() screenAnswer { return screenAnswer{} })
	if err != nil || info.Fallback || (ans.OnTopic == nil && ans.OffTopic == nil) {
		return nil, nil, info.Usage, false
	}
	said, _ := json.Marshal(ans)
	conv.msgs = append(conv.msgs, llm.Message{Role: "assistant", Content: string(said)})
	verdict, why := readScreenAnswer(ans, asked)
	return verdict, why, info.Usage, true
}

// readScreenAnswer is the verdict on each number asked (1 on topic, -1
// off topic; a number not judged is absent) and the reason of each
// off-topic one. The list given names its candidates and the others asked
// take the opposite verdict, unless the model gave both lists: then only
// what it named is judged. Numbers not asked are dropped; a list that
// names only numbers not asked is no answer (a model writing numbers at
// random), not a verdict on every candidate: nothing is judged.
func readScreenAnswer(ans screenAnswer, asked []int) (verdict map[int]int, why map[int]string) {
	verdict, why = map[int]int{}, map[int]string{}
	isAsked := map[int]bool{}
	for _, n := range asked {
		isAsked[n] = true
	}
	named, stray := 0, 0
	mark := func(ms *[]screenMark, v int) {
		if ms == nil {
			return
		}
		for _, m := range *ms {
			if !isAsked[m.N] {
				stray++
				continue
			}
			verdict[m.N] = v
			if v == -1 {
				why[m.N] = textkit.FirstNonEmpty(textkit.Clip(textkit.CleanLine(m.Why), 40), "named off topic")
			}
			named++
		}
	}
	mark(ans.OnTopic, 1)
	mark(ans.OffTopic, -1)
	if named == 0 && stray > 0 {
		return map[int]int{}, map[int]string{}
	}
	rest := 0
	switch {
	case ans.OnTopic != nil && ans.OffTopic == nil:
		rest = -1
	case ans.OffTopic != nil && ans.OnTopic == nil:
		rest = 1
	}
	for _, n := range asked {
		if _, judged := verdict[n]; !judged && rest != 0 {
			verdict[n] = rest
			if rest == -1 {
				why[n] = notNamed
			}
		}
	}
	return verdict, why
}

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
