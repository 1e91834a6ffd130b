package mcp

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/textkit"
)

// The plan review over MCP (review_plan ask): the plan is put to the
// person by elicitation before anything is searched. The protocol's forms
// are flat, so the edits are three fields: sub-questions to delete (by
// number), sub-questions to add (the planner writes their queries), and
// the sources to search.

// decidePlan asks about the plan when the client can elicit; otherwise
// the plan runs as written (warn says so).
func (s *Server) decidePlan(ctx context.Context, req *mcp.CallToolRequest, p *pipeline.Plan) (pipeline.Decision, string, error) {
	approve := pipeline.Decision{Approve: true}
	res, warn, err := s.elicit(ctx, req, planForm(p), "review_plan", "the plan ran as the planner wrote it")
	if res == nil {
		if err != nil {
			return pipeline.Decision{}, "", err
		}
		return approve, warn, nil
	}
	switch res.Action {
	case "accept":
		return planDecision(p, res.Content), "", nil
	case "decline":
		return approve, "", nil
	}
	return pipeline.Decision{}, "", fmt.Errorf("the plan review was left for later")
}

func planForm(p *pipeline.Plan) *mcp.ElicitParams {
	var b strings.Builder
	fmt.Fprintf(&b, "The research plan, before anything is searched (sources: %s):\n", strings.Join(p.Sources, ", "))
	for i, sq := range p.SubQuestions {
		fmt.Fprintf(&b, "%d. %s (queries: %s)\n", i+1, textkit.CleanLine(sq.Question), textkit.CleanLine(strings.Join(sq.Queries.List(), "; ")))
	}
	b.WriteString("Accept runs it with the changes below (leave them empty to run it as it is); decline runs it as it is; cancel decides later.")
	return &mcp.ElicitParams{
		Mode:    "form",
		Message: b.String(),
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"delete":  map[string]any{"type": "string", "title": "Sub-questions to delete", "description": "their numbers, e.g. 2 4"},
				"add":     map[string]any{"type": "string", "title": "Sub-questions to add", "description": "separated by ;"},
				"sources": map[string]any{"type": "string", "title": "Sources to search", "description": "comma-separated, e.g. arxiv, pubmed (empty: as planned)"},
			},
		},
	}
}

// planDecision reads the filled-in plan form.
func planDecision(p *pipeline.Plan, content map[string]any) pipeline.Decision {
	str := func(k string) string { v, _ := content[k].(string); return strings.TrimSpace(v) }
	del := map[int]bool{}
	for _, f := range strings.Fields(strings.ReplaceAll(str("delete"), ",", " ")) {
		if n, err := strconv.Atoi(f); err == nil {
			del[n] = true
		}
	}
	e := &pipeline.PlanEdit{Sources: p.Sources}
	for i, sq := range p.SubQuestions {
		if !del[i+1] {
			e.SubQuestions = append(e.SubQuestions, pipeline.PlanItem{ID: sq.ID, Question: sq.Question})
		}
	}
	for _, q := range strings.Split(str("add"), ";") {
		if q = textkit.CleanLine(q); q != "" {
			e.SubQuestions = append(e.SubQuestions, pipeline.PlanItem{Question: q})
		}
	}
	if srcs := str("sources"); srcs != "" {
		e.Sources = nil
		for _, s := range strings.Split(srcs, ",") {
			e.Sources = append(e.Sources, strings.TrimSpace(s))
		}
	}
	if len(del) == 0 && str("add") == "" && str("sources") == "" {
		return pipeline.Decision{Approve: true}
	}
	return pipeline.Decision{Approve: true, Plan: e}
}
