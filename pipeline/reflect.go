package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/textkit"
)

// Reflection is what a round's reflection decided: per sub-question, the
// information slots no analysed source fills yet and new queries for them.
type Reflection struct {
	SubQuestions []SubQReflection `json:"sub_questions"`
	// ByCounts: the model's reflection failed and the decision was made by
	// counting analysed sources instead.
	ByCounts bool `json:"by_counts,omitempty"`
}

// SubQReflection is one sub-question's gaps.
type SubQReflection struct {
	ID      string   `json:"id"`
	Missing []string `json:"missing"`
	Queries []string `json:"queries"`
}

const reflectSchema = `{
  "type": "object",
  "properties": {
    "sub_questions": {"type": "array", "items": {"type": "object",
      "properties": {
        "id": {"type": "string"},
        "missing": {"type": "array", "maxItems": 4, "items": {"type": "string"}},
        "queries": {"type": "array", "maxItems": 3, "items": {"type": "string"}}
      },
      "required": ["id", "missing", "queries"]}}
  },
  "required": ["sub_questions"]
}`

const reflectSystem = `You are the reflection agent of a research assistant. After a round of reading, you decide what each sub-question still lacks.
For each sub-question you get its information slots, which slots the analysed sources fill, and the search queries already run.
Answer with JSON only: "sub_questions": one entry per sub-question that still lacks something, with its "id", "missing" (the slots still unfilled that matter for a good answer) and "queries" (1-3 NEW search strings for a scholarly search engine, 2-6 words, aimed at the missing slots, different from the queries already run; no boolean operators, no quotes).
Leave out sub-questions that are covered. An empty list means the research is complete.`

// slotCoverage is, per sub-question, the slots filled by the analysed
// sources that serve it and how many such sources there are.
func (f *gather) slotCoverage() (filled map[string]map[string]int, sources map[string]int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	filled, sources = map[string]map[string]int{}, map[string]int{}
	for _, sq := range f.o.st.Plan.SubQuestions {
		filled[sq.ID] = map[string]int{}
		for _, k := range f.bySubQ[sq.ID] {
			an, ok := f.analyses[k]
			if !ok || an.Confidence < minConfidence {
				continue
			}
			sources[sq.ID]++
			for _, s := range an.Slots {
				filled[sq.ID][s.Slot]++
			}
		}
	}
	return filled, sources
}

// unfilled lists each sub-question's slots no analysed source fills.
func (f *gather) unfilled() map[string][]string {
	filled, _ := f.slotCoverage()
	out := map[string][]string{}
	for _, sq := range f.o.st.Plan.SubQuestions {
		for _, s := range sq.Slots {
			if filled[sq.ID][s] == 0 {
				out[sq.ID] = append(out[sq.ID], s)
			}
		}
	}
	return out
}

// reflect decides, after a round, what each sub-question still lacks. When
// every slot is filled it asks no model. A reflection that fails or makes
// no sense is replaced by counting: a sub-question with fewer than 2
// analysed sources gets one broadened query. Checkpointed per round.
func (o *orchestrator) reflect(ctx context.Context, round int, f *gather) (Reflection, error) {
	name := fmt.Sprintf("reflect/%d", round)
	var r Reflection
	if ok, err := o.loadCheckpoint(name, &r); err != nil || ok {
		return r, err
	}
	filled, sources := f.slotCoverage()
	gaps := f.unfilled()
	if len(gaps) == 0 {
		return r, o.checkpoint(name, r)
	}
	a := o.startAgent(StageResearch, fmt.Sprintf("reflector (round %d)", round), "what do the sub-questions still lack?")
	var b strings.Builder
	fmt.Fprintf(&b, "Research question: %s\n\n", o.opt.Question)
	for _, sq := range o.st.Plan.SubQuestions {
		fmt.Fprintf(&b, "- %s: %s\n  slots: %s\n  analysed sources: %d\n", sq.ID, sq.Question, strings.Join(sq.Slots, "; "), sources[sq.ID])
		var have []string
		for _, s := range sq.Slots {
			if n := filled[sq.ID][s]; n > 0 {
				have = append(have, fmt.Sprintf("%s (%d sources)", s, n))
			}
		}
		fmt.Fprintf(&b, "  filled: %s\n  unfilled: %s\n  queries already run: %s\n", orNone(have), orNone(gaps[sq.ID]), strings.Join(f.queriesRun(), "; "))
	}
	req := llm.ChatRequest{
		Messages:    []llm.Message{{Role: "system", Content: reflectSystem}, {Role: "user", Content: b.String()}},
		Schema:      json.RawMessage(reflectSchema),
		Temperature: ptr(0.2),
	}
	fallback := func() Reflection { return f.reflectByCounts(sources) }
	r, info, err := structured(ctx, a, req, o.validReflection, fallback)
	if fatal(ctx, err) {
		a.fail()
		return r, err
	}
	o.budgetWarn(StageResearch, err)
	if info.Fallback {
		r = f.reflectByCounts(sources)
	}
	r = f.cleanReflection(r, gaps)
	var missing []string
	for _, s := range r.SubQuestions {
		missing = append(missing, s.Missing...)
	}
	a.finish("missing: " + orNone(dedupe(missing)))
	return r, o.checkpoint(name, r)
}

