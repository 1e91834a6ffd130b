package pipeline

import (
	"encoding/json"
	"fmt"
	"time"

	"context"
	"errors"

	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/store"
)

// CitationMetrics summarise how well a report is grounded.
type CitationMetrics struct {
	Citations       int `json:"citations"`        // [n] markers in the final report
	DistinctSources int `json:"distinct_sources"` // sources cited at least once
	Removed         int `json:"removed"`          // markers that resolved to nothing and were dropped
	// SupportedRatio is the share of the report's cited sentences that the
	// verifier found supported by what they cite (partly supported ones
	// count half); with --verify off, the share whose words appear in
	// the cited source.
	SupportedRatio float64 `json:"supported_ratio"`
	// Verified sums up the verifier's work on the final report: its cited
	// sentences and their verdicts, and the repairs of every draft.
	Verified *VerifyCounts `json:"verified,omitempty"`
}

// CitationSupport is the passage that supports one cited sentence of the
// final report: what the report screen shows for a selected [n].
type CitationSupport struct {
	Sentence string `json:"sentence"` // without its citations
	N        []int  `json:"n"`        // its citations, as numbered in the report
	Verdict  string `json:"verdict"`
	Passage  string `json:"passage,omitempty"`
	ChunkID  string `json:"chunk_id,omitempty"`
	Source   int    `json:"source,omitempty"` // the [n] the passage is from
}

// Report is a finished (or drafted) report with everything needed to show,
// check and export it.
type Report struct {
	SessionID string `json:"session_id"`
	Title     string `json:"title"`
	Question  string `json:"question"`
	// Model wrote the report; Searched are the sources the plan searched.
	Model    string               `json:"model,omitempty"`
	Searched []string             `json:"searched,omitempty"`
	Markdown string               `json:"markdown"`
	Sources  []report.CitedSource `json:"sources"`
	Metrics  CitationMetrics      `json:"metrics"`
	// Support is the verifier's support map: every cited sentence with its
	// verdict and the passage that supports it.
	Support []CitationSupport `json:"support,omitempty"`
	// Repairs are the sentences the verifier re-cited, uncited or dropped,
	// over every draft.
	Repairs []SentenceCheck `json:"repairs,omitempty"`
	Funnel  Funnel          `json:"funnel"`
	// Flow is the run's PRISMA 2020 flow (prisma.go); nil for runs from
	// before it was recorded.
	Flow *report.Flow `json:"prisma,omitempty"`
	// PlanReview is what the person did with the plan (--review-plan ask).
	PlanReview *PlanReview     `json:"plan_review,omitempty"`
	Rounds     []RoundSummary  `json:"rounds,omitempty"`
	Reviews    []ReviewRequest `json:"reviews,omitempty"`
	Decisions  []Decision      `json:"decisions,omitempty"`
	Warnings   []string        `json:"warnings,omitempty"`
	// Language is the report's language tag (--language); "" for English.
	Language string `json:"language,omitempty"`
	// Updates are the versions living-review updates wrote (update.go),
	// oldest first.
	Updates []UpdateNote `json:"updates,omitempty"`
}

// UpdateNote is a version an update wrote: when, and how many new works
// it added.
type UpdateNote struct {
	Version int       `json:"version"`
	At      time.Time `json:"at"`
	New     int       `json:"new"`
}

// checkpointReport is the checkpoint name the finalise stage writes.
const checkpointReport = "report"

// LoadReport reads a session's final report from the store. It needs no
// model backend, so finished sessions can be read offline.
func LoadReport(st store.Reader, id string) (Report, error) {
	raw, ok, err := st.Checkpoint(id, checkpointReport)
	if err != nil {
		return Report{}, err
	}
	if !ok {
		return Report{}, fmt.Errorf("session %s has no report yet", id)
	}
	var rep Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		return Report{}, fmt.Errorf("session %s: unreadable report: %w", id, err)
	}
	return rep, nil
}

// What follow-ups and updates share: a finished session to grow, claimed
// and started with the follow-up it works on, and what it already holds.

