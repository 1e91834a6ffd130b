package pipeline

import (
	"context"
	"encoding/json"
	"strings"
	"sync"

	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/textkit"
)

// The screen: before anything is downloaded or analysed, the candidates a
// sub-question is about to read are shown to the model in one short call
// (numbered titles and the start of their abstracts) and it names the off-
// topic ones. Ranking and floors decide what is worth reading; the screen
// only vetoes, so a screen with no judgement (always yes, or random) costs
// its tokens and nothing else. It is skipped when the scores already
// separate clearly, and its cost is counted against the analyses it saves
// (ScreenReport, `sessions show --json` "screen").
//
// Rejected candidates are not replaced by the next ones: the screen exists
// to save analyses, and a replacement would spend what it saved on a
// candidate ranking liked less. A first round's screen that rejects every
// candidate is ignored (warned about): when the floors say some candidates
// are good, a model answer must not leave a sub-question with nothing. A
// later round's rejections always count: reading nothing more is cheap.

// Screen settings (Options.Screen, config key `screen`, --screen).
const (
	ScreenOn  = "on"
	ScreenOff = "off"
)

const (
	// screenClear: a read candidate whose relevance is this many times
	// the floor, and which holds one of the query's phrases (when it has
	// any), needs no screen; when every read candidate is like that, no
	// call is made.
	screenClear = 1.25
	// screenAbstractWords is how much of each abstract the screen sees.
	screenAbstractWords = 30
)

const screenSystem = `You are a relevance screening agent for a research assistant. You get one research sub-question and a numbered list of candidate papers (title and the start of the abstract). Name the candidates that are off topic: about something else that merely shares words with the sub-question (for example another meaning of a name). Answer JSON only, as short as possible: {"off_topic":[{"n":3,"why":"GPU hardware"}]} with a reason of at most four words, or {"off_topic":[]} when all are on topic.`

const screenSchema = `{
  "type": "object",
  "properties": {
    "off_topic": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {"n": {"type": "integer"}, "why": {"type": "string", "maxLength": 40}},
        "required": ["n"]
      }
    }
  },
  "required": ["off_topic"]
}`

// screenAnswer is the screen's verdict. A model may answer plain numbers
// ({"off_topic":[3,7]}) instead of objects; both are accepted.
type screenAnswer struct {
	OffTopic []screenReject `json:"off_topic"`
}

type screenReject struct {
	N   int    `json:"n"`
	Why string `json:"why,omitempty"`
}

func (r *screenReject) UnmarshalJSON(b []byte) error {
	var n int
	if json.Unmarshal(b, &n) == nil {
		r.N = n
		return nil
	}
	type plain screenReject
	return json.Unmarshal(b, (*plain)(r))
}

// screenUnit is what one sub-question's screen did, kept in its research
// checkpoint so a resumed run reports it too.
type screenUnit struct {
	Skipped          bool `json:"skipped,omitempty"` // the scores separated clearly: no call
	Shared           bool `json:"shared,omitempty"`  // judged in another sub-question's call
	Screened         int  `json:"screened,omitempty"`
	Rejected         int  `json:"rejected,omitempty"`  // would have been read; not read
	Overruled        int  `json:"overruled,omitempty"` // rejections ignored (first round, all rejected)
	PromptTokens     int  `json:"prompt_tokens,omitempty"`
	CompletionTokens int  `json:"completion_tokens,omitempty"`
}

