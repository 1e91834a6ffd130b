package eval

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/textkit"
)

// Judge says how cited sentences are judged: by their words, against the
// recorded text of what they cite. No model judges, least of all the one
// under test.
const Judge = "lexical match against the recorded text"

// SupportThreshold is the share of a cited sentence's content words (words
// less stop words, lightly stemmed) that the recorded title and abstract of
// one of its cited sources must hold for the sentence to count as
// supported. A sentence that restates its source clears it; one citing
// the wrong work, or claiming what no cited work says, does not. A close
// paraphrase may not: the lexical judge is strict, never generous.
const SupportThreshold = 0.6

// Result is one run of one question, scored.
type Result struct {
	Question string `json:"question"`
	Run      int    `json:"run"`
	// Session is the run's session in its temporary store, gone when the
	// eval ends: not in --json, where no command could open it.
	Session string `json:"-"`
	// Error is why the run gave no report; its scores are then zero.
	Error string `json:"error,omitempty"`

	Cited        int     `json:"cited"`          // sources in the report's reference list
	CitedOnTopic int     `json:"cited_on_topic"` // of them, works on topic
	OnTopic      int     `json:"on_topic"`       // on-topic works in the world
	OnTopicCited int     `json:"on_topic_cited"` // of them, cited (a work and its revision count once)
	Recall       float64 `json:"recall"`         // distinct on-topic works cited ÷ OnTopic
	Precision    float64 `json:"precision"`      // CitedOnTopic ÷ Cited

	Facts        int      `json:"facts"`
	FactsCovered int      `json:"facts_covered"`
	FactsMissed  []string `json:"facts_missed,omitempty"`

	CitedSentences int     `json:"cited_sentences"`
	Supported      int     `json:"supported"`       // cited sentences the recorded text of a cited work holds
	SupportedShare float64 `json:"supported_share"` // Supported ÷ CitedSentences
	// SupportedByWords are those the lexical judge accepted; the rest of
	// Supported the model judge (--judge) accepted as paraphrase.
	SupportedByWords int `json:"supported_by_words"`
	Judged           int `json:"judged,omitempty"`             // sentences put to the model judge
	SupportedByJudge int `json:"supported_by_judge,omitempty"` // of them, accepted
	JudgeUnclear     int `json:"judge_unclear,omitempty"`      // answers that said neither yes nor no, or failed
	JudgeTokens      int `json:"judge_tokens,omitempty"`       // the judge's prompt and generated tokens (not the model's)
	// Unfounded are the question's unfounded claims (facts no recorded
	// work states) that the report states, cited or not.
	Unfounded       int      `json:"unfounded"`
	UnfoundedStated []string `json:"unfounded_stated,omitempty"`
	// Unsupported are a few of the sentences that failed, for reading.
	Unsupported []string `json:"unsupported,omitempty"`
	Repaired    int      `json:"repaired"` // sentences the pipeline's verifier re-cited, uncited or dropped

	PromptTokens    int     `json:"prompt_tokens"`
	GeneratedTokens int     `json:"generated_tokens"`
	ModelCalls      int     `json:"model_calls"` // chat requests (each retry one more); embeddings apart
	WallSeconds     float64 `json:"wall_seconds"`
	// ParseFailures are structured answers that stayed unparsable after
	// repair and retry (the call fell back), per agent; Unusable the
	// warnings saying an agent's answer was unusable, per agent.
	// Assembled is set when the writer's drafts were unusable and the
	// pipeline assembled the report from the analyses: its scores then
	// measure that fallback more than the model.
	Assembled bool `json:"assembled"`
	// FailedCalls are chat calls the model did not answer (an error, or
	// nothing generated).
	FailedCalls   int            `json:"unanswered"`
	ParseFailures map[string]int `json:"parse_failures,omitempty"`
	Unusable      map[string]int `json:"unusable_answers,omitempty"`

	rejected []rejection // for the model judge
}

