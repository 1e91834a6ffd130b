package history_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"regexp"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/history"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
)

// TestTimelineFromTheEventLog: a finished run's stored events give a
// waterfall with every stage, the agents' tokens adding up to the
// session's, the model's busy share, and a critical path that ends with
// the last agent; a cancelled run's unfinished spans are marked open.
func TestTimelineFromTheEventLog(t *testing.T) {
	t.Parallel()
	env := pipelinetest.NewEnv(t, &pipelinetest.Script{RevisionRounds: 1}, "")
	_, sess := pipelinetest.RunToEnd(t, env, env.Options(question))
	evs, err := pipeline.LoadEvents(env.Store, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	tl := history.BuildTimeline(sess.ID, evs)
	stages := map[string]bool{}
	tokens := map[string][3]int{} // by span kind: prompt, completion, embedding
	searches := 0
	for _, s := range tl.Spans {
		switch s.Kind {
		case "stage":
			stages[s.Name] = true
		case "search":
			searches++
		case "call":
			if s.Parent < 0 {
				t.Errorf("model call %+v belongs to no agent or stage", s)
			}
		}
		n := tokens[s.Kind]
		tokens[s.Kind] = [3]int{n[0] + s.Prompt, n[1] + s.Completion, n[2] + s.Embedding}
		if s.Open || s.End < s.Start {
			t.Errorf("span %+v is open or ends before it starts", s)
		}
	}
	want := [3]int{sess.Usage.PromptTokens, sess.Usage.CompletionTokens, sess.Usage.EmbeddingTokens}
	if tokens["call"] != want {
		t.Errorf("the model calls' tokens %v, the session's %v", tokens["call"], want)
	}
	if a := tokens["agent"]; a[0] != want[0] || a[1] != want[1] || a[2] > want[2] {
		// Sub-question embeddings are made outside any agent.
		t.Errorf("the agents' tokens %v, the session's %v", a, want)
	}
	if searches == 0 || tl.ModelCalls == 0 {
		t.Errorf("%d searches and %d model calls in the timeline", searches, tl.ModelCalls)
	}
	for _, st := range pipeline.Stages {
		if !stages[string(st)] {
			t.Errorf("no %s stage in the timeline", st)
		}
	}
	if tl.ModelUtil <= 0 || tl.ModelUtil > 1 || len(tl.Critical) == 0 || !strings.HasPrefix(tl.Critical[len(tl.Critical)-1], "reviewer") {
		t.Errorf("utilisation %.2f, critical path %v", tl.ModelUtil, tl.Critical)
	}
	w := tl.Waterfall(80)
	for _, want := range []string{"plan", "analyst 1", "writer", "model busy", "critical path:"} {
		if !strings.Contains(w, want) {
			t.Errorf("waterfall lacks %q:\n%s", want, w)
		}
	}
	for _, line := range strings.Split(w, "\n") {
		if len([]rune(line)) > 80 {
			t.Errorf("line wider than 80 columns: %q", line)
		}
	}
	sc, err := history.LoadScores(env.Store, sess.ID)
	if err != nil || !sc.ReviewerApproved || sc.RevisionRounds != 1 || sc.SourcesCited == 0 || sc.StepsUsed != sess.Steps {
		t.Errorf("scores %+v, %v", sc, err)
	}

	// A cancelled run: the spans that never finished are open.
	r, err := env.Engine.Start(context.Background(), env.Options(question))
	if err != nil {
		t.Fatal(err)
	}
	for ev := range r.Events() {
		if ev.Type == pipeline.AgentStarted && strings.HasPrefix(ev.Agent, "analyst") {
			r.Cancel()
		}
	}
	if _, err := r.Wait(); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancel: %v", err)
	}
	evs, _ = pipeline.LoadEvents(env.Store, r.ID())
	open := 0
	for _, s := range history.BuildTimeline(r.ID(), evs).Spans {
		if s.Open {
			open++
		}
	}
	if open == 0 {
		t.Error("a cancelled run shows no unfinished span")
	}
}