// ScreenReport is a run's screening and what it saved.
type ScreenReport struct {
	Calls            int `json:"calls"`
	Skipped          int `json:"skipped"`  // rankings that needed no screen
	Screened         int `json:"screened"` // candidates judged
	Rejected         int `json:"rejected"` // candidates that would have been read, judged off topic
	Overruled        int `json:"overruled,omitempty"`
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// AnalysisTokensPerSource is the mean prompt+completion tokens of
	// this run's analyses; SavedTokens is Rejected times that: what the
	// rejected candidates would have cost to analyse.
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
func (r *ScreenReport) add(u *screenUnit) {
	if u == nil {
		return
	}
	if u.Skipped {
		r.Skipped++
		return
	}
	if !u.Shared {
		r.Calls++
	}
	r.Screened += u.Screened
	r.Rejected += u.Rejected
	r.Overruled += u.Overruled
	r.PromptTokens += u.PromptTokens
	r.CompletionTokens += u.CompletionTokens
}

// screen asks the model which of the candidates about to be read are off
// topic and takes them out of the reading (see the top of this file).
func (f *gather) screen(ctx context.Context, a *agentCall, sq SubQuestion, cands []Candidate, recs map[string]search.Record) *screenUnit {
	o := f.o
	if o.opt.Screen == ScreenOff {
		return nil
	}
	own := 0
	for _, c := range cands {
		if c.Read && c.Reason == reasonRead {
			own++
		}
	}
	idx, lines, clear := f.screenLines(sq, cands, recs, f.reserve(own))
	chosen := 0
	for _, i := range idx {
		if cands[i].Read {
			chosen++
		}
	}
	if chosen == 0 {
		return nil
	}
	if clear {
		return &screenUnit{Skipped: true}
	}
	job := &screenJob{sq: sq, lines: lines, res: make(chan screenVerdict, 1)}
	for _, i := range idx {
		job.keys = append(job.keys, cands[i].Key)
	}
	v := f.screenTogether(ctx, a, job)
	u := &screenUnit{Screened: len(idx), PromptTokens: v.usage.PromptTokens, CompletionTokens: v.usage.CompletionTokens, Shared: v.shared}
	if !v.ok {
		if ctx.Err() == nil {
			a.warn("the relevance screen gave no usable answer; %s candidates are read as ranked", sq.ID)
		}
		return u
	}
	why := map[int]string{}
	for n, w := range v.why {
		why[idx[n-1]] = w
	}
	// A blanket rejection: every candidate judged, those about to be read
	// and the reserves alike.
	overrule := len(why) == len(idx) && f.round == 1
	if overrule {
		a.warn("the relevance screen judged all %d candidates of %s off topic; they clear the relevance floor, so they are read anyway", len(idx), sq.ID)
		u.Overruled = len(idx)
	}
	for _, i := range idx {
		c := &cands[i]
		w, off := why[i]
		switch {
		case !off:
			c.Screen = "on topic"
			continue
		case overrule:
			c.Screen = "off topic (overruled: the floors say it is relevant)"
			continue
		case w == "":
			w = "no reason given"
		}
		c.Screen = "off topic: " + w
		c.Read, c.Reason = false, "not read: the relevance screen judged it off topic ("+w+")"
		u.Rejected++
	}
	return u
}

// screenLines are the candidates to screen (their places in cands and
// their lines: the title, then the start of the abstract): those about to
// be read and up to reserve of the next best that passed every bar but
// found no place, which the reading plan's fill may give one
// (reading_plan.go), so the fill needs no call of its own. clear says
// the scores alone vouch for all of them.
func (f *gather) screenLines(sq SubQuestion, cands []Candidate, recs map[string]search.Record, reserve int) (idx []int, lines []string, clear bool) {
	clear = true
	phrases := len(rankTerms(sq, f.o.st.Plan.CanonicalTerm).phrases) > 0
	for i, c := range cands {
		switch {
		case c.Read && c.Reason != reasonStructured && c.Reason != reasonDuplicate:
		case !c.Read && c.Reason == reasonQuota && c.Screen == "" && reserve > 0:
			reserve--
		default:
			continue
		}
		idx = append(idx, i)
		if (phrases && c.Phrase == 0) || c.Relevance < screenClear*c.Floor {
			clear = false
		}
		r := recs[c.Key]
		line := textkit.CleanLine(r.Title)
		if w := strings.Fields(r.Abstract); len(w) > 0 {
			line += "\n    " + strings.Join(w[:min(len(w), screenAbstractWords)], " ")
		}
		lines = append(lines, line)
	}
	return idx, lines, clear
}
