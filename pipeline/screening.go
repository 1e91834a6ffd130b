package pipeline

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/textkit"
)

// The screen: the model judges what the question is about. Every
// shortlisted candidate of a sub-question (reading_plan.go: readable, above a
// low floor, up to the depth's Shortlist) is shown to the model by its
// title and the start of its abstract, numbered, in as few calls as fit
// (screening_batch.go), and it answers whichever list is shorter: the
// on-topic numbers or the off-topic ones. What is read is chosen among
// the on-topic ones (chooseByVerdict). The screen is never skipped because
// the scores look clear (shared words are exactly where scores mislead),
// and a verdict that rejects every candidate stands: reading nothing for a
// sub-question is better than reading namesakes.
//
// A verdict is kept per work (verdictBook) and holds wherever the work
// comes up again: other sub-questions, later rounds, chased references,
// revision research, follow-ups and updates, which seed the book from the
// session's stored candidates.
//
// A model that cannot judge must not flood the report (screenFallback):
// when it answers junk, or judges every one of many candidates on topic
// though their words would separate them, that sub-question's reading is
// chosen by word overlap, as before the screen decided, and the Method
// section says so.

// Verdicts as Candidate.Screen holds them.
const (
	screenOnTopic  = "on topic"
	screenOffTopic = "off topic: "
)

// screenAbstractWords is how much of each abstract the first look sees:
// enough to tell what a work is about, while a later look, at the
// verdicts that decide, sees more (screenRecheckWords). Each word costs
// prefill for every candidate of every sub-question.
const screenAbstractWords = 20

// offTopicWhy is the reason of an off-topic verdict.
func offTopicWhy(verdict string) string {
	if why, ok := strings.CutPrefix(verdict, screenOffTopic); ok && why != "" {
		return why
	}
	return "named off topic"
}

// verdictBook is what the screen said of each work in this session, by
// key and by normalised title (a work found again under another key).
type verdictBook struct {
	mu      sync.Mutex
	byKey   map[string]string
	byTitle map[string]string
}

func isVerdict(v string) bool { return v == screenOnTopic || strings.HasPrefix(v, screenOffTopic) }

// get is the verdict already given on c's work.
func (b *verdictBook) get(c Candidate) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if v, ok := b.byKey[c.Key]; ok {
		return v, true
	}
	if t := search.NormalizeTitle(c.Title); t != "" {
		v, ok := b.byTitle[t]
		return v, ok
	}
	return "", false
}

