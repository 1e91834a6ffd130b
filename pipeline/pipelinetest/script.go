// Package pipelinetest provides a scripted "research model" for tests of
// the pipeline, the command line and the TUI: a responder for the fake
// Ollama server (llm/ollamafake) that answers each agent the way a
// competent model would, from what is actually in its prompt, plus fault
// injection. It is a normal package so tests of other packages can import
// it; nothing in the shipped binary does.
package pipelinetest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/researchtui/researchtui/llm/ollamafake"
)

// Agent kinds, recognised from the system prompt.
const (
	Planner   = "planner"
	Analyst   = "analyst"
	Reflector = "reflector"
	Writer    = "writer"
	Reviewer  = "reviewer"
	Verifier  = "verifier"
	Screener  = "screener"
	// Translator translates the Method section of a report in another
	// language; the fake answers with the text marked "[translated]".
	Translator = "translator"
	Other      = "other"
)

// KindOf says which agent a chat call comes from.
func KindOf(call ollamafake.ChatCall) string {
	sys := ""
	if len(call.Messages) > 0 && call.Messages[0].Role == "system" {
		sys = call.Messages[0].Content
	}
	// The agents that work on the report share one system message (the
	// report's context); their role opens the user message.
	if strings.HasPrefix(sys, "You are an agent of a research assistant") {
		sys = lastUser(call)
		if i := strings.IndexByte(sys, '\n'); i > 0 {
			sys = sys[:i]
		}
	}
	switch {
	case strings.Contains(sys, "planning agent"):
		return Planner
	case strings.Contains(sys, "analyst agent"):
		return Analyst
	case strings.Contains(sys, "writing agent"):
		return Writer
	case strings.Contains(sys, "reviewer agent"):
		return Reviewer
	case strings.Contains(sys, "reflection agent"):
		return Reflector
	case strings.Contains(sys, "verifier agent"):
		return Verifier
	case strings.Contains(sys, "screening agent"):
		return Screener
	case strings.Contains(sys, "translating agent"):
		return Translator
	}
	return Other
}

// Topic is one sub-question the scripted planner writes, with its queries.
type Topic struct{ Question, Strict, Moderate, Broad string }

// Fault replaces the n-th call of an agent kind (1-based) with a bad answer.
type Fault struct {
	Kind  string // Planner, Analyst, Writer, Reviewer
	Nth   int
	Reply ollamafake.Reply // e.g. broken JSON content, Status 500, DropAfter 2
}

// Script is a scripted research model.
type Script struct {
	// RevisionRounds is how many review rounds ask for revisions before the
	// reviewer approves (1: the first round asks, the second approves).
	RevisionRounds int
	// EvidenceRequest, when set, is a missing_evidence request the
	// reviewer adds to its first round: the revision searches for it.
	EvidenceRequest string
	// SubQuestions the planner writes (default 2).
	SubQuestions int
	// Intent the planner reports (default cs_physics).
	Intent string
	// Topics, when set, are the planner's sub-questions instead of the
	// default ones about software testing and chemistry tools; Canonical is
	// then its canonical term.
	Topics    []Topic
	Canonical string
	// Realistic makes answers as long as an 8B model's: analyses of ~250
	// tokens (several findings, quotes and a methodology from the
	// excerpts), reports of ~700. Benchmarks use it, so model time weighs
	// what it weighs in a real run; tests keep answers short.
	Realistic bool
	// PlainReport keeps Realistic's analyses but has the writer restate
	// one finding per source without the long discussion, and obey the
	// prompt's "no references section": the writer tools/peerbench gives
	// both programs it compares, so that neither is charged for prose the
	// other is not asked to write.
	PlainReport bool
	// ByReference makes the writer state each finding by its label
	// ("{F3.1}"), as the writer's prompt invites, instead of copying it.
	ByReference bool
	// MissingSlot is an information slot no analyst ever fills, so every
	// reflection finds it missing (a model that keeps reporting gaps).
	MissingSlot string
	// Slots are the planner's information slots for every sub-question
	// (default: key findings, methods, open problems).
	Slots []string
	// GapQueries are the reflector's queries, one per round (round 1's
	// reflection writes the first); past the list it writes a query made of
	// the missing slot's words and the round number.
	GapQueries []string
	// FollowUpTopics are what the planner writes for a follow-up question
	// (default: the first of the run's topics).
	FollowUpTopics []Topic
	// Careless makes the writer misattribute: every third sentence cites
	// the neighbouring source and every fifth is a sweeping claim no
	// source makes (verifier.go). Paraphrase makes it restate findings in
	// other words.
	Careless, Paraphrase bool
	// Foreign makes the writer write every cited sentence in German, so
	// it shares no words with its English source (a --language run).
	Foreign bool
	// VerifierJudges is how the verifier answers: JudgeCarefully (default),
	// JudgeNothing or JudgeSupported.
	VerifierJudges string
	// BogusCitation makes the writer also cite a source number that does
	// not exist, which finalise must remove.
	BogusCitation bool
	Faults        []Fault
	// Batch is how the analyst answers a call for several sources:
	// BatchAll (default), BatchFirstOnly (it stops after the first
	// source), BatchJunk (broken JSON) or BatchSentences (the form ignored).
	Batch string
	// Screen is how the relevance screener answers (screening.go).
	Screen *ScreenScript

	mu     sync.Mutex
	counts map[string]int
	fired  map[int]bool // indexes into Faults
}

