package history_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/history"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
)

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
