package pipeline

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/textkit"
)

// CheckpointCandidates holds every candidate of a run with its score and
// why it was or was not read.
const CheckpointCandidates = "candidates"

// checkpointRounds holds the research rounds' summaries.
const checkpointRounds = "rounds"

// checkpointUnread lists the sources cut short on purpose.
const checkpointUnread = "unread"

// Funnel is how a run narrowed what it found down to what it cited.
type Funnel struct {
	Found    int `json:"found"`    // distinct candidates
	Read     int `json:"read"`     // sources read (full text or abstract)
	Analysed int `json:"analysed"` // sources whose analysis was kept
	Cited    int `json:"cited"`    // sources the report cites
	// CitedOfRead is the share of read sources that ended up cited.
	CitedOfRead float64 `json:"cited_of_read"`
	// BySubQ is the same narrowing for each sub-question (funnel.go).
	BySubQ []SubQuestionFunnel `json:"by_subq,omitempty"`
	// TitleOnlyLookedUp works known by title only had their abstracts
	// looked up; AbstractsFound of them were found (gather_stream.go).
	TitleOnlyLookedUp int `json:"title_only_looked_up,omitempty"`
	AbstractsFound    int `json:"abstracts_found,omitempty"`
}

// LoadCandidates reads a session's candidates (nil when the run has not
// ranked any yet, or predates ranking), then those of each update check
// (Candidate.Update says which). It needs no model backend.
func LoadCandidates(st store.Reader, id string) ([]Candidate, error) {
	raw, ok, err := st.Checkpoint(id, CheckpointCandidates)
	if err != nil || !ok {
		return nil, err
	}
	var out []Candidate
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	checks, _ := LoadUpdateChecks(st, id)
	for _, c := range checks {
		raw, ok, err := st.Checkpoint(id, fmt.Sprintf("up%d/%s", c.N, CheckpointCandidates))
		var more []Candidate
		if err == nil && ok && json.Unmarshal(raw, &more) == nil {
			out = append(out, more...)
		}
	}
	return out, nil
}

// funnel counts the run's narrowing from its candidates, analyses and the
// number of sources the report cites.
func (o *orchestrator) funnel(cited []string) Funnel {
	f := Funnel{Analysed: len(o.st.Analyses), Cited: len(cited)}
	if o.st.Found != nil {
		f.Read = len(o.st.Found.Records)
	}
	var cands []Candidate
	if ok, _ := o.loadCheckpoint(CheckpointCandidates, &cands); ok {
		seen := map[string]bool{}
		for _, c := range cands {
			seen[c.Key] = true
		}
		f.Found = len(seen)
		f.BySubQ = o.subQuestionFunnels(cands, cited)
	}
	f.Found = max(f.Found, f.Read)
	if l := o.st.Ledger; l != nil {
		f.TitleOnlyLookedUp, f.AbstractsFound = l.AbstractsAsked, l.AbstractsFound
	}
	if f.Read > 0 {
		f.CitedOfRead = float64(f.Cited) / float64(f.Read)
	}
	return f
}

// mdTexts is mdText of each of ss: slot names the planner wrote and
// titles from the web, as the Method section prints them.
func mdTexts(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = report.MDText(s)
	}
	return out
}

// methodNote (the Method section's text, without its heading) says how
// the report's sources were found: the rounds, what
// each searched and followed, and how the run narrowed what it found.
func (o *orchestrator) methodNote(f Funnel, flow *report.Flow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Searched %s for %s", strings.Join(o.searchedSources(flow), ", "), textkit.Plural(len(o.st.Plan.SubQuestions), "sub-question", "sub-questions"))
	if n := len(o.st.Rounds); n > 1 {
		fmt.Fprintf(&b, " in %d rounds", n) // n > 1
	}
	fmt.Fprintf(&b, ": %s found, %d read, %d analysed, %d cited.", textkit.Plural(f.Found, "candidate", "candidates"), f.Read, f.Analysed, f.Cited)
	for _, r := range o.st.Rounds {
		if r.Round == 1 {
			continue
		}
		fmt.Fprintf(&b, " Round %d looked for what was missing (%s)", r.Round, orNone(mdTexts(r.Missing0)))
		var how []string
		if len(r.Queries) > 0 {
			how = append(how, fmt.Sprintf("with %s", textkit.Plural(len(r.Queries), "new query", "new queries")))
		}
		if len(r.Chased) > 0 {
			how = append(how, "by following the references and citing works of "+textkit.Plural(len(r.Chased), "source", "sources"))
		}
		if len(how) > 0 {
			b.WriteString(" " + strings.Join(how, " and "))
		}
		if r.Found > 0 && r.Read == 0 {
			fmt.Fprintf(&b, ": %s, none relevant enough to read.", textkit.Plural(r.Found, "new candidate", "new candidates"))
			continue
		}
		fmt.Fprintf(&b, ": %s, %d read, %d analysed.", textkit.Plural(r.Found, "new candidate", "new candidates"), r.Read, r.Analysed)
	}
	if len(o.st.Rounds) > 0 {
		if last := o.st.Rounds[len(o.st.Rounds)-1]; len(last.Missing) > 0 {
			fmt.Fprintf(&b, " Still not covered by any source: %s.", strings.Join(mdTexts(last.Missing), ", "))
		}
	}
	if len(o.st.Unread) > 0 {
		fmt.Fprintf(&b, " Not read in full: %s.", strings.Join(mdTexts(o.st.Unread), "; "))
	}
	if f.TitleOnlyLookedUp > 0 {
		fmt.Fprintf(&b, " Of %s known by title only, %d had an abstract that could be found and used to judge relevance.", textkit.Plural(f.TitleOnlyLookedUp, "work", "works"), f.AbstractsFound)
	}
	b.WriteString(o.screenNote())
	if note := subQuestionNote(f.BySubQ); note != "" {
		b.WriteString(" " + note)
	}
	return b.String()
}

