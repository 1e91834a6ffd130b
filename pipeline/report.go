package pipeline

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/researchtui/researchtui/pipeline/report"
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
