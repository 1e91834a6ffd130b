package pipeline

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/store"
)

// Stage names one step of the pipeline.
type Stage string

const (
	StagePlan     Stage = "plan"
	StageResearch Stage = "research"
	StageRead     Stage = "read"
	StageIndex    Stage = "index"
	StageRetrieve Stage = "retrieve"
	StageAnalyse  Stage = "analyse"
	StageWrite    Stage = "write"
	StageVerify   Stage = "verify"
	StageReview   Stage = "review"
	StageFinalise Stage = "finalise"
)

// Stages lists every stage in the order a run goes through them. Research,
// read, index and analyse overlap: each source flows through them on its
// own (gather_stream.go); retrieval across all sources then serves the writer.
var Stages = []Stage{StagePlan, StageResearch, StageRead, StageIndex, StageAnalyse, StageRetrieve, StageWrite, StageVerify, StageReview, StageFinalise}

// EventType is the kind of an Event; the values are the NDJSON "type" field.
type EventType string

const (
	RunStarted    EventType = "run_started"
	StageStarted  EventType = "stage_started"
	StageFinished EventType = "stage_finished"
	AgentStarted  EventType = "agent_started"
	AgentFinished EventType = "agent_finished"
	TokenDelta    EventType = "token_delta"
	SourceFound   EventType = "source_found"
	// CandidatesRanked: one sub-question's search results were scored and
	// the best chosen for reading. Count is the distinct candidates found
	// in the run so far; Message says how many of this pool are read.
	CandidatesRanked EventType = "candidates_ranked"
	// RoundStarted: a follow-up round of research begins (Count is its
	// number; Message says what is missing).
	RoundStarted EventType = "round_started"
	// SourceProgress: a source moved on in its flow (Source.State).
	SourceProgress  EventType = "source_progress"
	DocumentRead    EventType = "document_read"
	ChunksIndexed   EventType = "chunks_indexed"
	AnalysisDone    EventType = "analysis_done"
	DraftReady      EventType = "draft_ready"
	ReviewRequested EventType = "review_requested"
	ReviewDecided   EventType = "review_decided"
	UsageUpdated    EventType = "usage_updated"
	Warning         EventType = "warning"
	ReportReady     EventType = "report_ready"
	RunFinished     EventType = "run_finished"
	RunFailed       EventType = "run_failed"
	RunCancelled    EventType = "run_cancelled"
	// RunSuspended: the run stopped while a review decision was pending; the
	// session waits as awaiting_review and a later resume asks again.
	RunSuspended EventType = "run_suspended"
	// ModelCalled: one model call ended — a chat, a structured call with
	// its repairs and retries, or a batch of embeddings. Call says which
	// model and how it went, Usage is the call's own, Elapsed how long it
	// took (it started at Time-Elapsed).
	ModelCalled EventType = "model_call"
	// SourceSearched: one source's search for a sub-question ended (all of
	// its query tiers). Call.Source names the source, Count the results,
	// Call.Error why it failed; Elapsed how long it took.
	SourceSearched EventType = "source_searched"
)

// Event is one thing that happened in a run. It is flat on purpose: one
// JSON object per line for headless consumers, one persisted record per
// lifecycle event, and one message type for the TUI. Fields that don't apply
// to a type are empty and omitted.
type Event struct {
	Type      EventType `json:"type"`
	SessionID string    `json:"session_id"`
	Seq       int64     `json:"seq"`
	Time      time.Time `json:"time"`
	Stage     Stage     `json:"stage,omitempty"`
	Agent     string    `json:"agent,omitempty"`

	Message  string         `json:"message,omitempty"`  // human-readable line (warnings, failures, stage summaries)
	Text     string         `json:"text,omitempty"`     // streamed answer text (TokenDelta), draft or report Markdown
	Thinking string         `json:"thinking,omitempty"` // streamed thinking text, shown apart, never parsed
	Source   *SourceRef     `json:"source,omitempty"`
	Count    int            `json:"count,omitempty"` // chunks indexed, sources found, ...
	Usage    *UsageTotals   `json:"usage,omitempty"` // run totals (UsageUpdated) or one agent's (AgentFinished)
	Review   *ReviewRequest `json:"review,omitempty"`
	Decision *Decision      `json:"decision,omitempty"`
	Status   string         `json:"status,omitempty"` // session status after RunFinished/Failed/Cancelled/Suspended; "failed" on an AgentFinished that failed
	Elapsed  time.Duration  `json:"elapsed_ns,omitempty"`
	Call     *Call          `json:"call,omitempty"` // ModelCalled, SourceSearched
	// Update is the update's number on a RunStarted that begins one (0:
	// a research run or a follow-up, whose version is Count).
	Update int `json:"update,omitempty"`
	// Outcome says how a finished run ended when the report did not
	// change (OutcomeNothingNew, OutcomeUpdateStopped), or on a Warning
	// what it means for the report (OutcomeAssembled, OutcomeUnusable);
	// empty otherwise.
	Outcome string `json:"outcome,omitempty"`
}

