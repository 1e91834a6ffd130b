package ui

import (
	"testing"
	"time"

	"github.com/researchtui/researchtui/pipeline"
)

// evalTitle is a hostile page title: an OSC window-title setter and a
// clear-screen, which must be drawn as harmless text.
const evilTitle = "Evil page \x1b]0;pwned\x07 title \x1b[2J done"

// scriptToReview is a run from start to the review gate, with fixed times.
func scriptToReview(id string) []pipeline.Event {
	at := func(s float64) time.Time {
		return testNow.Add(-2 * time.Minute).Add(time.Duration(s * float64(time.Second)))
	}
	u := func(p, c int) *pipeline.UsageTotals {
		return &pipeline.UsageTotals{PromptTokens: p, CompletionTokens: c, EmbeddingTokens: 900}
	}
	src := func(kind, title string) *pipeline.SourceRef {
		return &pipeline.SourceRef{Key: kind + ":" + title, Title: title, Source: kind, Year: 2024}
	}
	var evs []pipeline.Event
	add := func(ev pipeline.Event) { ev.SessionID = id; ev.Seq = int64(len(evs) + 1); evs = append(evs, ev) }
	add(pipeline.Event{Type: pipeline.RunStarted, Time: at(0)})
	add(pipeline.Event{Type: pipeline.StageStarted, Stage: pipeline.StagePlan, Time: at(0)})
	add(pipeline.Event{Type: pipeline.AgentStarted, Stage: pipeline.StagePlan, Agent: "planner", Time: at(0)})
	add(pipeline.Event{Type: pipeline.TokenDelta, Stage: pipeline.StagePlan, Agent: "planner", Thinking: "The question is about humidity.", Text: `{"subquestions": 3}`, Time: at(1)})
	add(pipeline.Event{Type: pipeline.AgentFinished, Stage: pipeline.StagePlan, Agent: "planner", Elapsed: 4 * time.Second, Usage: &pipeline.UsageTotals{PromptTokens: 800, CompletionTokens: 240, TokensPerSecond: 60}, Time: at(4)})
	add(pipeline.Event{Type: pipeline.StageFinished, Stage: pipeline.StagePlan, Elapsed: 4 * time.Second, Time: at(4)})
	// Research, read, index and analyse flow together: each source moves on
	// as soon as its own step is done.
	for _, st := range []pipeline.Stage{pipeline.StageResearch, pipeline.StageRead, pipeline.StageIndex, pipeline.StageAnalyse} {
		add(pipeline.Event{Type: pipeline.StageStarted, Stage: st, Time: at(4)})
	}
	moisture, encaps, evil, hetero := src("arxiv", "Moisture ingress in MAPbI3 films"), src("openalex", "Encapsulation strategies review"), src("web", evilTitle), src("arxiv", "2D/3D heterostructures")
	add(pipeline.Event{Type: pipeline.CandidatesRanked, Stage: pipeline.StageResearch, Count: 23, Message: "q1: read 3 of 23 candidates", Time: at(6)})
	for i, s := range []*pipeline.SourceRef{moisture, encaps, evil, hetero} {
		add(pipeline.Event{Type: pipeline.SourceFound, Stage: pipeline.StageResearch, Source: s, Time: at(6 + float64(i)/2)})
	}
	add(pipeline.Event{Type: pipeline.CandidatesRanked, Stage: pipeline.StageResearch, Count: 41, Message: "q2: read 2 of 30 candidates", Time: at(8)})
	add(pipeline.Event{Type: pipeline.StageFinished, Stage: pipeline.StageResearch, Elapsed: 9 * time.Second, Time: at(13)})
	progress := func(s *pipeline.SourceRef, state string, t float64) {
		ref := *s
		ref.State = state
		add(pipeline.Event{Type: pipeline.SourceProgress, Source: &ref, Time: at(t)})
	}
	progress(moisture, pipeline.StateReading, 13)
	full := *moisture
	full.FullText = true
	add(pipeline.Event{Type: pipeline.DocumentRead, Stage: pipeline.StageRead, Source: &full, Time: at(15)})
	add(pipeline.Event{Type: pipeline.DocumentRead, Stage: pipeline.StageRead, Source: encaps, Time: at(16)})
	progress(hetero, pipeline.StateReading, 16)
	add(pipeline.Event{Type: pipeline.StageFinished, Stage: pipeline.StageRead, Elapsed: 3 * time.Second, Time: at(16)})
	add(pipeline.Event{Type: pipeline.ChunksIndexed, Stage: pipeline.StageIndex, Count: 42, Time: at(18)})
	add(pipeline.Event{Type: pipeline.StageFinished, Stage: pipeline.StageIndex, Elapsed: 2 * time.Second, Time: at(18)})
	add(pipeline.Event{Type: pipeline.Warning, Stage: pipeline.StageRead, Message: "semanticscholar: 429 Too Many Requests, continuing without it", Time: at(18)})
	progress(encaps, pipeline.StateAnalysing, 19)
	add(pipeline.Event{Type: pipeline.AnalysisDone, Stage: pipeline.StageAnalyse, Source: moisture, Time: at(40)})
	add(pipeline.Event{Type: pipeline.RoundStarted, Stage: pipeline.StageResearch, Count: 2, Message: "round 2 of 2 — missing: open problems", Time: at(41)})
	chased := src("openalex", "Humidity-resistant encapsulants")
	add(pipeline.Event{Type: pipeline.SourceFound, Stage: pipeline.StageResearch, Source: chased, Message: "reference of openalex:Encapsulation strategies review", Time: at(42)})
	add(pipeline.Event{Type: pipeline.StageFinished, Stage: pipeline.StageAnalyse, Elapsed: 44 * time.Second, Time: at(48)})
	add(pipeline.Event{Type: pipeline.StageStarted, Stage: pipeline.StageRetrieve, Time: at(48)})
	add(pipeline.Event{Type: pipeline.StageFinished, Stage: pipeline.StageRetrieve, Elapsed: 100 * time.Millisecond, Time: at(48)})
	add(pipeline.Event{Type: pipeline.StageStarted, Stage: pipeline.StageWrite, Time: at(48)})
	add(pipeline.Event{Type: pipeline.AgentStarted, Stage: pipeline.StageWrite, Agent: "writer", Time: at(48)})
	add(pipeline.Event{Type: pipeline.TokenDelta, Stage: pipeline.StageWrite, Agent: "writer", Thinking: "I should lead with the degradation mechanism.\x1b[31m", Time: at(50)})
	add(pipeline.Event{Type: pipeline.TokenDelta, Stage: pipeline.StageWrite, Agent: "writer", Text: "# Perovskite stability\n\nMoisture degrades MAPbI3 films within hours [1]. Encapsulation extends lifetimes [2].", Time: at(60)})
	add(pipeline.Event{Type: pipeline.AgentFinished, Stage: pipeline.StageWrite, Agent: "writer", Elapsed: 20 * time.Second, Usage: &pipeline.UsageTotals{CompletionTokens: 1200, TokensPerSecond: 58.5}, Time: at(68)})
	add(pipeline.Event{Type: pipeline.StageFinished, Stage: pipeline.StageWrite, Elapsed: 20 * time.Second, Time: at(68)})
	add(pipeline.Event{Type: pipeline.StageStarted, Stage: pipeline.StageReview, Time: at(68)})
	add(pipeline.Event{Type: pipeline.UsageUpdated, Usage: u(14200, 3100), Time: at(70)})
	add(pipeline.Event{Type: pipeline.ReviewRequested, Stage: pipeline.StageReview, Time: at(75), Review: &pipeline.ReviewRequest{
		Round: 1, Summary: "Good coverage; two claims need support and the summary is long.",
		Requests: []pipeline.RevisionRequest{
			{ID: "r1", Kind: pipeline.KindMissingEvidence, Section: "Mechanisms", Text: "Find evidence for the hydrate-phase pathway at low humidity."},
			{ID: "r2", Kind: pipeline.KindUnsupportedClaim, Section: "Executive summary", Text: "The 1,000 hour figure is not in the cited source [2]."},
			{ID: "r3", Kind: pipeline.KindClarity, Section: "Executive summary", Text: "Shorten the summary to three sentences."},
		}}})
	return evs
}

