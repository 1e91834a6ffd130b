package pipeline_test

import (
	"testing"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/pipeline/report"
)

// A check that kept nothing still identified and screened works: the next
// version's funnel and PRISMA flow count them, with a route line for each
// check (user trial: 100 works screened out by an empty check showed up in
// the next version only as "duplicates").
func TestUpdateCountsTheChecksThatKeptNothing(t *testing.T) {
	t.Parallel()
	env, shelf, opt := shelfWorld(t)
	_, sess := pipelinetest.RunToEnd(t, env, opt)
	v1, _ := pipeline.LoadReport(env.Store, sess.ID)

	shelf.Add(work("Sourdough starters: testing flour at home", 2026, "Testing flours at home shows rye starters rise faster than wheat ones."))
	update(t, env, sess.ID)
	grow(shelf)
	update(t, env, sess.ID)

	checks, _ := pipeline.LoadUpdateChecks(env.Store, sess.ID)
	if len(checks) != 2 || checks[0].Version != 0 || checks[0].New != 1 || checks[1].Version != 2 {
		t.Fatalf("checks %+v; want an empty one that met one new work, then a version", checks)
	}
	rep, _ := pipeline.LoadReport(env.Store, sess.ID)
	a, b := checks[0], checks[1]
	if f := rep.Funnel; f.Found != v1.Funnel.Found+a.New+b.New || f.Read != v1.Funnel.Read+a.Read+b.Read {
		t.Errorf("funnel %+v; the run's %+v, checks %+v %+v", f, v1.Funnel, a, b)
	}
	if v1.Flow == nil || rep.Flow == nil {
		t.Fatalf("no PRISMA flow: %v %v", v1.Flow, rep.Flow)
	}
	f, f1 := rep.Flow, v1.Flow
	if f.Identified != f1.Identified+a.Seen+b.Seen || f.Screened != f1.Screened+a.New+b.New || f.Excluded != f1.Excluded+(a.New-a.Read)+(b.New-b.Read) ||
		len(f.Other) != len(f1.Other)+2 {
		t.Errorf("flow %+v\nthe run's %+v\nchecks %+v %+v", *f, *f1, a, b)
	}
	sum := func(rs []report.FlowReason) int {
		n := 0
		for _, r := range rs {
			n += r.Count
		}
		return n
	}
	if sum(f.ExcludedWhy) != f.Excluded || (len(f.ReportsWhy) > 0 && sum(f.ReportsWhy) != f.Reports) {
		t.Errorf("the reasons do not add up: excluded %d by %+v, reports %d by %+v", f.Excluded, f.ExcludedWhy, f.Reports, f.ReportsWhy)
	}
}