// How a run that left its report as it was ended, or what a warning means
// for the report (Event.Outcome).
const (
	OutcomeNothingNew    = "nothing new"
	OutcomeUpdateStopped = "update stopped"
	// OutcomeAssembled: the writer's drafts were unusable and the report
	// was assembled from the analyses.
	OutcomeAssembled = "assembled"
	// OutcomeUnusable: an agent's answer could not be used; the warning
	// says what the run did instead.
	OutcomeUnusable = "unusable"
)

// Call is a finished model call or source search, for timelines and
// traces.
type Call struct {
	Operation   string   `json:"operation"` // chat | embeddings | search
	Model       string   `json:"model,omitempty"`
	Temperature *float64 `json:"temperature,omitempty"`
	// Structured is how a JSON-schema call's answer was got: ok, repaired,
	// retried or fallback (StructuredOK, ...); empty for free text.
	Structured string `json:"structured,omitempty"`
	Attempts   int    `json:"attempts,omitempty"` // backend calls made
	Source     string `json:"source,omitempty"`   // the source searched
	Error      string `json:"error,omitempty"`
	// Prompt and Output are the call's messages and its answer (the text,
	// or a structured call's value as JSON), copied: the agent goes on
	// with its own. They stay in memory: never persisted or printed, only
	// handed to observers (tracing exports them when the user opts in).
	Prompt []llm.Message `json:"-"`
	Output string        `json:"-"`
}

// How a structured call's answer was got (Call.Structured).
const (
	StructuredOK       = "ok"
	StructuredRepaired = "repaired"
	StructuredRetried  = "retried"
	StructuredFallback = "fallback"
)

// SourceRef is enough about a source to show it as it arrives.
type SourceRef struct {
	Key    string `json:"key"`
	Title  string `json:"title"`
	Source string `json:"source"` // arxiv, openalex, ...
	// Library is the person's library the work is an item of.
	Library string `json:"library,omitempty"`
	Year    int    `json:"year,omitempty"`
	URL     string `json:"url,omitempty"`
	// FullText is true when DocumentRead got the full text, false when it
	// fell back to the abstract.
	FullText bool `json:"full_text,omitempty"`
	// State is where the source is in its flow: queued (SourceFound),
	// reading, read (DocumentRead), indexed, analysing, analysed
	// (AnalysisDone) or skipped (with the reason in the event's Message).
	State string `json:"state,omitempty"`
	// Score is the source's relevance to its sub-question (0..1).
	Score float64 `json:"score,omitempty"`
}

// Source states, in flow order.
const (
	StateQueued    = "queued"
	StateReading   = "reading"
	StateRead      = "read"
	StateIndexed   = "indexed"
	StateAnalysing = "analysing"
	StateAnalysed  = "analysed"
	StateSkipped   = "skipped"
)

// UsageTotals are token counts and cost.
type UsageTotals struct {
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	EmbeddingTokens  int     `json:"embedding_tokens"`
	CostUSD          float64 `json:"cost_usd"`
	TokensPerSecond  float64 `json:"tokens_per_second,omitempty"`
}

