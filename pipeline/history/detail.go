package history

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/store"
)

// SessionDetail is everything stored about a session, as `sessions show
// --json` prints it and the MCP server's get_session returns it: the
// session with its sources, citations, reviews and report. It is built in
// one place so the two front-ends cannot drift apart.
type SessionDetail struct {
	store.Session
	Sources []pipeline.CitedSource    `json:"sources"`
	Metrics *pipeline.CitationMetrics `json:"citations,omitempty"`
	Reviews []pipeline.ReviewRequest  `json:"reviews,omitempty"`
	// Funnel: candidates found, read, analysed, cited.
	Funnel *pipeline.Funnel `json:"funnel,omitempty"`
	// Flow: the PRISMA 2020 flow's counts (runs that recorded them).
	Flow *pipeline.Flow `json:"prisma,omitempty"`
	// PlanReview: what the person did with the plan (--review-plan ask).
	PlanReview *pipeline.PlanReview `json:"plan_review,omitempty"`
	// Rounds: each research round's queries, chased sources, counts and
	// the slots still missing after it.
	Rounds []pipeline.RoundSummary `json:"rounds,omitempty"`
	// Versions: the report as the run wrote it, then after each follow-up.
	Versions []pipeline.Version `json:"versions"`
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
	d := SessionDetail{Session: s, Sources: []pipeline.CitedSource{}, Candidates: []pipeline.Candidate{}, Versions: []pipeline.Version{}}
	if rep, err := pipeline.LoadReport(st, s.ID); err == nil {
		d.Sources, d.Metrics, d.Reviews, d.Funnel, d.Rounds = rep.Sources, &rep.Metrics, rep.Reviews, &rep.Funnel, rep.Rounds
		d.Support, d.Repairs, d.Flow, d.PlanReview = rep.Support, rep.Repairs, rep.Flow, rep.PlanReview
	}
	if cs, err := pipeline.LoadCandidates(st, s.ID); err == nil && cs != nil {
		d.Candidates = cs
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
	if vs, err := pipeline.LoadVersions(st, s.ID); err == nil && vs != nil {
		d.Versions = vs
	}
	return d, nil
}

// ReadBy maps source keys to the sessions that read them (newest session
// first). It answers "which of my sessions read this passage?" for a
// knowledge search; it reads every session's candidate list once, so it is
// for a handful of keys per call, not for a loop.
func ReadBy(st store.Reader, keys []string) (map[string][]string, error) {
	want := map[string]bool{}
	for _, k := range keys {
		want[k] = true
	}
	out := map[string][]string{}
	if len(want) == 0 {
		return out, nil
	}
	sessions, err := st.ListSessions() // newest first
	if err != nil {
		return nil, err
	}
	for _, s := range sessions {
		raw, ok, err := st.Checkpoint(s.ID, pipeline.CheckpointCandidates)
		if err != nil || !ok {
			continue
		}
		var cands []struct {
			Key  string `json:"key"`
			Read bool   `json:"read"`
		}
		if json.Unmarshal(raw, &cands) != nil {
			continue
		}
		seen := map[string]bool{}
		for _, c := range cands {
			if c.Read && want[c.Key] && !seen[c.Key] {
				seen[c.Key] = true
				out[c.Key] = append(out[c.Key], s.ID)
			}
		}
	}
	for k := range out {
		sort.SliceStable(out[k], func(i, j int) bool { return out[k][i] > out[k][j] })
	}
	return out, nil
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
		if loc := pipeline.RefsHeadingPattern().FindStringIndex(refs); loc != nil {
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
