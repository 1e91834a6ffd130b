package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/runopts"
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
	t.Parallel()
	answers := stdinLines(strings.NewReader("d 7\nd 2\nq 1 mutation testing; fuzzing\n+ What do the authors call open problems?\ns arxiv, pubmed\n\n"))
	var out bytes.Buffer
	d, err := decide(context.Background(), runopts.ReviewApprove, &pipeline.ReviewRequest{Plan: promptPlan()}, answers, &out)
	if err != nil || !d.Approve || d.Plan == nil {
		t.Fatalf("decision %+v %v", d, err)
	}
	e := d.Plan
	if len(e.SubQuestions) != 2 || e.SubQuestions[0].ID != "q1" || strings.Join(e.SubQuestions[0].Queries, "|") != "mutation testing|fuzzing" ||
		e.SubQuestions[1].ID != "" || e.SubQuestions[1].Question != "What do the authors call open problems?" || strings.Join(e.Sources, ",") != "arxiv,pubmed" {
		t.Errorf("edit %+v", *e)
	}
	s := out.String()
	if strings.ContainsRune(s, '\x1b') || !strings.Contains(s, `no sub-question "7" (1 to 2)`) || !strings.Contains(s, "(the planner writes its queries)") {
		t.Errorf("prompt:\n%s", s)
	}
}

// Enter at once runs the plan as written, whatever --review says.
func TestHeadlessPlanPromptEnterApproves(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	d, err := decide(context.Background(), runopts.ReviewReject, &pipeline.ReviewRequest{Plan: promptPlan()}, stdinLines(strings.NewReader("\n")), &out)
	if err != nil || !d.Approve || d.Plan != nil {
		t.Fatalf("decision %+v %v", d, err)
	}
}

// A script of many commands (or a runaway paste) gets a line for each, not
// the whole plan reprinted each time; additions past the plan's cap are
// refused aloud; an endless line is cut, not held whole (issue 39: 2,000
// "+" lines printed 297 MB and dropped additions silently).
func TestHeadlessPlanPromptStaysBounded(t *testing.T) {
	t.Parallel()
	var in strings.Builder
	for i := range 2000 {
		in.WriteString("+ What does study " + strings.Repeat("x", i%50) + " find?\n")
	}
	in.WriteString("e 1 " + strings.Repeat("long ", 400_000) + "\n\n")
	var out bytes.Buffer
	d, err := decide(context.Background(), runopts.ReviewApprove, &pipeline.ReviewRequest{Plan: promptPlan()}, stdinLines(strings.NewReader(in.String())), &out)
	if err != nil || d.Plan == nil {
		t.Fatalf("decision %+v %v", d, err)
	}
	if n := len(d.Plan.SubQuestions); n != pipeline.MaxPlanSubQuestions {
		t.Errorf("%d sub-questions, want the cap %d", n, pipeline.MaxPlanSubQuestions)
	}
	if got := len(d.Plan.SubQuestions[0].Question); got > maxAnswerBytes {
		t.Errorf("a %d-byte answer was kept whole", got)
	}
	s := out.String()
	if !strings.Contains(s, "the plan holds at most 8 sub-questions") || !strings.Contains(s, "added 8. What does study") {
		t.Errorf("additions past the cap are not refused aloud:\n%.2000s", s)
	}
	if len(s) > 1<<20 {
		t.Errorf("the prompt printed %d bytes for 2,001 commands", len(s))
	}
}
