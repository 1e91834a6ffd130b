package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/textkit"
)

// Plan is the planner's output: what to look for, where, and how.
type Plan struct {
	Title         string        `json:"title"`
	Intent        string        `json:"intent"` // biomedical, cs_physics, materials, general
	CanonicalTerm string        `json:"canonical_term"`
	SubQuestions  []SubQuestion `json:"sub_questions"`
	Sources       []string      `json:"sources"` // chosen by intent from those allowed
	Degraded      bool          `json:"degraded,omitempty"`
}

// SubQuestion is one part of the question, with tiered queries that widen
// from strict to broad when a source returns too little.
type SubQuestion struct {
	ID       string  `json:"id"`
	Question string  `json:"question"`
	Queries  Queries `json:"queries"`
	// Slots are the few pieces of information a good answer needs (e.g.
	// mechanism, key experiments, quantitative results, open problems);
	// reflection (reflect.go) looks for the ones no analysed source fills.
	Slots []string `json:"slots,omitempty"`
}

// Queries are one sub-question's search strings, narrowest first.
type Queries struct {
	Strict   string `json:"strict"`
	Moderate string `json:"moderate"`
	Broad    string `json:"broad"`
}

// List is the distinct queries, narrowest first (what a person edits).
func (q Queries) List() []string { return q.tiers() }

func (q Queries) tiers() []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range []string{q.Strict, q.Moderate, q.Broad} {
		s = strings.TrimSpace(s)
		if s != "" && !seen[strings.ToLower(s)] {
			seen[strings.ToLower(s)] = true
			out = append(out, s)
		}
	}
	return out
}

const planSchema = `{
  "type": "object",
  "properties": {
    "intent": {"type": "string", "enum": ["biomedical", "cs_physics", "materials", "general"]},
    "canonical_term": {"type": "string"},
    "sub_questions": {
      "type": "array", "minItems": 1, "maxItems": 6,
      "items": {
        "type": "object",
        "properties": {
          "question": {"type": "string"},
          "queries": {
            "type": "object",
            "properties": {"strict": {"type": "string"}, "moderate": {"type": "string"}},
            "required": ["strict", "moderate"]
          },
          "slots": {"type": "array", "minItems": 1, "maxItems": 4, "items": {"type": "string"}}
        },
        "required": ["question", "queries", "slots"]
      }
    }
  },
  "required": ["intent", "canonical_term", "sub_questions"]
}`

// The planner is asked only for what it alone can decide. The report's
// title is the writer's (its "# " line; until then a run is named by its
// question), and the broadest query is the canonical term: every token the
// planner writes delays the whole run on one GPU.
const plannerSystem = `You are the planning agent of a research assistant that searches scholarly databases (arXiv, OpenAlex, PubMed, Semantic Scholar, Crossref) and the web.
Given a research question, answer with JSON only:
- "intent": the domain: "biomedical", "cs_physics", "materials" or "general".
- "canonical_term": the 1-3 word technical term at the heart of the question, as papers would write it.
- "sub_questions": %d to %d focused sub-questions that together answer the question. For each, "queries" with two search strings for a scholarly search engine: "strict" (precise technical phrase, 3-6 words) and "moderate" (key terms, 2-4 words). No boolean operators, no quotes. And "slots": the 2-4 pieces of information a good answer to that sub-question needs, 1-4 words each (e.g. "mechanism", "key experiments", "quantitative results", "open problems").`