// validReflection accepts a reflection that names only the plan's
// sub-questions.
func (o *orchestrator) validReflection(r *Reflection) error {
	for _, s := range r.SubQuestions {
		known := false
		for _, sq := range o.st.Plan.SubQuestions {
			known = known || sq.ID == s.ID
		}
		if !known {
			return fmt.Errorf("unknown sub-question id %q", s.ID)
		}
	}
	return nil
}

// reflectByCounts is the decision when reflection fails: one broadened
// query for each sub-question with fewer than 2 analysed sources.
func (f *gather) reflectByCounts(sources map[string]int) Reflection {
	r := Reflection{ByCounts: true}
	gaps := f.unfilled()
	for _, sq := range f.o.st.Plan.SubQuestions {
		if sources[sq.ID] >= 2 {
			continue
		}
		q := sq.Queries.Broad
		if q == "" || f.hasRun(q) {
			q = keywords(sq.Question, 2)
		}
		r.SubQuestions = append(r.SubQuestions, SubQReflection{ID: sq.ID, Missing: gaps[sq.ID], Queries: []string{q}})
	}
	return r
}

// cleanReflection keeps the plan's slots (or, when the model names none,
// the unfilled ones) and only queries never run before, after
// normalisation; a sub-question with nothing missing is dropped.
func (f *gather) cleanReflection(r Reflection, gaps map[string][]string) Reflection {
	slots := map[string]map[string]bool{}
	for _, sq := range f.o.st.Plan.SubQuestions {
		slots[sq.ID] = map[string]bool{}
		for _, s := range sq.Slots {
			slots[sq.ID][s] = true
		}
	}
	out := Reflection{ByCounts: r.ByCounts}
	seen := map[string]bool{}
	for _, s := range r.SubQuestions {
		if seen[s.ID] {
			continue
		}
		seen[s.ID] = true
		var missing []string
		for _, m := range s.Missing {
			if m = strings.ToLower(strings.TrimSpace(m)); slots[s.ID][m] {
				missing = append(missing, m)
			}
		}
		if len(missing) == 0 {
			missing = gaps[s.ID]
		}
		var queries []string
		for _, q := range s.Queries {
			q = cleanQuery(q)
			if textkit.Plausible(q, 1) && !f.hasRun(q) {
				queries = append(queries, q)
				f.markRun(q)
			}
		}
		if len(missing) == 0 && len(queries) == 0 {
			continue
		}
		out.SubQuestions = append(out.SubQuestions, SubQReflection{ID: s.ID, Missing: dedupe(missing), Queries: queries})
	}
	return out
}

// normQuery is a query's identity: its content words, sorted.
func normQuery(q string) string {
	w := textkit.ContentWords(q)
	sort.Strings(w)
	return strings.Join(dedupe(w), " ")
}

func (f *gather) hasRun(q string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ran[normQuery(q)]
}

func (f *gather) markRun(q string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ran[normQuery(q)] = true
}

// queriesRun lists the queries run so far (normalised), sorted.
func (f *gather) queriesRun() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, 0, len(f.ran))
	for q := range f.ran {
		out = append(out, q)
	}
	sort.Strings(out)
	return out
}

func dedupe(ss []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func orNone(ss []string) string {
	if len(ss) == 0 {
		return "none"
	}
	return strings.Join(ss, ", ")
}