// Fired reports which of Faults were served, by index.
func (s *Script) Fired() []bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]bool, len(s.Faults))
	for i := range out {
		out[i] = s.fired[i]
	}
	return out
}

// Calls is how many calls an agent kind has received.
func (s *Script) Calls(kind string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[kind]
}

// Responder is the ollamafake responder for this script.
func (s *Script) Responder() ollamafake.Responder {
	return func(call ollamafake.ChatCall) ollamafake.Reply {
		kind := KindOf(call)
		s.mu.Lock()
		if s.counts == nil {
			s.counts = map[string]int{}
		}
		s.counts[kind]++
		n := s.counts[kind]
		s.mu.Unlock()
		for i, f := range s.Faults {
			if f.Kind == kind && f.Nth == n {
				s.mu.Lock()
				if s.fired == nil {
					s.fired = map[int]bool{}
				}
				s.fired[i] = true
				s.mu.Unlock()
				return f.Reply
			}
		}
		user := promptText(call)
		switch kind {
		case Planner:
			if strings.Contains(user, "a follow-up to") {
				return ollamafake.Reply{Content: s.followUpPlan(user)}
			}
			if strings.Contains(user, "\nAdded sub-questions:\n") {
				return ollamafake.Reply{Content: addedQueries(user)}
			}
			return ollamafake.Reply{Content: s.plan(user)}
		case Analyst:
			if strings.Contains(user, "\nSources, each read from its abstract only:") {
				return ollamafake.Reply{Content: s.severalAnalyses(user)}
			}
			if s.Realistic {
				return ollamafake.Reply{Content: s.withSlots(s.judged(longAnalysis(user), user), user)}
			}
			return ollamafake.Reply{Content: s.withSlots(s.judged(analysis(user), user), user)}
		case Reflector:
			if strings.Contains(user, "evidence from the session:") {
				return ollamafake.Reply{Content: s.coverage(user)}
			}
			return ollamafake.Reply{Content: s.reflect(user, n)}
		case Translator:
			return ollamafake.Reply{Content: "[translated] " + lastUser(call)}
		case Writer:
			if strings.Contains(user, "\nExecutive summary now:\n") {
				return ollamafake.Reply{Content: updatedSummary(user)}
			}
			if strings.Contains(user, "\nNew sources since ") {
				return ollamafake.Reply{Content: whatsNew(user)}
			}
			if strings.Contains(user, "Follow-up question:") {
				return ollamafake.Reply{Content: section(user)}
			}
			if s.Careless && !strings.Contains(user, "Your previous draft") {
				return ollamafake.Reply{Content: s.carelessReport(user)}
			}
			if only := onlySections(user); only != nil {
				return ollamafake.Reply{Content: s.revisedSections(only, user)}
			}
			rep := s.report(user)
			if s.Realistic && !s.PlainReport {
				rep = lengthen(rep, user)
			}
			if s.Foreign {
				rep = citedInGerman.ReplaceAllString(rep, "Die Autoren berichten darüber$1")
			}
			return ollamafake.Reply{Content: rep, Thinking: "Let me organise the sources by sub-question."}
		case Reviewer:
			return ollamafake.Reply{Content: s.review(n)}
		case Verifier:
			return ollamafake.Reply{Content: s.verdicts(user, n)}
		case Screener:
			return s.screen(lastUser(call), user)
		}
		return ollamafake.Echo(call)
	}
}

