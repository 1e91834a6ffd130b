package mcp

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/textkit"
)

// UpdateInput is the update_session tool's arguments.
type UpdateInput struct {
	ID string `json:"id" jsonschema:"the session ID of a completed session, as research or list_sessions returned it"`
}

// UpdateOutput is what update_session returns: the session as research
// returns it, and what the check found.
type UpdateOutput struct {
	ResearchOutput
	Check *pipeline.UpdateCheck `json:"check,omitempty" jsonschema:"the check: queries run, works seen, new, read and kept, the version written (0: none) and why not, tokens and time"`
}

func (s *Server) addUpdateTools() {
	mcp.AddTool(s.srv, &mcp.Tool{
		Name:  "update_session",
		Title: "Update a finished report with new work",
		Description: "Keeps a completed session's report up to date (like `researchtui update`): runs its searches again, reads only works " +
			"it never met, and when some pass screening writes a new version with a \"What's new since\" section at the top; earlier " +
			"citation numbers stay. With nothing new no version is written. Returns like research, with the check's counts.",
	}, s.update)
}

func (s *Server) update(ctx context.Context, req *mcp.CallToolRequest, in UpdateInput) (*mcp.CallToolResult, UpdateOutput, error) {
	res, out, err := s.onSession(ctx, req, in.ID, "", func(ctx context.Context, eng *pipeline.Engine, sess store.Session) (*pipeline.Run, error) {
		return eng.Update(ctx, sess.ID)
	})
	up := UpdateOutput{ResearchOutput: out}
	if err != nil {
		return res, up, err
	}
	checks, cerr := pipeline.LoadUpdateChecks(s.st, out.SessionID)
	if cerr != nil {
		return res, up, errors.New("the update ran, but its check could not be read: " + cerr.Error())
	}
	if len(checks) > 0 && out.Status == store.StatusCompleted {
		c := checks[len(checks)-1]
		up.Check = &c
		say := fmt.Sprintf("version %d: %s (%d works seen, %d new)\n\n", c.Version, textkit.Plural(c.Kept, "new source", "new sources"), c.Seen, c.New)
		if c.Version == 0 {
			say = fmt.Sprintf("no new version: %s (%d works seen, %d new); the report is unchanged", c.Reason, c.Seen, c.New)
			up.Report, up.References = "", nil // unchanged: get_session has it
		} else if res != nil && len(res.Content) == 1 {
			if t, ok := res.Content[0].(*mcp.TextContent); ok {
				say += t.Text
			}
		}
		res = &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: say}}}
	}
	return res, up, nil
}