// Score scores a finished run of q: its report against the ground truth and
// the world's recorded text, its events for what it cost.
func Score(q Question, w *World, rep pipeline.Report, evs []pipeline.Event) Result {
	r := Result{Question: q.ID, Session: rep.SessionID, OnTopic: len(q.OnTopic), Facts: len(q.Facts)}
	byN := map[int]*Paper{}
	covered := map[string]bool{}
	for _, s := range rep.Sources {
		r.Cited++
		p := w.Find(s.Key, s.URL, s.DOI, s.Title)
		title := s.Title
		if p != nil {
			byN[s.N] = p
			title = p.Title
		}
		if prefix, ok := q.On(title); ok {
			r.CitedOnTopic++
			covered[prefix] = true
		}
	}
	r.OnTopicCited = len(covered)
	r.Recall, r.Precision = ratio(r.OnTopicCited, r.OnTopic), ratio(r.CitedOnTopic, r.Cited)

	body := BodySentences(rep.Markdown)
	r.UnfoundedStated = statedUnfounded(q, body)
	r.Unfounded = len(r.UnfoundedStated)
	sentences := CitedSentences(rep.Markdown)
	textOf := map[*Paper]map[string]bool{}
	recorded := func(p *Paper) map[string]bool {
		if textOf[p] == nil {
			textOf[p] = set(words(p.Title + ". " + p.Abstract))
		}
		return textOf[p]
	}
	facts := make([]map[string]bool, len(q.Facts))
	for i, f := range q.Facts {
		facts[i] = set(content(f.Words))
	}
	stated := make([]bool, len(q.Facts))
	for _, s := range sentences {
		r.CitedSentences++
		claim := set(content(s.Text))
		all := set(words(s.Text))
		best := 0.0
		for _, n := range s.Cites {
			p := byN[n]
			if p == nil {
				continue
			}
			text := recorded(p)
			if c := overlap(claim, text); c > best {
				best = c
			}
			for i, fw := range facts {
				if !stated[i] && len(fw) > 0 && subset(fw, all) && subset(fw, text) {
					stated[i] = true
				}
			}
		}
		if len(claim) > 0 && best >= SupportThreshold {
			r.SupportedByWords++
			continue
		}
		rej := rejection{text: s.Text}
		for _, n := range s.Cites {
			if p := byN[n]; p != nil && len(claim) > 0 {
				rej.papers = append(rej.papers, p)
			}
		}
		r.rejected = append(r.rejected, rej)
	}
	r.settleSupport()
	for i, ok := range stated {
		if ok {
			r.FactsCovered++
		} else {
			r.FactsMissed = append(r.FactsMissed, q.Facts[i].ID)
		}
	}
	for _, ch := range rep.Repairs {
		if ch.Action != pipeline.ActionKept {
			r.Repaired++
		}
	}
	r.addEvents(evs)
	return r
}

// rejection is a cited sentence the lexical judge did not accept, with the
// recorded works it cites (none: nothing for a model judge to read).
type rejection struct {
	text     string
	papers   []*Paper
	accepted bool // by the model judge
}

// settleSupport totals the sentences supported by either judge and keeps
// a few of the rest for reading.
func (r *Result) settleSupport() {
	r.Supported = r.SupportedByWords + r.SupportedByJudge
	r.SupportedShare = ratio(r.Supported, r.CitedSentences)
	r.Unsupported = nil
	for _, rej := range r.rejected {
		if !rej.accepted && len(r.Unsupported) < 3 {
			r.Unsupported = append(r.Unsupported, textkit.Clip(rej.text, 160))
		}
	}
}

// JudgeParaphrase puts each sentence the lexical judge rejected to the
// model judge, source by source among the recorded works it cites, until
// one is said to support it. An answer that says neither yes nor no, or a
// call that fails, leaves the sentence unsupported and is counted; only a
// cancelled context stops it.
func (r *Result) JudgeParaphrase(ctx context.Context, j *ModelJudge) error {
	if j == nil || j.Model == "" {
		return nil
	}
	for i := range r.rejected {
		rej := &r.rejected[i]
		if len(rej.papers) == 0 || rej.accepted {
			continue
		}
		r.Judged++
		for _, p := range rej.papers {
			v, use, err := j.Ask(ctx, rej.text, p)
			r.JudgeTokens += use.PromptTokens + use.CompletionTokens
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err != nil || v == Unclear {
				r.JudgeUnclear++
			}
			if v == Yes {
				rej.accepted = true
				r.SupportedByJudge++
				break
			}
		}
	}
	r.settleSupport()
	return nil
}