// scriptFinish is what follows an accepted review.
func scriptFinish(id string, seq int64) []pipeline.Event {
	t := testNow
	return []pipeline.Event{
		{Type: pipeline.ReviewDecided, SessionID: id, Seq: seq + 1, Stage: pipeline.StageReview, Time: t, Decision: &pipeline.Decision{Approve: true, Accepted: []string{"r1", "r2", "r3"}}},
		{Type: pipeline.StageFinished, SessionID: id, Seq: seq + 2, Stage: pipeline.StageReview, Elapsed: 10 * time.Second, Time: t},
		{Type: pipeline.StageStarted, SessionID: id, Seq: seq + 3, Stage: pipeline.StageFinalise, Time: t},
		{Type: pipeline.StageFinished, SessionID: id, Seq: seq + 4, Stage: pipeline.StageFinalise, Elapsed: time.Second, Time: t},
		{Type: pipeline.ReportReady, SessionID: id, Seq: seq + 5, Time: t},
		{Type: pipeline.RunFinished, SessionID: id, Seq: seq + 6, Status: "completed", Time: t},
	}
}

// feedRun delivers events to the model as the bridge would, synchronously.
func feedRun(t testing.TB, m *rootModel, r *fakeRun, evs ...pipeline.Event) {
	t.Helper()
	_, cmd := m.Update(runEventsMsg{id: r.id, events: evs})
	run(t, m, cmd)
}