func (o *orchestrator) stagePlan(ctx context.Context) error {
	var p Plan
	if ok, err := o.loadCheckpoint("plan", &p); err != nil {
		return err
	} else if ok {
		o.st.Plan = &p
		o.stageSkipped(StagePlan, fmt.Sprintf("%d sub-questions", len(p.SubQuestions)))
		return o.reviewPlan(ctx)
	}
	start := o.stageStart(StagePlan, "planning the research")
	a := o.startAgent(StagePlan, "planner", "splitting the question into sub-questions")
	minQ := 2
	if o.plan.SubQuestions < minQ {
		minQ = o.plan.SubQuestions
	}
	system := fmt.Sprintf(plannerSystem, minQ, o.plan.SubQuestions)
	req := llm.ChatRequest{
		Messages: []llm.Message{
			{Role: "system", Content: system},
			{Role: "user", Content: o.planPrompt()},
		},
		Schema:      json.RawMessage(planSchema),
		Temperature: ptr(0.2),
	}
	fallback := func() Plan { return fallbackPlan(o.opt.Question) }
	validate := func(p *Plan) error {
		if err := validatePlan(p); err != nil {
			return err
		}
		return planEcho(p, o.opt.Question, system)
	}
	p, info, err := structured(ctx, a, req, validate, fallback)
	if fatal(ctx, err) {
		a.fail()
		return err
	}
	o.budgetWarn(StagePlan, err)
	p.Degraded = info.Fallback
	if info.Fallback {
		a.warnUnusable("the planner's answer was unusable; searching for the question as asked")
	}
	o.finishPlan(&p)
	a.finish(fmt.Sprintf("%d sub-questions, %s", len(p.SubQuestions), strings.Join(p.Sources, ", ")))
	o.st.Plan = &p
	if err := o.checkpoint("plan", p); err != nil {
		return err
	}
	_, err = o.engine.Store.UpdateSession(o.session.ID, func(s *store.Session) error {
		if p.Title != "" && o.follow == nil {
			s.Title = shortTitle(p.Title)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := o.stageDone(StagePlan, start, fmt.Sprintf("%d sub-questions", len(p.SubQuestions))); err != nil {
		return err
	}
	return o.reviewPlan(ctx)
}

// planPrompt is the planner's question; a follow-up's says what it follows.
func (o *orchestrator) planPrompt() string {
	if o.follow != nil {
		return fmt.Sprintf("Research question (a follow-up to a finished report on %q): %s", o.session.Question, o.opt.Question)
	}
	return "Research question: " + o.opt.Question
}

func validatePlan(p *Plan) error {
	if len(p.SubQuestions) == 0 {
		return fmt.Errorf("sub_questions is empty")
	}
	for i, sq := range p.SubQuestions {
		if !textkit.Plausible(sq.Question, 3) {
			return fmt.Errorf("sub_questions[%d].question %q is not a question in words", i, textkit.Clip(sq.Question, 60))
		}
		if len(sq.Queries.tiers()) == 0 {
			return fmt.Errorf("sub_questions[%d].queries are all empty", i)
		}
		for _, q := range sq.Queries.tiers() {
			if !textkit.Plausible(q, 1) {
				return fmt.Errorf("sub_questions[%d] has a query %q that is not search words", i, textkit.Clip(q, 40))
			}
		}
	}
	return nil
}

// finishPlan cleans the model's plan: bounds, IDs, sane queries and the
// sources chosen by intent.
func (o *orchestrator) finishPlan(p *Plan) {
	p.Title = textkit.CleanLine(p.Title)
	if !textkit.Plausible(p.Title, 2) {
		p.Title = shortTitle(o.opt.Question)
	}
	if len(p.SubQuestions) > o.plan.SubQuestions {
		p.SubQuestions = p.SubQuestions[:o.plan.SubQuestions]
	}
	for i := range p.SubQuestions {
		sq := &p.SubQuestions[i]
		sq.ID = fmt.Sprintf("q%d", i+1)
		sq.Question = textkit.CleanLine(sq.Question)
		sq.Queries.Strict = cleanQuery(sq.Queries.Strict)
		sq.Queries.Moderate = cleanQuery(sq.Queries.Moderate)
		sq.Queries.Broad = cleanQuery(sq.Queries.Broad)
		if len(sq.Queries.tiers()) == 0 {
			sq.Queries.Moderate = keywords(sq.Question, 5)
		}
		sq.Slots = cleanSlots(sq.Slots)
	}
	p.CanonicalTerm = cleanQuery(p.CanonicalTerm)
	for i := range p.SubQuestions {
		if q := &p.SubQuestions[i].Queries; q.Broad == "" {
			q.Broad = p.CanonicalTerm
		}
	}
	p.Sources = o.chooseSources(p.Intent)
}

// defaultSlots stand in when the planner names none.
var defaultSlots = []string{"key findings", "methods", "limitations"}

// cleanSlots keeps 1-4 short, distinct slot names.
func cleanSlots(in []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range in {
		s = strings.ToLower(textkit.Clip(textkit.CleanLine(s), 40))
		if !textkit.Plausible(s, 1) || seen[s] || len(out) == 4 {
			continue
		}
		seen[s] = true
		out = append(out, s)
	}
	if len(out) == 0 {
		return append([]string(nil), defaultSlots...)
	}
	return out
}

// autoSources is how many sources the planner picks by intent when the
// person named none; the local corpus comes on top when it holds anything.
const autoSources = 3

// chooseSources keeps the sources the person allowed and this process can
// search, ordered by the intent's route. With no sources named, it takes
// the route's first few: a biomedical question goes to PubMed first.
func (o *orchestrator) chooseSources(intent string) []string {
	out := o.routeSources(intent)
	if !o.opt.AutoSources {
		for _, s := range out {
			if o.holdsNothing(s) {
				o.warn(StagePlan, "", "%s holds no documents yet, so searching it finds nothing; `researchtui corpus add PATH` adds your own", s)
			}
		}
		return out
	}
	var picked []string
	n := 0
	for _, s := range out {
		switch {
		case s == "local":
			if !o.holdsNothing(s) {
				picked = append(picked, s)
			}
		case n < autoSources:
			picked = append(picked, s)
			n++
		}
	}
	return picked
}

// holdsNothing says the source is a collection at hand (the local corpus)
// that holds no document.
func (o *orchestrator) holdsNothing(name string) bool {
	c, ok := o.engine.Sources[name].(search.Collection)
	return ok && c.Empty()
}

func (o *orchestrator) routeSources(intent string) []string {
	allowed := map[string]bool{}
	for _, s := range o.opt.Sources {
		if _, ok := o.engine.Sources[s]; ok {
			allowed[s] = true
		}
	}
	route := search.Route(intent) // each source's descriptor says its place
	if route == nil {
		route = search.Route(search.IntentGeneral)
	}
	var out []string
	for _, s := range route {
		if allowed[s] {
			out = append(out, s)
			delete(allowed, s)
		}
	}
	for _, s := range o.opt.Sources { // allowed but not on the route
		if allowed[s] {
			out = append(out, s)
		}
	}
	return out
}

// fallbackPlan is the degraded plan: the question itself, searched by its
// keywords.
func fallbackPlan(q string) Plan {
	kw := keywords(q, 6)
	return Plan{
		Title:         shortTitle(q),
		Intent:        "general",
		CanonicalTerm: keywords(q, 2),
		SubQuestions: []SubQuestion{{
			Question: q,
			Queries:  Queries{Strict: kw, Moderate: keywords(q, 3), Broad: keywords(q, 2)},
		}},
	}
}

func ptr[T any](v T) *T { return &v }

// A small model given a long question sometimes answers the planner's
// prompt with the prompt: sub-questions such as "You are the planning
// agent of a research assistant…" or "No boolean operators, no quotes."
// A run that searched for them would find nothing the person asked about,
// so such a plan is unusable: the planner is asked again, and then the
// question is searched as asked, with a warning (stagePlan).

// echoRun is how many consecutive words a sub-question may share with
// the planner's instructions before it counts as repeating them.
const echoRun = 5

// planEcho says why plan p is no plan for question (it repeats the
// instructions, or nothing in it is about the question), nil when it is.
func planEcho(p *Plan, question, instructions string) error {
	said := shingles(instructions, echoRun)
	for i, sq := range p.SubQuestions {
		for _, sh := range wordRuns(sq.Question, echoRun) {
			if said[sh] {
				return fmt.Errorf("sub_questions[%d] %q repeats the planner's instructions", i, textkit.Clip(sq.Question, 60))
			}
		}
	}
	asked := wordStems(question)
	if len(asked) < 3 || !looksEnglish(question) {
		// Too few words to tell ("why is the sky blue?"), or a question
		// in another language, which a planner may rightly plan in
		// English ("Perowskit" is planned as "perovskite").
		return nil
	}
	texts := []string{p.CanonicalTerm}
	for _, sq := range p.SubQuestions {
		texts = append(texts, sq.Question, sq.Queries.Strict, sq.Queries.Moderate, sq.Queries.Broad)
	}
	for _, t := range texts {
		for s := range wordStems(t) {
			if asked[s] {
				return nil
			}
		}
	}
	return fmt.Errorf("no sub-question or query shares a word with the question")
}

// wordStems are the stems of s's content words (rank.go's stem: "tests"
// meets "testing"), hyphenated words split ("Turing-Test" meets "Turing").
func wordStems(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range textkit.ContentWords(strings.ReplaceAll(s, "-", " ")) {
		out[stem(w)] = true
	}
	return out
}

// shingles are the runs of n consecutive words of s.
func shingles(s string, n int) map[string]bool {
	out := map[string]bool{}
	for _, sh := range wordRuns(s, n) {
		out[sh] = true
	}
	return out
}

func wordRuns(s string, n int) []string {
	ws := textkit.Words(s)
	var out []string
	for i := 0; i+n <= len(ws); i++ {
		out = append(out, strings.Join(ws[i:i+n], " "))
	}
	return out
}

// englishMarkers are words common in English questions and rare in other
// languages' ("in" and "de" are both, so they are not here).
var englishMarkers = map[string]bool{"the": true, "of": true, "how": true, "what": true, "which": true, "why": true,
	"does": true, "do": true, "are": true, "is": true, "and": true, "with": true, "for": true, "when": true}

// looksEnglish says whether question has two distinct English markers.
func looksEnglish(question string) bool {
	seen := map[string]bool{}
	for _, w := range textkit.Words(question) {
		if englishMarkers[w] {
			seen[w] = true
		}
	}
	return len(seen) >= 2
}

// keywords returns up to n distinct content words of s, in order.
func keywords(s string, n int) string {
	seen := map[string]bool{}
	var out []string
	for _, w := range textkit.ContentWords(s) {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
			if len(out) == n {
				break
			}
		}
	}
	return strings.Join(out, " ")
}

// cleanQuery makes a model-written query safe to send: one line, no
// boolean syntax or quotes, bounded length.
func cleanQuery(s string) string {
	s = textkit.CleanLine(s)
	s = strings.NewReplacer(`"`, " ", "'", " ", "(", " ", ")", " ", " AND ", " ", " OR ", " ", " NOT ", " ").Replace(s)
	f := strings.Fields(s)
	if len(f) > 10 {
		f = f[:10]
	}
	return strings.Join(f, " ")
}