// addEvents counts what the run's events say it cost: tokens and calls
// from every ModelCalled event's own usage, failed parses from its
// structured outcome, and the warnings that call an answer unusable.
func (r *Result) addEvents(evs []pipeline.Event) {
	for _, ev := range evs {
		switch ev.Type {
		case pipeline.ModelCalled:
			if ev.Usage != nil {
				r.PromptTokens += ev.Usage.PromptTokens
				r.GeneratedTokens += ev.Usage.CompletionTokens
			}
			if ev.Call != nil && ev.Call.Operation == "chat" {
				r.ModelCalls += max(ev.Call.Attempts, 1) // a retried call is several requests
				if unanswered(ev) {
					r.FailedCalls++
				}
			}
			if ev.Call != nil && ev.Call.Structured == pipeline.StructuredFallback {
				r.ParseFailures = inc(r.ParseFailures, agentOf(ev))
			}
		case pipeline.Warning:
			if ev.Outcome == pipeline.OutcomeUnusable || ev.Outcome == pipeline.OutcomeAssembled { // the writer's drafts went unused
				r.Unusable = inc(r.Unusable, agentOf(ev))
			}
			if ev.Outcome == pipeline.OutcomeAssembled {
				r.Assembled = true
			}
		}
	}
}

// unanswered reports whether a chat call got no answer from the model: an
// error, or nothing generated (a structured call that fell back after its
// requests failed logs no error of its own).
func unanswered(ev pipeline.Event) bool {
	return ev.Call.Error != "" || ev.Usage == nil || ev.Usage.CompletionTokens == 0
}

// chatFailures counts a run's chat calls and those the model did not
// answer, with the first error's message.
func chatFailures(evs []pipeline.Event) (chats, failed int, first string) {
	for _, ev := range evs {
		if ev.Type != pipeline.ModelCalled || ev.Call == nil || ev.Call.Operation != "chat" {
			continue
		}
		chats++
		if unanswered(ev) {
			failed++
			if first == "" && ev.Call.Error != "" {
				first = textkit.Clip(ev.Call.Error, 120)
			}
		}
	}
	if first == "" {
		first = "nothing generated"
	}
	return chats, failed, first
}

// agentOf names the agent an event is from by its kind: "analyst 2",
// "researcher q1" and "reading plan (round 1)" are analyst, researcher
// and reading plan.
func agentOf(ev pipeline.Event) string {
	a := ev.Agent
	if i := strings.Index(a, " ("); i > 0 {
		a = a[:i]
	}
	f := strings.Fields(a)
	for len(f) > 1 && strings.ContainsAny(f[len(f)-1], "0123456789") {
		f = f[:len(f)-1]
	}
	switch {
	case len(f) > 0:
		return strings.Join(f, " ")
	case ev.Stage != "":
		return string(ev.Stage)
	}
	return "run"
}

func inc(m map[string]int, k string) map[string]int {
	if m == nil {
		m = map[string]int{}
	}
	m[k]++
	return m
}

// States reports whether text states f: it holds every content word of
// f.Words (compared as words: lower case, lightly stemmed).
func States(text string, f Fact) bool {
	fw := set(content(f.Words))
	return len(fw) > 0 && subset(fw, set(words(text)))
}

// Sentence is a sentence of a report's body with the citations it carries.
type Sentence struct {
	Text  string // without its citation marks
	Cites []int  // the [n] it cites, as numbered in the report
}

var (
	citeMark   = regexp.MustCompile(`\[(\d+(?:\s*[,;–-]\s*\d+)*)\]`)
	refSection = regexp.MustCompile(`(?im)^#{1,6}\s*(references|bibliography|sources|works cited)\s*$`)
)

