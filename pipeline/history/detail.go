package history

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/store"
)

// SessionDetail is everything stored about a session, as `sessions show
// --json` prints it and the MCP server's get_session returns it: the
// session with its sources, citations, reviews and report. It is built in
// one place so the two front-ends cannot drift apart.
type SessionDetail struct {
	store.Session
	Sources []report.CitedSource      `json:"sources"`
	Metrics *pipeline.CitationMetrics `json:"citations,omitempty"`
	Reviews []pipeline.ReviewRequest  `json:"reviews,omitempty"`
	// Decisions: the person's (or the policy's) answer to each review
	// round, in the order of Reviews, with the note typed for the writer.
	Decisions []pipeline.Decision `json:"decisions,omitempty"`
	// Funnel: candidates found, read, analysed, cited.
	Funnel *pipeline.Funnel `json:"funnel,omitempty"`
	// Flow: the PRISMA 2020 flow's counts (runs that recorded them).
	Flow *report.Flow `json:"prisma,omitempty"`
	// PlanReview: what the person did with the plan (--review-plan ask).
	PlanReview *pipeline.PlanReview `json:"plan_review,omitempty"`
	// Rounds: each research round's queries, chased sources, counts and
	// the slots still missing after it.
	Rounds []pipeline.RoundSummary `json:"rounds,omitempty"`
	// Versions: the report as the run wrote it, then after each follow-up.
	Versions []pipeline.Version `json:"versions"`
	// Updates: each living-review check (update.go): searches, works seen,
	// new and kept, the version written, tokens and time.
	Updates []pipeline.UpdateCheck `json:"updates,omitempty"`
	// Scores: review outcome, steps, grounding, citations, model use.
	Scores *RunScores `json:"scores,omitempty"`
	// Candidates: every search result considered, with its relevance and
	// why it was or was not read.
	Candidates []pipeline.Candidate `json:"candidates"`
	// Screen: the relevance screen's calls, its tokens and the analysis
	// tokens it saved.
	Screen *pipeline.ScreenReport `json:"screen,omitempty"`
	// Support: every cited sentence of the report with its verdict and the
	// passage that supports it; Repairs: the sentences the verifier
	// re-cited, uncited or dropped (verify.go).
	Support []pipeline.CitationSupport `json:"support,omitempty"`
	Repairs []pipeline.SentenceCheck   `json:"repairs,omitempty"`
}

// LoadDetail reads a session and everything recorded about it. A session
// that never reached a report has empty (not missing) lists. The error is
// store.ErrNotFound for an unknown ID.
func LoadDetail(st store.Reader, id string) (SessionDetail, error) {
	s, err := st.Session(id)
	if err != nil {
		return SessionDetail{}, err
	}
	d := SessionDetail{Session: s, Sources: []report.CitedSource{}, Candidates: []pipeline.Candidate{}, Versions: []pipeline.Version{}}
	if rep, err := pipeline.LoadReport(st, s.ID); err == nil {
		d.Sources, d.Metrics, d.Reviews, d.Funnel, d.Rounds = rep.Sources, &rep.Metrics, rep.Reviews, &rep.Funnel, rep.Rounds
		d.Support, d.Repairs, d.Flow, d.PlanReview = rep.Support, rep.Repairs, rep.Flow, rep.PlanReview
		d.Decisions = rep.Decisions
	}
	if d.Decisions == nil {
		d.Decisions = decisionCheckpoints(st, s.ID) // an unfinished run: its report does not exist yet
	}
	if cs, err := pipeline.LoadCandidates(st, s.ID); err == nil && cs != nil {
		d.Candidates = cs
	}
	if raw, ok, err := st.Checkpoint(s.ID, pipeline.CheckpointPlanReview); d.PlanReview == nil && err == nil && ok {
		var pr pipeline.PlanReview // an unfinished run: its report does not exist yet
		if json.Unmarshal(raw, &pr) == nil {
			d.PlanReview = &pr
		}
	}
	if raw, ok, err := st.Checkpoint(s.ID, pipeline.CheckpointScreen); err == nil && ok {
		var sr pipeline.ScreenReport
		if json.Unmarshal(raw, &sr) == nil {
			d.Screen = &sr
		}
	}
	if sc, err := LoadScores(st, s.ID); err == nil {
		d.Scores = &sc
	}
	if cs, err := pipeline.LoadUpdateChecks(st, s.ID); err == nil {
		d.Updates = cs
	}
	if vs, err := pipeline.LoadVersions(st, s.ID); err == nil && vs != nil {
		d.Versions = vs
	}
	return d, nil
}