// searchedSources are the plan's sources as the Method names them: one
// that found nothing in any round says so ("local (nothing found)"), so
// an empty library is not claimed as searched material, and one whose
// searches failed says that instead ("crossref (did not answer)").
func (o *orchestrator) searchedSources(flow *report.Flow) []string {
	if flow == nil {
		return o.st.Plan.Sources
	}
	found := map[string]int{}
	for _, r := range flow.Databases {
		found[r.Route] += r.Records
	}
	out := make([]string, 0, len(o.st.Plan.Sources))
	for _, s := range o.st.Plan.Sources {
		if found[s] == 0 {
			if _, failed := o.searchFailed.Load(s); failed {
				s += " (did not answer)"
			} else {
				s += " (nothing found)"
			}
		}
		out = append(out, s)
	}
	return out
}

// SubQuestionFunnel is, for one sub-question, how many on-topic
// candidates were found and how many of them were read, analysed and
// cited (`sessions show --json` funnel.by_subq, the Method section), so a
// person sees what was left out. A source shared by several sub-questions
// counts for each.
type SubQuestionFunnel struct {
	ID       string `json:"id"`
	Question string `json:"question"`
	Found    int    `json:"found"`    // distinct candidates
	Relevant int    `json:"relevant"` // cleared the floors and the screen: read, or left for want of room
	Screened int    `json:"screened"` // judged by the model's relevance screen
	OnTopic  int    `json:"on_topic"` // of them, judged on topic
	Read     int    `json:"read"`
	Analysed int    `json:"analysed"` // analysed and kept (as the run's funnel counts)
	Cited    int    `json:"cited"`
}

// subQuestionFunnels counts each sub-question's narrowing from the run's
// candidates, the sources read for it, the kept analyses and the cited keys.
func (o *orchestrator) subQuestionFunnels(cands []Candidate, cited []string) []SubQuestionFunnel {
	kept, isCited := map[string]bool{}, map[string]bool{}
	for _, an := range o.st.Analyses {
		kept[an.SourceKey] = true
	}
	for _, k := range cited {
		isCited[k] = true
	}
	var out []SubQuestionFunnel
	for _, sq := range o.st.Plan.SubQuestions {
		f := SubQuestionFunnel{ID: sq.ID, Question: sq.Question}
		found, relevant := map[string]bool{}, map[string]bool{}
		screened, on := map[string]bool{}, map[string]bool{}
		for _, c := range cands {
			if c.SubQ != sq.ID {
				continue
			}
			found[c.Key] = true
			if isVerdict(c.Screen) {
				screened[c.Key] = true
				on[c.Key] = on[c.Key] || c.Screen == screenOnTopic
			}
			if c.Read || c.Reason == reasonQuota || c.Reason == reasonRunCap {
				relevant[c.Key] = true
			}
		}
		read := map[string]bool{}
		if o.st.Found != nil {
			for _, k := range o.st.Found.BySubQ[sq.ID] {
				read[k] = true
			}
		}
		for k := range read {
			relevant[k] = true
			if kept[k] {
				f.Analysed++
				if isCited[k] {
					f.Cited++
				}
			}
		}
		f.Found, f.Relevant, f.Read = len(found), len(relevant), len(read)
		f.Screened = len(screened)
		for _, v := range on {
			if v {
				f.OnTopic++
			}
		}
		out = append(out, f)
	}
	return out
}

// subQuestionNote is the Method section's sentence per sub-question. A
// sub-question is the planner's text: escaped, so it can add no link,
// image or HTML to the report or its HTML export.
func subQuestionNote(fs []SubQuestionFunnel) string {
	var parts []string
	for _, f := range fs {
		q := report.MDText(textkit.CleanLine(f.Question))
		if f.Screened > 0 {
			parts = append(parts, fmt.Sprintf("for %s (%s): of %d found, %d screened, %d judged on topic, %d read, %d analysed, %d cited",
				f.ID, q, f.Found, f.Screened, f.OnTopic, f.Read, f.Analysed, f.Cited))
			continue
		}
		parts = append(parts, fmt.Sprintf("for %s (%s): %s relevant by their words of %d found, %d read, %d analysed, %d cited",
			f.ID, q, textkit.Plural(f.Relevant, "candidate", "candidates"), f.Found, f.Read, f.Analysed, f.Cited))
	}
	if len(parts) == 0 {
		return ""
	}
	return "By sub-question (a source read for several counts for each), " + strings.Join(parts, "; ") + "."
}