// put keeps c's verdict, when it has one.
func (b *verdictBook) put(c Candidate) {
	if !isVerdict(c.Screen) {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.byKey == nil {
		b.byKey, b.byTitle = map[string]string{}, map[string]string{}
	}
	b.byKey[c.Key] = c.Screen
	if t := search.NormalizeTitle(c.Title); t != "" {
		b.byTitle[t] = c.Screen
	}
}

// seedVerdicts keeps the verdicts the session's runs gave (its own
// candidates and its updates'), for a follow-up or an update; not those
// of a sub-question whose screen showed no judgement (screenFallback),
// which the run itself set aside.
func (o *orchestrator) seedVerdicts() error {
	cs, err := LoadCandidates(o.engine.Store, o.session.ID)
	if err != nil {
		return err
	}
	var sr ScreenReport
	if _, err := o.loadRaw(CheckpointScreen, &sr); err != nil {
		return err
	}
	blind := map[string]bool{}
	for _, f := range sr.Fallbacks {
		if id, _, ok := strings.Cut(f, ": "); ok {
			blind[id] = true
		}
	}
	for _, c := range cs {
		if !blind[c.SubQ] {
			o.verdicts.put(c)
		}
	}
	return nil
}

// screenNote is the Method section's account of the screen: what it
// judged, at what cost, and where the words chose instead.
func (o *orchestrator) screenNote() string {
	if o.opt.Screen == runopts.ScreenOff {
		return " The relevance screen was off: what was read was chosen by word overlap and similarity."
	}
	var sr ScreenReport
	if ok, err := o.loadCheckpoint(CheckpointScreen, &sr); err != nil || !ok || sr.Screened+sr.Unjudged == 0 {
		return ""
	}
	var b strings.Builder
	// Counted per sub-question, beside the flow's distinct works: say so,
	// or the two numbers seem to disagree.
	perSubQ := ""
	if len(o.st.Plan.SubQuestions) > 1 {
		perSubQ = "; a work on two sub-questions' shortlists counts for each"
	}
	fmt.Fprintf(&b, " The model's relevance screen was asked about %s by title and abstract (%s, %d prompt and %d generated tokens%s)",
		textkit.Plural(sr.Screened+sr.Unjudged, "shortlisted candidate", "shortlisted candidates"), textkit.Plural(sr.Calls, "call", "calls"), sr.PromptTokens, sr.CompletionTokens, perSubQ)
	switch {
	case sr.Screened == 0:
		b.WriteString(" and gave no usable answer.")
	case len(sr.Fallbacks) == 0:
		fmt.Fprintf(&b, " and judged %d on topic; only candidates it judged on topic were read.", sr.OnTopic)
	default:
		fmt.Fprintf(&b, " and judged %d on topic.", sr.OnTopic)
	}
	if sr.Rechecked > 0 {
		fmt.Fprintf(&b, " Every on-topic verdict, and every off-topic one the words would have read, was judged again with more of the abstract (%d), and %d changed.", sr.Rechecked, sr.Changed)
	}
	fallbacks := append([]string(nil), sr.Fallbacks...)
	sort.Strings(fallbacks) // in sub-question order, as the rest of the section
	for _, f := range fallbacks {
		fmt.Fprintf(&b, " For %s.", f)
	}
	return b.String()
}

// screenUnit is what one sub-question's screen did, kept in its research
// checkpoint so a resumed run reports it too.
type screenUnit struct {
	Calls    int `json:"calls,omitempty"`    // calls this sub-question made (others' may have judged it)
	Screened int `json:"screened,omitempty"` // shortlisted candidates with a verdict, new or known
	Known    int `json:"known,omitempty"`    // of them, judged before (verdictBook)
	OnTopic  int `json:"on_topic,omitempty"`
	Rejected int `json:"rejected,omitempty"`
	Unjudged int `json:"unjudged,omitempty"` // the screen's answer was unusable
	// Rechecked verdicts the words disagreed with had a second look
	// (screening_batch.go); Changed of them changed.
	Rechecked        int `json:"rechecked,omitempty"`
	Changed          int `json:"changed,omitempty"`
	PromptTokens     int `json:"prompt_tokens,omitempty"`
	CompletionTokens int `json:"completion_tokens,omitempty"`
	// Fallback says why this sub-question's reading was chosen by word
	// overlap instead of the screen's verdicts ("" when it was not).
	Fallback string `json:"fallback,omitempty"`
}

// ScreenReport is a run's screening and what it cost and saved.
type ScreenReport struct {
	Calls            int `json:"calls"`
	Screened         int `json:"screened"` // candidates with a verdict (a work counts per sub-question)
	OnTopic          int `json:"on_topic"`
	Rejected         int `json:"rejected"` // judged off topic: not read
	Unjudged         int `json:"unjudged,omitempty"`
	Rechecked        int `json:"rechecked,omitempty"` // verdicts the words disagreed with, judged again
	Changed          int `json:"changed,omitempty"`
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// Fallbacks name the sub-questions whose reading was chosen by word
	// overlap, and why (screenFallback).
	Fallbacks []string `json:"fallbacks,omitempty"`
	// AnalysisTokensPerSource is the mean prompt+completion tokens of
	// this run's analyses; SavedTokens is Rejected times that: what the
	// rejected candidates would have cost to analyse, had they been read.
	AnalysisTokensPerSource int `json:"analysis_tokens_per_source"`
	SavedTokens             int `json:"saved_tokens"`
	// AnalysisGeneratedPerSource is the part of AnalysisTokensPerSource
	// the model generated: on one GPU a generated token costs ~30 prompt
	// tokens' time, so the screen's prompt is weighed against it.
	AnalysisGeneratedPerSource int `json:"analysis_generated_per_source"`
}

// Tokens is the screen's own cost.
func (r ScreenReport) Tokens() int { return r.PromptTokens + r.CompletionTokens }

// CheckpointScreen holds the run's ScreenReport.
const CheckpointScreen = "screen"

// analysisCost measures what analyses cost in this run (from the
// analysts' AgentFinished events), to price what the screen saved.
type analysisCost struct {
	mu        sync.Mutex
	tokens    int
	generated int
	n         int
}

func (c *analysisCost) observe(ev Event) {
	if ev.Type != AgentFinished || ev.Stage != StageAnalyse || ev.Usage == nil {
		return
	}
	if t := ev.Usage.PromptTokens + ev.Usage.CompletionTokens; t > 0 {
		c.mu.Lock()
		c.tokens += t
		c.generated += ev.Usage.CompletionTokens
		c.n++
		c.mu.Unlock()
	}
}

// mean is the mean tokens of an analysis, in all and generated.
func (c *analysisCost) mean() (tokens, generated int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == 0 {
		return 0, 0
	}
	return c.tokens / c.n, c.generated / c.n
}

// add takes one sub-question's screen into the run's report.
func (r *ScreenReport) add(subq string, u *screenUnit) {
	if u == nil {
		return
	}
	r.Calls += u.Calls
	r.Screened += u.Screened
	r.OnTopic += u.OnTopic
	r.Rejected += u.Rejected
	r.Unjudged += u.Unjudged
	r.Rechecked += u.Rechecked
	r.Changed += u.Changed
	r.PromptTokens += u.PromptTokens
	r.CompletionTokens += u.CompletionTokens
	if u.Fallback != "" {
		r.Fallbacks = append(r.Fallbacks, subq+": "+u.Fallback)
	}
}

// screen has the model judge the shortlisted candidates (their places in
// cands) that have no verdict yet, and writes every one's verdict into
// Candidate.Screen. It returns nil when the screen is off.
func (f *gather) screen(ctx context.Context, a *agentCall, sq SubQuestion, cands []Candidate, recs map[string]search.Record, idx []int, floor float64) *screenUnit {
	o := f.o
	if o.opt.Screen == runopts.ScreenOff || len(idx) == 0 {
		return nil
	}
	u := &screenUnit{}
	var ask []int
	for _, i := range idx {
		if v, ok := o.verdicts.get(cands[i]); ok {
			cands[i].Screen = v
			u.Known++
			continue
		}
		cands[i].Screen = ""
		ask = append(ask, i)
	}
	// Parts of at most screenPerCall candidates, queued at once: each
	// may share a call with other sub-questions' parts.
	var parts [][]int
	for len(ask) > 0 {
		n := min(len(ask), screenPerCall)
		parts, ask = append(parts, ask[:n]), ask[n:]
	}
	verdicts := make([]screenVerdict, len(parts))
	var wg sync.WaitGroup
	for p, part := range parts {
		job := &screenJob{sq: sq, res: make(chan screenVerdict, 1), floor: floor}
		for _, i := range part {
			r := recs[cands[i].Key]
			job.keys = append(job.keys, cands[i].Key)
			job.lines = append(job.lines, screenLine(r, cands[i], screenAbstractWords))
			job.long = append(job.long, screenLine(r, cands[i], screenRecheckWords))
			job.rel = append(job.rel, cands[i].Relevance)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			verdicts[p] = f.screenTogether(ctx, job)
		}()
	}
	wg.Wait()
	unusable := false
	for p, part := range parts {
		v := verdicts[p]
		u.Calls += v.calls
		u.Rechecked += v.rechecked
		u.Changed += v.changed
		u.PromptTokens += v.usage.PromptTokens
		u.CompletionTokens += v.usage.CompletionTokens
		for k, i := range part {
			c := &cands[i]
			switch why, off := v.off[k+1]; {
			case !v.ok:
				unusable = true
			case off:
				c.Screen = screenOffTopic + textkit.FirstNonEmpty(why, "named off topic")
			case v.on[k+1]:
				c.Screen = screenOnTopic
			}
			o.verdicts.put(*c)
		}
	}
	if unusable && ctx.Err() == nil {
		a.warnUnusable("the relevance screen gave no usable answer about %s's candidates; they count as unjudged", sq.ID)
	}
	for _, i := range idx {
		switch v := cands[i].Screen; {
		case v == screenOnTopic:
			u.OnTopic++
		case isVerdict(v):
			u.Rejected++
		default:
			u.Unjudged++
		}
	}
	u.Screened = u.OnTopic + u.Rejected
	return u
}

// screenLine is what the screen sees of a candidate: its title, then the
// first words of its abstract (screenAbstractWords at the first look,
// screenRecheckWords at a later one).
func screenLine(r search.Record, c Candidate, words int) string {
	line := textkit.CleanLine(textkit.FirstNonEmpty(r.Title, c.Title))
	if w := strings.Fields(textkit.CleanLine(r.Abstract)); len(w) > 0 {
		line += "\n    " + strings.Join(w[:min(len(w), words)], " ")
	}
	return line
}

// Fallback: a screen that cannot judge. fallbackMin is how many
// candidates a screen must have judged all on topic before that counts as
// no judgement; fallbackShare the share of them the words alone would
// have passed over (below the floor, far below the best) for the screen's
// verdict to be doubted.
const (
	fallbackMin   = 8
	fallbackShare = 0.25
)

// screenFallback says why a sub-question's reading must be chosen by word
// overlap rather than by the screen's verdicts ("" when the verdicts
// decide): the screen is off, it answered nothing usable, or it judged
// every one of many candidates on topic though their words would
// separate them.
//
// blind says the screen has already shown no judgement in this run: then
// a sub-question too small to tell (fewer than fallbackMin) in which it
// rejects nothing is read by the words too.
func screenFallback(u *screenUnit, cands []Candidate, idx []int, floor float64, blind bool) string {
	switch {
	case u == nil:
		return "" // off, or nothing shortlisted: the floors decide, as asked
	case u.Unjudged > 0:
		return fmt.Sprintf("the model's screen gave no usable verdict on %d of %d candidates; reading was chosen by word overlap", u.Unjudged, len(idx))
	case u.Rejected > 0:
		return ""
	case blind:
		return fmt.Sprintf("the model's screen judged all %d candidates on topic, and had shown no judgement elsewhere in this run; reading was chosen by word overlap", len(idx))
	case len(idx) < fallbackMin:
		return ""
	}
	best, apart := 0.0, 0
	for _, i := range idx {
		best = max(best, cands[i].Score)
	}
	for _, i := range idx {
		if c := cands[i]; c.Relevance < floor || c.Score < farBelow*best {
			apart++
		}
	}
	if float64(apart) < fallbackShare*float64(len(idx)) {
		return "" // the words agree that all are close: the verdict may well be right
	}
	return fmt.Sprintf("the model's screen judged every one of %d candidates on topic; reading was chosen by word overlap", len(idx))
}