// CitedSentences are the sentences of a report's body that cite something.
func CitedSentences(markdown string) []Sentence {
	var out []Sentence
	for _, s := range BodySentences(markdown) {
		if len(s.Cites) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// BodySentences are the sentences of a report's body (before its
// references section; headings and table rows left out), cited or not. The
// split is plain: a sentence ends at . ! or ? followed by a space and a
// capital letter, or at the end of a line.
func BodySentences(markdown string) []Sentence {
	if loc := refSection.FindStringIndex(markdown); loc != nil {
		markdown = markdown[:loc[0]]
	}
	var out []Sentence
	for _, line := range strings.Split(markdown, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "|") {
			continue
		}
		line = strings.TrimLeft(line, "-*+> ")
		for _, s := range splitSentences(line) {
			var cites []int
			for _, m := range citeMark.FindAllStringSubmatch(s, -1) {
				cites = append(cites, expand(m[1])...)
			}
			text := strings.Join(strings.Fields(citeMark.ReplaceAllString(s, "")), " ")
			text = strings.NewReplacer("**", "", "__", "", "`", "").Replace(text)
			out = append(out, Sentence{Text: text, Cites: cites})
		}
	}
	return out
}

func splitSentences(line string) []string {
	rs := []rune(line)
	var out []string
	start := 0
	for i := 0; i < len(rs); i++ {
		if rs[i] != '.' && rs[i] != '!' && rs[i] != '?' {
			continue
		}
		j := i + 1
		for j < len(rs) && rs[j] == ' ' {
			j++
		}
		if j > i+1 && j < len(rs) && unicode.IsUpper(rs[j]) {
			out = append(out, string(rs[start:i+1]))
			start = j
		}
	}
	if start < len(rs) {
		out = append(out, string(rs[start:]))
	}
	return out
}

// expand reads "1, 3–5" as 1 3 4 5.
func expand(group string) []int {
	var out []int
	for _, part := range strings.FieldsFunc(group, func(r rune) bool { return r == ',' || r == ';' }) {
		lo, hi, isRange := strings.Cut(strings.ReplaceAll(part, "–", "-"), "-")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil {
			continue
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(strings.TrimSpace(hi)); err != nil || b < a || b-a > 50 {
				b = a
			}
		}
		for n := a; n <= b; n++ {
			out = append(out, n)
		}
	}
	return out
}

// stop are the words a claim is not made of.
var stop = set(strings.Fields(`a an the and or but nor of in on at to for from by with without as
	is are was were be been being has have had do does did it its this that these those their there
	which who whom whose what when where why how than then so such not no can could may might will would
	shall should must also both either neither each all any some more most other into onto over under
	about between through during before after above below up down out off again further very only own
	same just we our they them he she his her you your i me my one's`))

// words are s's words: lower case, letters and digits (so "GPT-4.5" is
// gpt 4 5 and "73%" is 73), each lightly stemmed.
func words(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		out = append(out, stem(f))
	}
	return out
}

// content are s's words less stop words.
func content(s string) []string {
	var out []string
	for _, w := range words(s) {
		if !stop[w] {
			out = append(out, w)
		}
	}
	return out
}

// stem takes off one common English ending, so "machines" meets
// "machine" and "coupled" meets "coupling".
func stem(w string) string {
	if stop[w] {
		return w
	}
	for _, suf := range []string{"ing", "ed", "es", "s", "e", "al"} {
		if strings.HasSuffix(w, suf) && len([]rune(w))-len(suf) >= 3 && !strings.HasSuffix(w, "ss") {
			return strings.TrimSuffix(w, suf)
		}
	}
	return w
}

func set(ws []string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}

// overlap is the share of claim's words that text holds.
func overlap(claim, text map[string]bool) float64 {
	if len(claim) == 0 {
		return 0
	}
	n := 0
	for w := range claim {
		if text[w] {
			n++
		}
	}
	return float64(n) / float64(len(claim))
}

func subset(a, b map[string]bool) bool {
	for w := range a {
		if !b[w] {
			return false
		}
	}
	return true
}