// What the timeline draws of a run that waited, was killed while writing
// and was resumed (issue 36 #23): no idle dots across the time it waited
// for a person, no "0.0s" for the writer that never finished, and the
// stages the resume restored are not drawn again at 0.0 s.
func TestTimelineOfAKilledAndResumedRun(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	call := func(s, d int) pipeline.Event {
		return pipeline.Event{Type: pipeline.ModelCalled, Stage: pipeline.StageWrite, Agent: "writer", Time: at(s), Elapsed: time.Duration(d) * time.Second,
			Call: &pipeline.Call{Operation: "chat", Model: "m"}}
	}
	evs := []pipeline.Event{
		{Type: pipeline.RunStarted, Time: at(0)},
		{Type: pipeline.StageStarted, Stage: pipeline.StagePlan, Time: at(0)},
		{Type: pipeline.StageFinished, Stage: pipeline.StagePlan, Time: at(10)},
		{Type: pipeline.ReviewRequested, Stage: pipeline.StagePlan, Review: &pipeline.ReviewRequest{Plan: &pipeline.Plan{}}, Time: at(10)},
		{Type: pipeline.ReviewDecided, Stage: pipeline.StagePlan, Time: at(110)},
		{Type: pipeline.StageStarted, Stage: pipeline.StageWrite, Time: at(110)},
		{Type: pipeline.AgentStarted, Stage: pipeline.StageWrite, Agent: "writer", Time: at(110)},
		call(120, 10),
		// killed; resumed at 300
		{Type: pipeline.RunStarted, Time: at(300)},
		{Type: pipeline.StageStarted, Stage: pipeline.StagePlan, Message: pipeline.RestoredFromCheckpoint, Time: at(300)},
		{Type: pipeline.StageFinished, Stage: pipeline.StagePlan, Time: at(300)},
		{Type: pipeline.StageStarted, Stage: pipeline.StageWrite, Time: at(300)},
		{Type: pipeline.AgentStarted, Stage: pipeline.StageWrite, Agent: "writer", Time: at(300)},
		call(330, 30),
		{Type: pipeline.AgentFinished, Stage: pipeline.StageWrite, Agent: "writer", Time: at(330)},
		{Type: pipeline.StageFinished, Stage: pipeline.StageWrite, Time: at(330)},
	}
	tl := history.BuildTimeline("s1", evs)
	plans := 0
	for _, s := range tl.Spans {
		if s.Kind == "stage" && s.Name == string(pipeline.StagePlan) {
			plans++
		}
	}
	if plans != 1 {
		t.Errorf("the plan stage is drawn %d times; the resume only restored it", plans)
	}
	lines := tl.Lines(100)
	var model, writerRows []string
	for _, l := range lines {
		switch {
		case l.Kind == "model":
			model = append(model, l.Bar)
		case l.Kind == "agent" && strings.Contains(l.Name, "writer"):
			writerRows = append(writerRows, l.Stats)
		}
	}
	if len(model) != 1 || strings.Count(model[0], " ") < 10 {
		t.Errorf("the model row draws idle dots across the wait for a person: %q", model)
	}
	if len(writerRows) != 2 || !strings.Contains(writerRows[0], "≥10s") || strings.Contains(writerRows[0], "0.0s") {
		t.Errorf("the killed writer's row: %q", writerRows)
	}
}

// A follow-up is a new run on the session, not a resumed attempt: the
// hour before it is left out of the wall time and no resume is marked
// (user trial: "2 attempts", "┊ resumed after 51m25s").
func TestTimelineOfAFollowUpIsNotAResume(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	evs := []pipeline.Event{
		{Type: pipeline.RunStarted, Time: at(0)},
		{Type: pipeline.StageStarted, Stage: pipeline.StageWrite, Time: at(0)},
		{Type: pipeline.StageFinished, Stage: pipeline.StageWrite, Time: at(20)},
		{Type: pipeline.RunFinished, Time: at(20)},
		{Type: pipeline.RunStarted, Count: 2, Time: at(3600)},
		{Type: pipeline.StageStarted, Stage: pipeline.StageResearch, Time: at(3600)},
		{Type: pipeline.StageFinished, Stage: pipeline.StageResearch, Time: at(3610)},
	}
	tl := history.BuildTimeline("s1", evs)
	if tl.Attempts != 1 || len(tl.Resumes) != 0 || tl.Wall != 30*time.Second {
		t.Errorf("attempts %d, resumes %v, wall %v; want 1, none, 30s", tl.Attempts, tl.Resumes, tl.Wall)
	}
}

