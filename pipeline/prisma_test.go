package pipeline_test

import (
	"encoding/json"
	"testing"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
)

// A run of two rounds with citation chasing: its PRISMA flow adds up, its
// database boxes are what the searches returned (the stored
// source_searched events), chasing is a route of its own, and its
// screening and inclusion boxes are the stored candidates and references.
func TestPrismaFlowAddsUpAndMatchesTheStoredRun(t *testing.T) {
	script := withLuttinger(&pipelinetest.Script{RevisionRounds: 0, MissingSlot: "open problems", GapQueries: []string{"del_maestro luttinger liquids"}})
	env := pipelinetest.NewEnv(t, script, "")
	_, sess := runToEnd(t, env, env.Options(question))
	rep, err := pipeline.LoadReport(env.Store, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	f := rep.Flow
	if f == nil {
		t.Fatal("the report has no flow")
	}
	if err := f.Check(); err != nil {
		t.Fatalf("%v: %+v", err, *f)
	}

	// Databases: per source, the sum of what its searches returned.
	recs, err := env.Store.Events(sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	searched := map[string]int{}
	for _, r := range recs {
		var ev pipeline.Event
		if json.Unmarshal(r.Data, &ev) == nil && ev.Type == pipeline.SourceSearched && ev.Call != nil {
			searched[ev.Call.Source] += ev.Count
		}
	}
	boxes := map[string]int{}
	for _, rc := range f.Databases {
		boxes[rc.Route] += rc.Records
	}
	for src, n := range searched {
		if boxes[src] != n {
			t.Errorf("%s: the flow says %d records identified, its searches returned %d", src, boxes[src], n)
		}
	}
	chased := 0
	for _, rc := range f.Other {
		if rc.Route == "citation chasing" && rc.Round == 2 {
			chased += rc.Records
		}
	}
	if chased == 0 {
		t.Errorf("round 2 followed citations but the flow has no citation-chasing records: %+v", f.Other)
	}

	// Screening and inclusion: the stored candidates and references.
	cands, err := pipeline.LoadCandidates(env.Store, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	works, read := map[string]bool{}, map[string]bool{}
	for _, c := range cands {
		works[c.Key] = true
		if c.Read {
			read[c.Key] = true
		}
	}
	if f.Screened != len(works) || f.Sought != len(read) || f.Excluded != len(works)-len(read) {
		t.Errorf("screened %d, sought %d, excluded %d; the candidates hold %d works, %d read", f.Screened, f.Sought, f.Excluded, len(works), len(read))
	}
	if f.Duplicates <= 0 {
		t.Errorf("no duplicates removed, though sub-questions and sources overlap: %+v", *f)
	}
	if f.Included != len(rep.Sources) || f.Included == 0 {
		t.Errorf("%d included, the report cites %d sources", f.Included, len(rep.Sources))
	}
	if f.Assessed != rep.Funnel.Read {
		t.Errorf("%d assessed, the funnel read %d", f.Assessed, rep.Funnel.Read)
	}
}