// promptText is the call's messages, the system message first: what a
// model reads.
func promptText(call ollamafake.ChatCall) string {
	var b strings.Builder
	for _, m := range call.Messages {
		b.WriteString(m.Content + "\n")
	}
	return b.String()
}

func lastUser(call ollamafake.ChatCall) string {
	for i := len(call.Messages) - 1; i >= 0; i-- {
		if call.Messages[i].Role == "user" {
			return call.Messages[i].Content
		}
	}
	return ""
}

func (s *Script) plan(user string) string {
	n := s.SubQuestions
	if n == 0 {
		n = 2
	}
	subs := []map[string]any{}
	topics := []Topic{
		{"Which software testing techniques are studied in these papers?", "software testing techniques", "software testing", "testing"},
		{"How are large language models augmented with tools for chemistry?", "language models chemistry tools", "llm chemistry", "chemistry"},
		{"What evaluation methods are used to measure the results?", "evaluation methods results", "evaluation", "testing"},
		{"What limitations do the authors report?", "reported limitations", "limitations", "testing"},
	}
	canonical := "testing"
	if len(s.Topics) > 0 {
		topics, canonical, n = s.Topics, s.Canonical, len(s.Topics)
	}
	slots := s.Slots
	if slots == nil {
		slots = []string{"key findings", "methods", "open problems"}
	}
	for i := 0; i < n && i < len(topics); i++ {
		t := topics[i]
		subs = append(subs, map[string]any{"question": t.Question, "queries": queriesAsked(user, t), "slots": slots})
	}
	intent := s.Intent
	if intent == "" {
		intent = "cs_physics"
	}
	plan := map[string]any{"intent": intent, "canonical_term": canonical, "sub_questions": subs}
	if strings.Contains(user, `"title"`) {
		plan["title"] = "Testing and Tool-Augmented Language Models"
	}
	b, _ := json.Marshal(plan)
	return string(b)
}

// queriesAsked are a topic's queries, the broad one only when the
// planner's prompt asks for it (a model writes what it is asked for).
// addedQueries answers the planner's call for the queries of sub-questions
// a person added at the plan review: one entry per numbered line, its
// queries the line's first words.
func addedQueries(user string) string {
	var subs []map[string]any
	_, list, _ := strings.Cut(user, "\nAdded sub-questions:\n")
	for _, line := range strings.Split(list, "\n") {
		_, q, ok := strings.Cut(line, ". ")
		if !ok {
			continue
		}
		w := strings.Fields(strings.ToLower(strings.Trim(q, "?")))
		subs = append(subs, map[string]any{
			"queries": map[string]string{"strict": strings.Join(w[:min(len(w), 5)], " "), "moderate": strings.Join(w[:min(len(w), 3)], " ")},
			"slots":   []string{"key findings", "methods"},
		})
	}
	b, _ := json.Marshal(map[string]any{"sub_questions": subs})
	return string(b)
}

func queriesAsked(user string, t Topic) map[string]string {
	q := map[string]string{"strict": t.Strict, "moderate": t.Moderate}
	if strings.Contains(user, `"broad"`) {
		q["broad"] = t.Broad
	}
	return q
}

// excerptLine is one labelled excerpt of an analyst's prompt, its
// sentences numbered: "[E1] (1) First. (2) Second."
var excerptLine = regexp.MustCompile(`(?m)^\[(E\d+)\] (.+)$`)

// numberedSentence is one "(n) text" of an excerpt line.
var numberedSentence = regexp.MustCompile(`\((\d+)\) `)

// excerptRefs are the sentence references of the prompt's excerpts, in
// order: "E1.1", "E1.2", ..., "E2.1", ...
func excerptRefs(user string) []string {
	var out []string
	for _, m := range excerptLine.FindAllStringSubmatch(user, -1) {
		for _, n := range numberedSentence.FindAllStringSubmatch(m[2], -1) {
			out = append(out, m[1]+"."+n[1])
		}
	}
	return out
}

// fullText says the analyst's source was read in full.
func fullText(user string) bool {
	return regexp.MustCompile(`(?m)^Source: .*, full text$`).MatchString(user)
}

// analysis names the first sentence as the finding, as a terse model would.
func analysis(user string) string {
	refs := excerptRefs(user)
	b, _ := json.Marshal(map[string]any{
		"findings":   refs[:min(1, len(refs))],
		"confidence": 0.8,
	})
	return string(b)
}

