package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/researchtui/researchtui/pipeline"
)

// scriptedPlan is a planner's plan with a hostile sub-question.
func scriptedPlan() *pipeline.Plan {
	return &pipeline.Plan{Sources: []string{"arxiv", "openalex"}, SubQuestions: []pipeline.SubQuestion{
		{ID: "q1", Question: "How does humidity degrade perovskite films?", Queries: pipeline.Queries{Strict: "perovskite humidity degradation", Moderate: "perovskite moisture", Broad: "perovskite"}},
		{ID: "q2", Question: "Which encapsulation strategies slow the loss\x1b[31m?", Queries: pipeline.Queries{Strict: "perovskite encapsulation", Broad: "perovskite"}},
		{ID: "q3", Question: "What do 2D/3D heterostructures change?", Queries: pipeline.Queries{Strict: "2D 3D perovskite heterostructure", Broad: "perovskite"}},
	}}
}

// startPlanReview starts a run whose plan waits for the person.
func startPlanReview(t testing.TB, m *rootModel, svc *fakeServices, c *clock) *fakeRun {
	t.Helper()
	if m.sessions.focus != focusLine {
		press(t, m, "tab")
	}
	typeText(t, m, "Perovskite stability")
	press(t, m, "enter")
	r := svc.runs[len(svc.runs)-1]
	at := testNow.Add(-time.Minute)
	evs := []pipeline.Event{
		{Type: pipeline.RunStarted, Time: at},
		{Type: pipeline.StageStarted, Stage: pipeline.StagePlan, Time: at},
		{Type: pipeline.StageFinished, Stage: pipeline.StagePlan, Elapsed: 4 * time.Second, Time: at.Add(4 * time.Second)},
		{Type: pipeline.ReviewRequested, Stage: pipeline.StagePlan, Agent: "planner", Review: &pipeline.ReviewRequest{Plan: scriptedPlan(), Summary: "3 sub-questions"}, Time: at.Add(4 * time.Second)},
	}
	for i := range evs {
		evs[i].SessionID, evs[i].Seq = r.id, int64(i+1)
	}
	feedRun(t, m, r, evs...)
	if _, ok := m.dialog.(*planDialog); !ok {
		t.Fatalf("no plan dialog (%T)", m.dialog)
	}
	c.advance(time.Second) // past the dialog's grace
	return r
}

// Tried as a person would: delete the second sub-question, rewrite the
// first's queries, add one, turn openalex off and pubmed on, go on. The
// run gets exactly that plan.
func TestPlanDialogEditsReachTheRun(t *testing.T) {
	m, svc := newTestModel(t, 100, 30, "dark", false)
	c := &clock{t: testNow}
	m.now = c.now
	r := startPlanReview(t, m, svc, c)
	press(t, m, "down", "d")         // delete q2
	press(t, m, "up", "q", "ctrl+u") // rewrite q1's queries
	typeText(t, m, "humidity perovskite; moisture ingress")
	press(t, m, "enter", "n") // add one
	typeText(t, m, "What do field tests show?")
	press(t, m, "enter", "down")                    // to the sources line
	press(t, m, "right", "space", "right", "space") // openalex off, pubmed on
	if out := m.render(); !strings.Contains(out, "(deleted)") || !strings.Contains(out, "the planner writes them") || strings.Contains(out, "\x1b[31m?") {
		t.Fatalf("the dialog does not show the edits:\n%s", out)
	}
	press(t, m, "a")
	ds := decisionsOf(r)
	if len(ds) != 1 || ds[0].Plan == nil {
		t.Fatalf("decisions %+v", ds)
	}
	e := ds[0].Plan
	var got []string
	for _, it := range e.SubQuestions {
		got = append(got, it.ID+":"+it.Question+":"+strings.Join(it.Queries, ";"))
	}
	want := "q1:How does humidity degrade perovskite films?:humidity perovskite;moisture ingress|" +
		"q3:What do 2D/3D heterostructures change?:2D 3D perovskite heterostructure;perovskite|" +
		":What do field tests show?:"
	if strings.Join(got, "|") != want || strings.Join(e.Sources, ",") != "arxiv,pubmed" {
		t.Errorf("plan sent:\n%s\nsources %v\nwant:\n%s", strings.Join(got, "|"), e.Sources, want)
	}
	if m.dialog != nil {
		t.Errorf("the dialog stayed open (%T)", m.dialog)
	}
}

