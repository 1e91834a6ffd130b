package pipeline_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/researchtui/researchtui/textkit/mdinert"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/pipeline/runopts"
)

// A run of two rounds with citation chasing: its PRISMA flow adds up, its
// database boxes are what the searches returned (the stored
// source_searched events), chasing is a route of its own, and its
// screening and inclusion boxes are the stored candidates and references.
func TestPrismaFlowAddsUpAndMatchesTheStoredRun(t *testing.T) {
	t.Parallel()
	script := withLuttinger(&pipelinetest.Script{RevisionRounds: 0, MissingSlot: "open problems", GapQueries: []string{"del_maestro luttinger liquids"}})
	env := pipelinetest.NewEnv(t, script, "")
	_, sess := pipelinetest.RunToEnd(t, env, env.Options(question))
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

// --kind review: the writer is asked for a literature review, and the
// report carries the flow as a diagram that fits 80 columns and a table,
// with the counts the stored flow has.
func TestReviewKindReportCarriesItsFlow(t *testing.T) {
	t.Parallel()
	script := withLuttinger(&pipelinetest.Script{RevisionRounds: 0, MissingSlot: "open problems", GapQueries: []string{"del_maestro luttinger liquids"}})
	env := pipelinetest.NewEnv(t, script, "")
	opt := env.Options(question)
	opt.Kind = runopts.KindReview
	_, sess := pipelinetest.RunToEnd(t, env, opt)
	rep, err := pipeline.LoadReport(env.Store, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	asked := false
	for _, c := range env.Ollama.ChatCalls() {
		for _, m := range c.Messages {
			if strings.Contains(m.Content, "structured literature review") && strings.Contains(m.Content, "## Agreements and contradictions") {
				asked = true
			}
		}
	}
	if !asked {
		t.Error("the writer was not asked for a literature review")
	}
	md := rep.Markdown
	sec := strings.Index(md, "## PRISMA 2020 flow")
	if sec < 0 || rep.Flow == nil {
		t.Fatalf("no flow section in the review:\n%s", md)
	}
	if m, r := strings.Index(md, "## Method"), strings.Index(md, "## References"); m < sec || r < m {
		t.Errorf("the flow should come before the Method and the References (flow %d, method %d, references %d)", sec, m, r)
	}
	fence := "```" + report.FlowFence + "\n"
	start := strings.Index(md, fence)
	end := strings.Index(md[start+len(fence):], "```")
	if start < 0 || end < 0 {
		t.Fatalf("no diagram block:\n%s", md[sec:])
	}
	diagram := md[start+len(fence) : start+len(fence)+end]
	for _, line := range strings.Split(diagram, "\n") {
		if n := utf8.RuneCountInString(line); n > 72 {
			t.Errorf("diagram line of %d columns: %q", n, line)
		}
	}
	f := rep.Flow
	for _, want := range []string{
		fmt.Sprintf("Records identified (n = %d)", f.Identified),
		fmt.Sprintf("Duplicates removed (n = %d)", f.Duplicates),
		fmt.Sprintf("Records screened (n = %d)", f.Screened),
		fmt.Sprintf("Studies included (n = %d)", f.Included),
		"citation chasing (round 2)",
	} {
		if !strings.Contains(diagram, want) {
			t.Errorf("the diagram lacks %q:\n%s", want, diagram)
		}
	}
	for _, want := range []string{
		fmt.Sprintf("|  | Duplicates removed | %d |", f.Duplicates),
		fmt.Sprintf("| Included | Studies included (cited) | %d |", f.Included),
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the table lacks %q", want)
		}
	}

}

// TestPlannerTextInTheMethodIsInert: slot names are the planner's words;
// one written as an image (issue 48: "Round 2 looked for what was missing
// (![t](http://host/s.png))") reaches the Method section as text, which
// no Markdown viewer loads.
func TestPlannerTextInTheMethodIsInert(t *testing.T) {
	t.Parallel()
	hostile := "![t](http://h.io/s.png)" // slot names are cut at 40 characters
	script := withLuttinger(&pipelinetest.Script{RevisionRounds: 0, Slots: []string{"key findings", hostile, "<img src=http://h.io/i>"}, MissingSlot: hostile, GapQueries: []string{"del_maestro luttinger liquids"}})
	env := pipelinetest.NewEnv(t, script, "")
	_, sess := pipelinetest.RunToEnd(t, env, env.Options(question))
	rep, err := pipeline.LoadReport(env.Store, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	_, method, ok := strings.Cut(rep.Markdown, "\n## Method")
	if !ok || !strings.Contains(method, "Still not covered by any source") {
		t.Fatalf("the Method section does not name what is missing:\n%s", method)
	}
	if got := mdinert.Active(rep.Markdown); len(got) > 0 {
		t.Errorf("the report has %v:\n%s", got, method)
	}
	if !strings.Contains(report.PlainReference(method), hostile) {
		t.Errorf("the slot's words are lost:\n%s", method)
	}
}