// ReadBy maps source keys to the sessions that read them (newest session
// first). It answers "which of my sessions read this passage?" for a
// knowledge search. Each session's read keys are decoded once and kept
// (readSets) while the session is unchanged, so a search costs a walk of
// the sessions' stamps, not a decoding of every session's candidates (with
// 2,000 sessions that decoding made each MCP search_knowledge call hold
// megabytes and grew with the store).
func ReadBy(st store.Reader, keys []string) (map[string][]string, error) {
	want := map[string]bool{}
	for _, k := range keys {
		want[k] = true
	}
	out := map[string][]string{}
	if len(want) == 0 {
		return out, nil
	}
	stamps, err := st.SessionStamps()
	if err != nil {
		return nil, err
	}
	for _, s := range stamps {
		for k := range readSets.of(st, s) {
			if want[k] {
				out[k] = append(out[k], s.ID)
			}
		}
	}
	for k := range out {
		sort.SliceStable(out[k], func(i, j int) bool { return out[k][i] > out[k][j] })
	}
	return out, nil
}

// readSetCache holds the keys each session read, by session ID and the
// time it was last updated (a follow-up adds candidates and updates it).
type readSetCache struct {
	mu   sync.Mutex
	sets map[readSetKey]map[string]bool
}

type readSetKey struct {
	id      string
	updated time.Time
}

// maxReadSets bounds the cache: past it, it starts again (a few keys per
// session: some megabytes at most).
const maxReadSets = 20000

var readSets = &readSetCache{sets: map[readSetKey]map[string]bool{}}

// of is the set of source keys session s read (empty when it ranked none).
func (c *readSetCache) of(st store.Reader, s store.SessionStamp) map[string]bool {
	k := readSetKey{s.ID, s.UpdatedAt}
	c.mu.Lock()
	set, ok := c.sets[k]
	c.mu.Unlock()
	if ok {
		return set
	}
	set = map[string]bool{}
	if raw, found, err := st.Checkpoint(s.ID, pipeline.CheckpointCandidates); err == nil && found {
		var cands []struct {
			Key  string `json:"key"`
			Read bool   `json:"read"`
		}
		if json.Unmarshal(raw, &cands) == nil {
			for _, cd := range cands {
				if cd.Read {
					set[cd.Key] = true
				}
			}
		}
	}
	if s.Status == store.StatusRunning || s.Status == store.StatusAwaitingReview {
		return set // still changing: not kept
	}
	c.mu.Lock()
	if len(c.sets) >= maxReadSets {
		c.sets = map[readSetKey]map[string]bool{}
	}
	c.sets[k] = set
	c.mu.Unlock()
	return set
}

// ReportVersion is the report as it was at version n: its Markdown, and the
// sources its references list (numbers never change between versions).
func ReportVersion(st store.Reader, latest pipeline.Report, n int) (pipeline.Report, error) {
	vs, err := pipeline.LoadVersions(st, latest.SessionID)
	if err != nil {
		return pipeline.Report{}, err
	}
	for _, v := range vs {
		if v.N != n {
			continue
		}
		rep := latest
		rep.Markdown = v.Report
		refs := v.Report
		if loc := report.RefsHeadingPattern().FindStringIndex(refs); loc != nil {
			refs = refs[loc[1]:]
		}
		rep.Sources = nil
		for _, s := range latest.Sources {
			if strings.Contains(refs, fmt.Sprintf("\n[%d] ", s.N)) {
				rep.Sources = append(rep.Sources, s)
			}
		}
		return rep, nil
	}
	return pipeline.Report{}, fmt.Errorf("session %s has no version %d (it has %d)", latest.SessionID, n, len(vs))
}

// ReferencesSince is the report with only the sources added after
// version n (an update's or follow-up's new works), for a reference
// manager: citation numbers are stable, so they are the sources version n
// does not list.
func ReferencesSince(st store.Reader, latest pipeline.Report, n int) (pipeline.Report, error) {
	old, err := ReportVersion(st, latest, n)
	if err != nil {
		return old, err
	}
	had := map[int]bool{}
	for _, s := range old.Sources {
		had[s.N] = true
	}
	rep := latest
	rep.Sources = nil
	for _, s := range latest.Sources {
		if !had[s.N] {
			rep.Sources = append(rep.Sources, s)
		}
	}
	return rep, nil
}

// decisionCheckpoints are the review decisions a run recorded so far
// (checkpoints decision/1, decision/2, …).
func decisionCheckpoints(st store.Reader, id string) []pipeline.Decision {
	var out []pipeline.Decision
	for round := 1; ; round++ {
		raw, ok, err := st.Checkpoint(id, fmt.Sprintf("decision/%d", round))
		if err != nil || !ok {
			return out
		}
		var d pipeline.Decision
		if json.Unmarshal(raw, &d) != nil {
			return out
		}
		out = append(out, d)
	}
}
