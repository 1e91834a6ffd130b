package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/researchtui/researchtui/pipeline"
)

func promptPlan() *pipeline.Plan {
	return &pipeline.Plan{Sources: []string{"arxiv", "openalex"}, SubQuestions: []pipeline.SubQuestion{
		{ID: "q1", Question: "Which testing techniques\x1b[2J are studied?", Queries: pipeline.Queries{Strict: "software testing techniques", Broad: "testing"}},
		{ID: "q2", Question: "How are tools given to models?", Queries: pipeline.Queries{Strict: "tool augmented models"}},
	}}
}

// The headless plan prompt: commands edit the plan (a bad one is
// explained and changes nothing), an empty line sends the run on with the
// plan as left; the plan's model text never brings escapes to the terminal.
func TestHeadlessPlanPromptEditsThePlan(t *testing.T) {
	answers := stdinLines(strings.NewReader("d 7\nd 2\nq 1 mutation testing; fuzzing\n+ What do the authors call open problems?\ns arxiv, pubmed\n\n"))
	var out bytes.Buffer
	d, err := decide(context.Background(), pipeline.ReviewApprove, &pipeline.ReviewRequest{Plan: promptPlan()}, answers, &out)
	if err != nil || !d.Approve || d.Plan == nil {
		t.Fatalf("decision %+v %v", d, err)
	}
	e := d.Plan
	if len(e.SubQuestions) != 2 || e.SubQuestions[0].ID != "q1" || strings.Join(e.SubQuestions[0].Queries, "|") != "mutation testing|fuzzing" ||
		e.SubQuestions[1].ID != "" || e.SubQuestions[1].Question != "What do the authors call open problems?" || strings.Join(e.Sources, ",") != "arxiv,pubmed" {
		t.Errorf("edit %+v", *e)
	}
	s := out.String()
	if strings.ContainsRune(s, '\x1b') || !strings.Contains(s, `no sub-question "7" (1 to 2)`) || !strings.Contains(s, "(the planner writes them)") {
		t.Errorf("prompt:\n%s", s)
	}
}

// Enter at once runs the plan as written, whatever --review says.
func TestHeadlessPlanPromptEnterApproves(t *testing.T) {
	var out bytes.Buffer
	d, err := decide(context.Background(), pipeline.ReviewReject, &pipeline.ReviewRequest{Plan: promptPlan()}, stdinLines(strings.NewReader("\n")), &out)
	if err != nil || !d.Approve || d.Plan != nil {
		t.Fatalf("decision %+v %v", d, err)
	}
}
