package pipeline

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/store"
)

// CitedSource is one entry of a report's reference list: the source behind
// [N], with the metadata the References line was built from and the quote
// that supports the claims citing it.
type CitedSource struct {
	N       int      `json:"n"`
	Key     string   `json:"key"`
	Title   string   `json:"title"`
	Authors []string `json:"authors,omitempty"`
	// AuthorsFiled are the authors as the person's library files them
	// (search.Record.AuthorsFiled), for exports to a reference manager.
	AuthorsFiled []string `json:"authors_filed,omitempty"`
	Year         int      `json:"year,omitempty"`
	Venue        string   `json:"venue,omitempty"`
	// Publication (type, volume, issue, pages, publisher) comes from the
	// person's library when the work is an item of it.
	search.Publication
	DOI     string `json:"doi,omitempty"`
	ArxivID string `json:"arxiv_id,omitempty"`
	URL     string `json:"url,omitempty"`
	PDFURL  string `json:"pdf_url,omitempty"`
	Source  string `json:"source"`
	// Library is the person's reference library the work is an item of
	// ("zotero", "refs"): it was read from the person's own copy and its
	// reference comes from the library's metadata.
	Library   string `json:"library,omitempty"`
	LibraryID string `json:"library_id,omitempty"` // the item's key in it (a BibTeX key, a Zotero item key)
	Quote     string `json:"quote,omitempty"`
	Reference string `json:"reference"` // the APA line as printed
	// Read is how the run read the source: ReadFullText or ReadAbstract;
	// empty when the report does not record it (older reports).
	Read string `json:"read,omitempty"`
	// Retracted and Updates come from the source's record
	// (search.Record): the sources pane marks a retracted source and a
	// corrected one, and the details view lists the notices.
	Retracted bool            `json:"retracted,omitempty"`
	Updates   []search.Update `json:"updates,omitempty"`
}

// How a cited source was read.
const (
	ReadFullText = "full_text"
	ReadAbstract = "abstract"
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
	Model    string          `json:"model,omitempty"`
	Searched []string        `json:"searched,omitempty"`
	Markdown string          `json:"markdown"`
	Sources  []CitedSource   `json:"sources"`
	Metrics  CitationMetrics `json:"metrics"`
	// Support is the verifier's support map: every cited sentence with its
	// verdict and the passage that supports it.
	Support []CitationSupport `json:"support,omitempty"`
	// Repairs are the sentences the verifier re-cited, uncited or dropped,
	// over every draft.
	Repairs []SentenceCheck `json:"repairs,omitempty"`
	Funnel  Funnel          `json:"funnel"`
	// Flow is the run's PRISMA 2020 flow (prisma.go); nil for runs from
	// before it was recorded.
	Flow *Flow `json:"prisma,omitempty"`
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