// citedInGerman is a cited sentence's words before its citation.
var citedInGerman = regexp.MustCompile(`[^.\n#]*?(\s\[\d+(?:,\s*\d+)*\])`)

var onlyLine = regexp.MustCompile(`(?m)^Rewrite only these sections: (.+?)\. Return only them`)

func (s *Script) review(n int) string {
	if n <= s.RevisionRounds {
		requests := []map[string]string{
			{"kind": "clarity", "section": "Executive summary", "text": "State how well the sources answer each sub-question."},
			{"kind": "structure", "section": "Research gaps", "text": "Tie the gaps to the sub-questions."},
		}
		if s.EvidenceRequest != "" && n == 1 {
			requests = append(requests, map[string]string{"kind": "missing_evidence", "section": "Findings", "text": s.EvidenceRequest})
		}
		b, _ := json.Marshal(map[string]any{
			"approved": false, "summary": "The executive summary should say how complete the evidence is.", "requests": requests,
		})
		return string(b)
	}
	return `{"approved": true, "summary": "The report is well grounded.", "requests": []}`
}

// longAnalysis is an analysis as long as a real model writes to the
// analyst's schema: up to four findings by reference, spread over the
// excerpts, and for a full text a method and a limitation of about twelve
// words each (withSlots adds the slots).
func longAnalysis(user string) string {
	refs := excerptRefs(user)
	var findings []string
	for i := 0; i < len(refs) && len(findings) < 4; i += max(1, len(refs)/4) {
		findings = append(findings, refs[i])
	}
	an := map[string]any{"findings": findings, "confidence": 0.8}
	if fullText(user) {
		an["method"] = "An empirical study comparing the proposed approach against earlier baselines."
		an["limits"] = "Evaluated only in the settings the authors chose."
	}
	b, _ := json.Marshal(an)
	return string(b)
}

var slotsLine = regexp.MustCompile(`(?m)^Information slots:(.+)$`)

// withSlots adds to an analysis the numbered slots listed in the prompt
// ("Information slots: 1 key findings; 2 methods;"), each shown by the
// first excerpt sentence, except MissingSlot.
func (s *Script) withSlots(analysis, user string) string {
	var an map[string]any
	if json.Unmarshal([]byte(analysis), &an) != nil {
		return analysis
	}
	refs := excerptRefs(user)
	slots := []string{}
	if m := slotsLine.FindStringSubmatch(user); m != nil && len(refs) > 0 {
		for _, e := range numberedSlot.FindAllStringSubmatch(m[1], -1) {
			if e[2] != s.MissingSlot {
				slots = append(slots, e[1]+":"+refs[0])
			}
		}
	}
	an["slots"] = slots
	b, _ := json.Marshal(an)
	return string(b)
}

var numberedSlot = regexp.MustCompile(`(\d+) ([^;]+);`)

var unfilledLine = regexp.MustCompile(`(?m)^- (q\d+): .*\n(?:  .*\n)*?  unfilled: (.+)$`)

// reflect reports the unfilled slots the prompt lists, with a new query.
func (s *Script) reflect(user string, n int) string {
	var subs []map[string]any
	for _, m := range unfilledLine.FindAllStringSubmatch(user, -1) {
		if m[2] == "none" {
			continue
		}
		missing := strings.Split(m[2], ", ")
		q := fmt.Sprintf("%s round %d", missing[0], n+1)
		if n <= len(s.GapQueries) {
			q = s.GapQueries[n-1]
		}
		subs = append(subs, map[string]any{"id": m[1], "missing": missing, "queries": []string{q}})
	}
	if subs == nil {
		subs = []map[string]any{}
	}
	b, _ := json.Marshal(map[string]any{"sub_questions": subs})
	return string(b)
}

func (s *Script) followUpPlan(user string) string {
	topics := s.FollowUpTopics
	if len(topics) == 0 {
		topics = []Topic{{"Which software testing techniques are studied in these papers?", "software testing techniques", "software testing", "testing"}}
	}
	var subs []map[string]any
	for _, t := range topics {
		subs = append(subs, map[string]any{"question": t.Question, "queries": queriesAsked(user, t),
			"slots": []string{"key findings"}})
	}
	b, _ := json.Marshal(map[string]any{"intent": "cs_physics", "canonical_term": "testing", "sub_questions": subs})
	return string(b)
}