// ReviewRequest is the reviewer's verdict on a draft, put to the human gate.
type ReviewRequest struct {
	Round    int               `json:"round"`
	Approved bool              `json:"approved"`
	Summary  string            `json:"summary"`
	Requests []RevisionRequest `json:"requests"`
	// Plan, when set, makes this a review of the research plan before
	// anything is searched (--review-plan ask): the person approves it or
	// answers with Decision.Plan, the plan as they left it (plan_review.go).
	// Round is 0 and Requests empty.
	Plan *Plan `json:"plan,omitempty"`
}

// Revision request kinds.
const (
	KindMissingEvidence  = "missing_evidence"
	KindUnsupportedClaim = "unsupported_claim"
	KindStructure        = "structure"
	KindClarity          = "clarity"
)

// RevisionRequest is one thing the reviewer wants changed.
type RevisionRequest struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	Section string `json:"section"`
	Text    string `json:"text"`
}

// Decision answers a ReviewRequest. Approve with the accepted request IDs
// (and an optional note to the writer) revises; Approve=false finalises the
// draft as it is.
type Decision struct {
	Approve  bool     `json:"approve"`
	Accepted []string `json:"accepted,omitempty"`
	Note     string   `json:"note,omitempty"`
	// Plan answers a plan review with the plan as the person left it (nil:
	// as the planner wrote it).
	Plan *PlanEdit `json:"plan,omitempty"`
}

// lifecycle reports whether an event must be delivered and persisted; token
// deltas and usage ticks may be coalesced or dropped.
func (t EventType) lifecycle() bool {
	return t != TokenDelta && t != UsageUpdated
}

// Terminal reports whether the event ends a run.
func (t EventType) Terminal() bool {
	switch t {
	case RunFinished, RunFailed, RunCancelled, RunSuspended:
		return true
	}
	return false
}

// LoadEvents reads a session's stored event log.
func LoadEvents(st store.Reader, id string) ([]Event, error) {
	recs, err := st.Events(id)
	if err != nil {
		return nil, err
	}
	out := make([]Event, 0, len(recs))
	for _, rec := range recs {
		var ev Event
		if json.Unmarshal(rec.Data, &ev) == nil {
			out = append(out, ev)
		}
	}
	return out, nil
}

// detached is ev with its payloads copied, down to the slices they hold:
// an event is a value. Whoever emits one may go on changing what it
// pointed at (a source's state, a plan being edited) while the persister
// encodes it and the TUI draws it; the emitter stores this copy.
func (ev Event) detached() Event {
	if ev.Source != nil {
		s := *ev.Source
		ev.Source = &s
	}
	if ev.Usage != nil {
		u := *ev.Usage
		ev.Usage = &u
	}
	if ev.Review != nil {
		r := *ev.Review
		r.Requests = slices.Clone(r.Requests)
		if r.Plan != nil {
			p := r.Plan.clone()
			r.Plan = &p
		}
		ev.Review = &r
	}
	if ev.Decision != nil {
		d := *ev.Decision
		d.Accepted = slices.Clone(d.Accepted)
		if d.Plan != nil {
			pe := PlanEdit{Sources: slices.Clone(d.Plan.Sources), SubQuestions: slices.Clone(d.Plan.SubQuestions)}
			for i := range pe.SubQuestions {
				pe.SubQuestions[i].Queries = slices.Clone(pe.SubQuestions[i].Queries)
			}
			d.Plan = &pe
		}
		ev.Decision = &d
	}
	if ev.Call != nil {
		c := *ev.Call
		c.Prompt = slices.Clone(c.Prompt)
		if c.Temperature != nil {
			t := *c.Temperature
			c.Temperature = &t
		}
		ev.Call = &c
	}
	return ev
}

// clone is p with its slices copied.
func (p Plan) clone() Plan {
	p.Sources = slices.Clone(p.Sources)
	p.SubQuestions = slices.Clone(p.SubQuestions)
	for i := range p.SubQuestions {
		p.SubQuestions[i].Slots = slices.Clone(p.SubQuestions[i].Slots)
	}
	return p
}