// A session's later runs are rows of their own, each with its time and
// the chat tokens its agents used, so a follow-up's or an update's stages
// are not read as the first run's, nor their tokens summed with its.
func TestTimelineLabelsFollowUpsAndUpdates(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	agent := func(name string, from, to, tokens int) []pipeline.Event {
		return []pipeline.Event{
			{Type: pipeline.AgentStarted, Stage: pipeline.StageWrite, Agent: name, Time: at(from)},
			{Type: pipeline.AgentFinished, Stage: pipeline.StageWrite, Agent: name, Time: at(to), Usage: &pipeline.UsageTotals{PromptTokens: tokens, CompletionTokens: tokens}},
		}
	}
	var evs []pipeline.Event
	evs = append(evs, pipeline.Event{Type: pipeline.RunStarted, Time: at(0)}, pipeline.Event{Type: pipeline.StageStarted, Stage: pipeline.StageWrite, Time: at(0)})
	evs = append(evs, agent("writer", 0, 20, 1000)...)
	evs = append(evs, pipeline.Event{Type: pipeline.StageFinished, Stage: pipeline.StageWrite, Time: at(20)}, pipeline.Event{Type: pipeline.RunFinished, Time: at(20)})
	evs = append(evs, pipeline.Event{Type: pipeline.RunStarted, Count: 2, Message: "why?", Time: at(3600)})
	evs = append(evs, agent("writer", 3600, 3610, 200)...)
	evs = append(evs, pipeline.Event{Type: pipeline.RunStarted, Count: 3, Message: "update 1: searching again for work since 1 May 2026", Time: at(90000)})
	evs = append(evs, agent("writer", 90000, 90005, 50)...)
	tl := history.BuildTimeline("s1", evs)
	drawn := tl.Waterfall(100)
	for _, want := range []string{"── the run", "── follow-up v2", "── update 1", "╌ a run on the session"} {
		if !strings.Contains(drawn, want) {
			t.Errorf("the waterfall lacks %q:\n%s", want, drawn)
		}
	}
	for _, l := range tl.Lines(100) {
		switch {
		case strings.HasPrefix(l.Name, "── the run") && !strings.Contains(l.Stats, "20.0s") && !strings.Contains(l.Stats, "2.0k tok"),
			strings.HasPrefix(l.Name, "── follow-up") && !strings.Contains(l.Stats, "400 tok"),
			strings.HasPrefix(l.Name, "── update 1") && (!strings.Contains(l.Stats, "100 tok") || !strings.Contains(l.Stats, "5.0s")):
			t.Errorf("segment row %q %q", l.Name, l.Stats)
		}
	}
	// An update stopped and started again: the second start continues it.
	evs = append(evs, pipeline.Event{Type: pipeline.RunStarted, Count: 3, Message: "update 1: searching again for work since 1 May 2026", Time: at(99000)})
	evs = append(evs, agent("writer", 99000, 99002, 10)...)
	if drawn := history.BuildTimeline("s1", evs).Waterfall(100); !strings.Contains(drawn, "── update 1 (contin") || strings.Count(drawn, "── update 1") != 2 {
		t.Errorf("a continued update:\n%s", drawn)
	}
	// A session with one run has no segment rows.
	if one := history.BuildTimeline("s2", evs[:5]).Waterfall(100); strings.Contains(one, "──  the run") || strings.Contains(one, "╌") {
		t.Errorf("a single run drawn with segments:\n%s", one)
	}
}