var coverageBlock = regexp.MustCompile(`(?m)^- (q\d+): (.+)\n  slots: .*\n  evidence from the session:\n((?:    .*\n?)*)`)

// coverage says a follow-up sub-question is answered when most of its
// words are in the session's passages, as a careful reader would judge.
func (s *Script) coverage(user string) string {
	subs := []map[string]any{}
	for _, m := range coverageBlock.FindAllStringSubmatch(user, -1) {
		evidence := strings.ToLower(m[3])
		var words, found int
		for _, w := range strings.Fields(strings.ToLower(m[2])) {
			w = strings.Trim(w, "?,.;:")
			if len(w) < 5 || coverageStop[w] {
				continue
			}
			words++
			if strings.Contains(evidence, w) {
				found++
			}
		}
		if words > 0 && 2*found >= words {
			continue
		}
		q := strings.Join(strings.Fields(m[2])[:min(4, len(strings.Fields(m[2])))], " ")
		if len(s.GapQueries) > 0 {
			q = s.GapQueries[0]
		}
		subs = append(subs, map[string]any{"id": m[1], "missing": []string{"key findings"}, "queries": []string{q}})
	}
	b, _ := json.Marshal(map[string]any{"sub_questions": subs})
	return string(b)
}

var coverageStop = map[string]bool{"which": true, "these": true, "those": true, "about": true, "there": true, "their": true, "study": true, "studied": true, "papers": true, "paper": true, "known": true}

var batchSource = regexp.MustCompile(`(?m)^Source (\d+): .*$`)

// How the analyst answers a call for several sources (Script.Batch).
const (
	BatchAll       = ""
	BatchFirstOnly = "first-only"
	BatchJunk      = "junk"
	// BatchSentences is a small model ignoring the answer's form: each
	// finding a sentence of its own words instead of an excerpt's
	// reference, each slot by its name instead of its number.
	BatchSentences = "sentences"
)

// severalAnalyses answers an analyst's call for several short sources:
// each source analysed by the rules of a single one, from its own
// excerpts (numbered across the batch).
func (s *Script) severalAnalyses(user string) string {
	head, _, _ := strings.Cut(user, "\nSources, each read from its abstract only:")
	locs := batchSource.FindAllStringSubmatchIndex(user, -1)
	if s.Batch == BatchJunk {
		return `{"sources": [{"n": 1, "findings": ["the first`
	}
	if s.Batch == BatchFirstOnly {
		locs = locs[:min(1, len(locs))]
	}
	var out []map[string]any
	for _, l := range locs {
		end := len(user)
		if next := batchSource.FindStringIndex(user[l[1]:]); next != nil {
			end = l[1] + next[0]
		}
		block := head + "\n" + user[l[0]:end]
		one := analysis(block)
		if s.Realistic {
			one = longAnalysis(block)
		}
		one = s.judged(one, block)
		var an map[string]any
		if json.Unmarshal([]byte(s.withSlots(one, block)), &an) != nil {
			continue
		}
		if strings.Contains(user, "the numbers of the information slots") && s.Batch != BatchSentences {
			an["slots"] = slotNumbers(an["slots"])
		}
		if s.Batch == BatchSentences {
			an["findings"] = []string{"The source reports results that bear on the question."}
		}
		n, _ := strconv.Atoi(user[l[2]:l[3]])
		an["n"] = n
		out = append(out, an)
	}
	b, _ := json.Marshal(map[string]any{"sources": out})
	return string(b)
}

// judged sets an analysis's confidence as the script's analyst judges the
// source its prompt block names (ScreenScript.Reads).
func (s *Script) judged(analysis, block string) string {
	c := s.Screen.analystConfidence(block)
	if c == 0.8 {
		return analysis
	}
	var an map[string]any
	if json.Unmarshal([]byte(analysis), &an) != nil {
		return analysis
	}
	an["confidence"] = c
	b, _ := json.Marshal(an)
	return string(b)
}

// slotNumbers keeps only the slot numbers of "2:E1.3" entries.
func slotNumbers(v any) []int {
	out := []int{}
	list, _ := v.([]any)
	for _, e := range list {
		str, _ := e.(string)
		num, _, _ := strings.Cut(str, ":")
		if n, err := strconv.Atoi(num); err == nil {
			out = append(out, n)
		}
	}
	return out
}
