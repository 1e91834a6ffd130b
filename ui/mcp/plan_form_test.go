package mcp

import (
	"strings"
	"testing"

	"github.com/researchtui/researchtui/pipeline"
)

// The plan form: numbers delete, ";" separates added sub-questions,
// sources replace the plan's; an empty form runs the plan as written.
func TestPlanFormDecision(t *testing.T) {
	t.Parallel()
	p := &pipeline.Plan{Sources: []string{"arxiv"}, SubQuestions: []pipeline.SubQuestion{{ID: "q1", Question: "one?"}, {ID: "q2", Question: "two?"}}}
	d := planDecision(p, map[string]any{"delete": "2, 9", "add": "three?; \x1b[2Jfour?", "sources": "arxiv, pubmed"})
	if !d.Approve || d.Plan == nil {
		t.Fatalf("%+v", d)
	}
	var qs []string
	for _, it := range d.Plan.SubQuestions {
		qs = append(qs, it.ID+":"+it.Question)
	}
	if strings.Join(qs, "|") != "q1:one?|:three?|:four?" || strings.Join(d.Plan.Sources, ",") != "arxiv,pubmed" {
		t.Errorf("plan %q sources %q", qs, d.Plan.Sources)
	}
	if d := planDecision(p, map[string]any{}); !d.Approve || d.Plan != nil {
		t.Errorf("empty form: %+v", d)
	}
}