// A run whose review waited for a person: the wait is a row of its own,
// left out of the model's idle gaps and of its busy share, which is then
// the model's busy time over the machine's time.
func TestTimelineLeavesThePersonsWaitOut(t *testing.T) {
	t.Parallel()
	env := pipelinetest.NewEnv(t, &pipelinetest.Script{RevisionRounds: 1}, "")
	r, err := env.Engine.Start(context.Background(), env.Options(question))
	if err != nil {
		t.Fatal(err)
	}
	const reading = 1500 * time.Millisecond // the person reads the requests
	sess := pipelinetest.ApproveAll(t, r, reading)
	evs, err := pipeline.LoadEvents(env.Store, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	tl := history.BuildTimeline(sess.ID, evs)
	var wait *history.Span
	for i, s := range tl.Spans {
		if s.Kind == "wait" {
			if wait != nil {
				t.Fatalf("two waits for one review: %+v and %+v", *wait, s)
			}
			wait = &tl.Spans[i]
		}
	}
	if wait == nil || wait.Open || wait.End-wait.Start < reading || wait.Name != history.WaitName {
		t.Fatalf("the wait for the person: %+v", wait)
	}
	if tl.Waiting != wait.End-wait.Start {
		t.Errorf("waiting %v, the wait span %v", tl.Waiting, wait.End-wait.Start)
	}
	for _, g := range tl.Idle {
		if g.Start < wait.End && g.End > wait.Start {
			t.Errorf("an idle gap %v–%v overlaps the person's wait %v–%v", g.Start, g.End, wait.Start, wait.End)
		}
	}
	if want := float64(tl.ModelBusy) / float64(tl.Wall-tl.Waiting); tl.ModelUtil != want {
		t.Errorf("model utilisation %.3f, want busy over the machine's time %.3f", tl.ModelUtil, want)
	}
	if with := float64(tl.ModelBusy) / float64(tl.Wall); tl.ModelUtil <= with {
		t.Errorf("utilisation %.3f not above %.3f (the wait counted against the model)", tl.ModelUtil, with)
	}
	drawn := tl.Waterfall(100)
	// The wait is the reading time and a little more (rounded to a tenth).
	if !regexp.MustCompile(`less 1\.[5-9]s waiting for you \(`).MatchString(drawn) {
		t.Errorf("the waterfall does not take the person's ~1.5s out of the model's share:\n%s", drawn)
	}
	for _, want := range []string{history.WaitName + " ", "▒ waiting for you"} {
		if !strings.Contains(drawn, want) {
			t.Errorf("the waterfall lacks %q:\n%s", want, drawn)
		}
	}
}

// A headless run's policy decides a review at once: no one waited, and the
// waterfall draws no wait (a trial saw "waiting for you 0.0s").
func TestTimelineDrawsNoWaitWhenAPolicyDecides(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	evs := []pipeline.Event{
		{Type: pipeline.RunStarted, Time: t0},
		{Type: pipeline.StageStarted, Stage: pipeline.StageReview, Time: t0},
		{Type: pipeline.AgentStarted, Stage: pipeline.StageReview, Agent: "reviewer", Time: t0},
		{Type: pipeline.AgentFinished, Stage: pipeline.StageReview, Agent: "reviewer", Time: t0.Add(2 * time.Second)},
		{Type: pipeline.ReviewRequested, Stage: pipeline.StageReview, Review: &pipeline.ReviewRequest{}, Time: t0.Add(2 * time.Second)},
		{Type: pipeline.ReviewDecided, Stage: pipeline.StageReview, Time: t0.Add(2*time.Second + time.Millisecond)},
		{Type: pipeline.StageFinished, Stage: pipeline.StageReview, Time: t0.Add(3 * time.Second)},
	}
	drawn := history.BuildTimeline("s", evs).Waterfall(100)
	if strings.Contains(drawn, "waiting for you") {
		t.Errorf("a policy's decision drawn as a wait:\n%s", drawn)
	}
}
