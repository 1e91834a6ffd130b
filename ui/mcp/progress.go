package mcp

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/textkit"
)

// progress turns a run's events into MCP progress notifications: one per
// event worth a line (stages, sources, the review, the outcome), with the
// same text headless `run` prints. The count only grows, as the protocol
// asks; the total is unknown (a run's rounds are decided as it goes).
type progress struct {
	ctx context.Context
	req *mcp.CallToolRequest
	n   int
}

func (p *progress) event(ev pipeline.Event) {
	if p.req == nil || p.req.Session == nil || p.req.Params == nil {
		return
	}
	tok := p.req.Params.GetProgressToken()
	if tok == nil || p.ctx.Err() != nil {
		return
	}
	line := strings.TrimSpace(ev.Summary())
	if line == "" {
		return
	}
	p.n++
	// A notification that cannot be sent (the client went away) must not
	// stop the run; cancellation reaches it through the context.
	_ = p.req.Session.NotifyProgress(p.ctx, &mcp.ProgressNotificationParams{
		ProgressToken: tok,
		Progress:      float64(p.n),
		Message:       textkit.CleanLine(line),
	})
}

// decide answers a reviewer's requests: by policy, or for "ask" by
// putting them to the person through elicitation when the client can. A
// person who dismisses the form decides later: the error stops the run and
// the session waits as awaiting_review. warn says when "ask" could not ask.
func (s *Server) decide(ctx context.Context, req *mcp.CallToolRequest, policy string, rv *pipeline.ReviewRequest) (pipeline.Decision, string, error) {
	if rv.Plan != nil { // review_plan ask, whatever review says
		return s.decidePlan(ctx, req, rv.Plan)
	}
	if d, ok := pipeline.PolicyDecision(policy); ok {
		return d, "", nil
	}
	fallback, _ := pipeline.PolicyDecision(runopts.ReviewApprove)
	res, warn, err := s.elicit(ctx, req, reviewForm(rv), "review", "the reviewer's requests were approved (the default)")
	if err != nil {
		return pipeline.Decision{}, "", err
	}
	if res == nil {
		return fallback, warn, nil
	}
	switch res.Action {
	case "accept":
		return formDecision(rv, res.Content), "", nil
	case "decline":
		return pipeline.Decision{Approve: false}, "", nil
	}
	return pipeline.Decision{}, "", fmt.Errorf("the review was left for later")
}

// elicit puts a form to the person when the client can. A nil result
// means nobody was asked: warn (for the setting named what) says why and
// what was done instead; err is the run's end (ctx).
func (s *Server) elicit(ctx context.Context, req *mcp.CallToolRequest, form *mcp.ElicitParams, what, instead string) (*mcp.ElicitResult, string, error) {
	if !canElicit(req) {
		return nil, what + ": ask needs a client that supports elicitation; " + instead, nil
	}
	res, err := req.Session.Elicit(ctx, form)
	if err != nil {
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		s.log.Warn("elicitation failed", "err", err)
		return nil, what + ": the client could not be asked (" + err.Error() + "); " + instead, nil
	}
	return res, "", nil
}

func canElicit(req *mcp.CallToolRequest) bool {
	if req == nil || req.Session == nil {
		return false
	}
	ip := req.Session.InitializeParams()
	return ip != nil && ip.Capabilities != nil && ip.Capabilities.Elicitation != nil
}

// reviewForm is the elicitation for one round of revision requests: a flat
// form (the protocol allows no nesting) with the requests in the message.
func reviewForm(rv *pipeline.ReviewRequest) *mcp.ElicitParams {
	var b strings.Builder
	fmt.Fprintf(&b, "The reviewer asks for %d revisions of the research report (round %d): %s\n", len(rv.Requests), rv.Round, textkit.CleanLine(rv.Summary))
	for i, q := range rv.Requests {
		fmt.Fprintf(&b, "%d. [%s] %s: %s\n", i+1, q.Kind, textkit.CleanLine(q.Section), textkit.CleanLine(q.Text))
	}
	b.WriteString("Accept all, reject all (finalise the draft as it is), or accept the numbers you list. Decline rejects; cancel decides later.")
	return &mcp.ElicitParams{
		Mode:    "form",
		Message: b.String(),
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"decision": map[string]any{
					"type": "string", "title": "Decision",
					"enum":        []string{"accept_all", "reject_all", "accept_listed"},
					"description": "accept_all carries out every request; reject_all finalises the draft; accept_listed carries out the numbers below",
				},
				"numbers": map[string]any{"type": "string", "title": "Numbers to accept", "description": "for accept_listed: e.g. 1 3"},
				"note":    map[string]any{"type": "string", "title": "Note to the writer", "description": "optional"},
			},
			"required": []string{"decision"},
		},
	}
}

// formDecision reads the filled-in form.
func formDecision(rv *pipeline.ReviewRequest, content map[string]any) pipeline.Decision {
	str := func(k string) string { v, _ := content[k].(string); return strings.TrimSpace(v) }
	note := textkit.CleanLine(str("note"))
	switch str("decision") {
	case "reject_all":
		return pipeline.Decision{Approve: false}
	case "accept_listed":
		var ids []string
		for _, f := range strings.Fields(strings.ReplaceAll(str("numbers"), ",", " ")) {
			if n, err := strconv.Atoi(f); err == nil && n >= 1 && n <= len(rv.Requests) {
				ids = append(ids, rv.Requests[n-1].ID)
			}
		}
		if len(ids) == 0 {
			return pipeline.Decision{Approve: false}
		}
		return pipeline.Decision{Approve: true, Accepted: ids, Note: note}
	}
	return pipeline.Decision{Approve: true, Note: note}
}