// finishedSession is a finished session with its versions and options
// (adjusted and normalised), or why it cannot grow a version now.
func (e *Engine) finishedSession(id string, adjust func(*runopts.Options)) (store.Session, []Version, runopts.Options, error) {
	var opt runopts.Options
	sess, err := e.Store.Session(id)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return sess, nil, opt, fmt.Errorf("%w: no session %q (see `researchtui sessions list`)", runopts.ErrBadInput, id)
		}
		return sess, nil, opt, err
	}
	switch sess.Status {
	case store.StatusCompleted:
	case store.StatusAwaitingReview:
		return sess, nil, opt, fmt.Errorf("%w: session %s waits for a review decision; decide it first (`researchtui resume %s`)", runopts.ErrBadInput, id, id)
	case store.StatusRunning:
		return sess, nil, opt, fmt.Errorf("%w: session %s is running; wait until it has finished", runopts.ErrBadInput, id)
	default:
		return sess, nil, opt, fmt.Errorf("%w: session %s is %s; resume it first (`researchtui resume %s`)", runopts.ErrBadInput, id, sess.Status, id)
	}
	versions, err := LoadVersions(e.Store, id)
	if err != nil {
		return sess, nil, opt, err
	}
	if len(versions) == 0 {
		return sess, nil, opt, fmt.Errorf("%w: %w", runopts.ErrBadInput, ErrNotFinished)
	}
	if err := json.Unmarshal(sess.Options, &opt); err != nil {
		return sess, nil, opt, fmt.Errorf("session %s has unreadable options: %w", id, err)
	}
	if adjust != nil {
		adjust(&opt)
	}
	if err := opt.Normalize(); err != nil {
		return sess, nil, opt, err
	}
	return sess, versions, opt, nil
}

// startFollowUp claims the session, records the follow-up (or update) it
// works on and starts it.
func (e *Engine) startFollowUp(ctx context.Context, sess store.Session, opt runopts.Options, fu followUp) (*Run, error) {
	id := sess.ID
	if err := e.claim(id); err != nil {
		return nil, err
	}
	raw, _ := json.Marshal(fu)
	lastSeq, err := e.Store.LastSeq(id)
	if err == nil {
		sess, err = e.Store.CheckpointAndUpdate(id, checkpointFollowUp, raw, func(s *store.Session) error {
			s.Status = store.StatusRunning
			s.Updating = fu.Update > 0
			s.Error = ""
			return nil
		})
	}
	if err != nil {
		e.release(id)
		return nil, err
	}
	return e.launchFollowUp(ctx, sess, opt, fu, lastSeq)
}

// loadFinished loads what a finished session holds: its report, last
// version and plan, and (into o.st) its sources and analyses in the order
// of the report's numbers.
func (o *orchestrator) loadFinished() (parent Report, prev Version, plan Plan, err error) {
	versions, err := LoadVersions(o.engine.Store, o.session.ID)
	if err != nil {
		return parent, prev, plan, err
	}
	if len(versions) == 0 {
		return parent, prev, plan, ErrNotFinished
	}
	prev = versions[len(versions)-1]
	if parent, err = LoadReport(o.engine.Store, o.session.ID); err != nil {
		return parent, prev, plan, err
	}
	var found foundSet
	if _, err := o.loadRaw("research", &found); err != nil {
		return parent, prev, plan, err
	}
	o.st.Found = &found
	for _, src := range parent.Sources {
		var an Analysis
		if ok, _ := o.loadRaw("analyse/"+src.Key, &an); ok {
			an.SourceKey = src.Key
			o.st.Analyses = append(o.st.Analyses, an)
		} else {
			rec, _ := o.loadSource(src.Key)
			o.st.Analyses = append(o.st.Analyses, degradedAnalysis(rec, nil))
		}
	}
	_, err = o.loadRaw("plan", &plan)
	return parent, prev, plan, err
}

// loadRaw reads a checkpoint of the session itself, not of the follow-up.
func (o *orchestrator) loadRaw(name string, v any) (bool, error) {
	raw, ok, err := o.engine.Store.Checkpoint(o.session.ID, name)
	if err != nil || !ok {
		return false, err
	}
	return true, json.Unmarshal(raw, v)
}