// a at once runs the plan as written; esc leaves it waiting.
func TestPlanDialogGoAndLater(t *testing.T) {
	m, svc := newTestModel(t, 100, 30, "dark", false)
	c := &clock{t: testNow}
	m.now = c.now
	r := startPlanReview(t, m, svc, c)
	press(t, m, "esc")
	if m.dialog != nil || len(decisionsOf(r)) != 0 {
		t.Fatalf("esc: dialog %T, decisions %+v", m.dialog, decisionsOf(r))
	}
	m2, svc2 := newTestModel(t, 100, 30, "dark", false)
	c2 := &clock{t: testNow}
	m2.now = c2.now
	r2 := startPlanReview(t, m2, svc2, c2)
	press(t, m2, "a")
	if ds := decisionsOf(r2); len(ds) != 1 || !ds[0].Approve || ds[0].Plan != nil {
		t.Fatalf("a: decisions %+v", ds)
	}
	// The status line says what comes next: the plan runs, nothing is
	// being revised yet (issue 36 #5).
	if out := m2.render(); !strings.Contains(out, "running the plan") || strings.Contains(out, "revising") {
		t.Errorf("after approving the plan the screen says:\n%s", out)
	}
}

func decisionsOf(r *fakeRun) []pipeline.Decision {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]pipeline.Decision(nil), r.decisions...)
}

// TestPlanDialogCancel: c in the plan dialog asks whether to cancel the
// run; y cancels it, any other key leaves the plan waiting.
func TestPlanDialogCancel(t *testing.T) {
	for _, yes := range []bool{true, false} {
		m, svc := newTestModel(t, 100, 30, "dark", false)
		c := &clock{t: testNow}
		m.now = c.now
		r := startPlanReview(t, m, svc, c)
		c.advance(time.Second)
		press(t, m, "c")
		if d, ok := m.dialog.(*confirmDialog); !ok || !strings.Contains(d.title, "Cancel") {
			t.Fatalf("c in the plan dialog opened %T", m.dialog)
		}
		c.advance(time.Second)
		press(t, m, map[bool]string{true: "y", false: "n"}[yes])
		r.mu.Lock()
		cancelled := r.cancelled
		r.mu.Unlock()
		if cancelled != yes || len(decisionsOf(r)) != 0 {
			t.Errorf("answered %v: cancelled %v, decisions %+v", yes, cancelled, decisionsOf(r))
		}
	}
}

// TestPlanDialogUnchangedIsNoEdit (issue 47 #7): a plan whose sources the
// planner listed in its routing order ("general": web first), approved
// with a alone, is approved as written: no edit goes to the run, and the
// status line does not say "as you edited it".
func TestPlanDialogUnchangedIsNoEdit(t *testing.T) {
	m, _ := newTestModel(t, 100, 30, "dark", false)
	p := pipeline.Plan{Intent: "general", Sources: []string{"web", "openalex", "semanticscholar", "crossref", "arxiv"}, SubQuestions: []pipeline.SubQuestion{
		{ID: "q1", Question: strings.Repeat("How does humidity degrade perovskite films over years of outdoor use? ", 6), Queries: pipeline.Queries{Moderate: "perovskite humidity"}},
	}}
	d := newPlanDialog("x", p, testNow, m.st, nil)
	if dec := d.decision(); dec.Plan != nil || !dec.Approve {
		t.Errorf("an untouched plan gave %+v", dec.Plan)
	}
	if got := decidedNotice(true, d.decision()); strings.Contains(got, "edited") {
		t.Errorf("an untouched plan: %q", got)
	}
}
