package ui

import (
	"context"
	"testing"
	"time"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/store"
)

// A run resumed from the sessions list shows what it did before: the
// sources it found, read and analysed and the stages it finished with
// their times (a user trial saw "no sources yet" and 0.0 s stages while
// deciding a review about a draft built from them). The earlier process's
// ending is not replayed: the run is running, not awaiting review, until
// the resumed run says otherwise; a stage it restores keeps its time.
func TestResumedRunShowsWhatItDidBefore(t *testing.T) {
	m, svc := newTestModel(t, 120, 40, "dark", true)
	past := scriptToReview("s2")
	past = append(past, pipeline.Event{SessionID: "s2", Type: pipeline.RunSuspended, Status: store.StatusAwaitingReview, Time: testNow})
	svc.events = map[string][]pipeline.Event{"s2": past}
	sess, _ := svc.Session("s2")
	run(t, m, resumeRunCmd(context.Background(), svc, sess, nil))
	rs := m.runs["s2"]
	if rs == nil {
		t.Fatal("the resumed run is not on screen")
	}
	var found, analysed int
	for _, row := range rs.flow {
		found++
		if row.state == pipeline.StateAnalysed {
			analysed++
		}
	}
	if found == 0 || analysed == 0 || rs.docs == 0 {
		t.Errorf("the earlier run's sources are missing: %d rows, %d analysed, %d read", found, analysed, rs.docs)
	}
	plan := rs.byStage[pipeline.StagePlan]
	if plan.phase != phaseDone || plan.elapsed <= 0 {
		t.Fatalf("the plan stage: phase %v, %s", plan.phase, plan.elapsed)
	}
	if rs.review != nil || rs.status == "awaiting_review" || !rs.ended.IsZero() {
		t.Errorf("the earlier ending was replayed: status %q, review %v", rs.status, rs.review != nil)
	}
	was := plan.elapsed
	r := svc.runs[len(svc.runs)-1]
	feedRun(t, m, r,
		pipeline.Event{Type: pipeline.StageStarted, Stage: pipeline.StagePlan, Message: pipeline.RestoredFromCheckpoint, Time: testNow.Add(time.Minute)},
		pipeline.Event{Type: pipeline.StageFinished, Stage: pipeline.StagePlan, Message: "3 sub-questions", Time: testNow.Add(time.Minute)})
	if plan.phase != phaseDone || plan.elapsed != was {
		t.Errorf("restoring the plan changed it: phase %v, %s (was %s)", plan.phase, plan.elapsed, was)
	}

	// A run cancelled mid-gather finds, reads and analyses its sources
	// again when resumed: each still counts once (a trial saw "arxiv 8"
	// where the run had found 4).
	count := func() (int, int, int, int) {
		n := 0
		for _, k := range rs.sources {
			n += k
		}
		return n, rs.docs, rs.fullText, rs.analyses
	}
	f0, d0, t0, a0 := count()
	var again []pipeline.Event
	for _, ev := range past {
		switch ev.Type {
		case pipeline.SourceFound, pipeline.DocumentRead, pipeline.AnalysisDone:
			again = append(again, ev)
		}
	}
	if len(again) == 0 {
		t.Fatal("the script found, read and analysed nothing")
	}
	feedRun(t, m, r, again...)
	if f, d, ft, a := count(); f != f0 || d != d0 || ft != t0 || a != a0 {
		t.Errorf("found %d→%d, read %d→%d, full text %d→%d, analysed %d→%d: counted twice", f0, f, d0, d, t0, ft, a0, a)
	}
}
