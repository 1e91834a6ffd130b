package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/textkit"
)

// SessionInput names a session (resume_session).
type SessionInput struct {
	ID     string `json:"id" jsonschema:"the session ID, as research or list_sessions returned it"`
	Review string `json:"review,omitempty" jsonschema:"what happens to reviewer requests: approve (default), reject or ask (elicitation)"`
}

// FollowUpInput is the follow_up tool's arguments.
type FollowUpInput struct {
	ID       string   `json:"id" jsonschema:"the ID of a completed session"`
	Question string   `json:"question" jsonschema:"the follow-up question; researchtui researches only what the session lacks and adds to its report as a new version"`
	Depth    string   `json:"depth,omitempty" jsonschema:"quick, standard or deep; omitted: the session's own depth"`
	Sources  []string `json:"sources,omitempty" jsonschema:"sources to search; omitted: the session's own"`
	Screen   string   `json:"screen,omitempty" jsonschema:"on or off: whether the model judges which candidates are on topic before they are read; omitted: the session's own"`
	Review   string   `json:"review,omitempty" jsonschema:"what happens to reviewer requests: approve (default), reject or ask (elicitation)"`
}

// Reference is one entry of a report's reference list: what [n] cites.
type Reference struct {
	N       int      `json:"n" jsonschema:"the citation number used as [n] in the report"`
	Title   string   `json:"title"`
	Authors []string `json:"authors,omitempty"`
	Year    int      `json:"year,omitempty"`
	DOI     string   `json:"doi,omitempty"`
	URL     string   `json:"url,omitempty"`
}

// Usage is what a session spent.
type Usage struct {
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	EmbeddingTokens  int     `json:"embedding_tokens"`
	CostUSD          float64 `json:"cost_usd" jsonschema:"cost at the configured prices (0 for local models)"`
}

// ResearchOutput is what research, resume_session and follow_up return.
type ResearchOutput struct {
	SessionID  string      `json:"session_id" jsonschema:"the session's ID, for get_session, follow_up and resume_session"`
	Status     string      `json:"status" jsonschema:"completed, awaiting_review, failed, cancelled or interrupted"`
	Report     string      `json:"report,omitempty" jsonschema:"the report in Markdown, citing sources as [n]"`
	References []Reference `json:"references,omitempty" jsonschema:"the sources the report cites, by n"`
	Usage      Usage       `json:"usage"`
	Warnings   []string    `json:"warnings,omitempty" jsonschema:"things that went less well than asked (unavailable sources, a review that could not be asked)"`
	Message    string      `json:"message,omitempty" jsonschema:"what to do next when the session did not complete"`
}

func (s *Server) addResearchTools() {
	mcp.AddTool(s.srv, &mcp.Tool{
		Name:        "research",
		Title:       "Research a question",
		InputSchema: researchSchema(),
		Description: "Researches a question the way `researchtui run` does: plans it, searches scholarly sources, reads and indexes the papers, " +
			"writes a Markdown report with [n] citations whose references come from real source metadata, and has a reviewer check it. " +
			"Takes minutes; sends progress notifications when the call carries a progress token; cancelling the call cancels the run " +
			"(the session can be continued with resume_session). Returns the session ID, status, report, references and token usage.",
	}, s.research)
	mcp.AddTool(s.srv, &mcp.Tool{
		Name:  "resume_session",
		Title: "Resume a session",
		Description: "Continues an interrupted, cancelled, failed or awaiting-review session from its last checkpoint (finished work is not repeated) " +
			"and returns like research.",
	}, s.resume)
	mcp.AddTool(s.srv, &mcp.Tool{
		Name:  "follow_up",
		Title: "Ask a finished session a follow-up question",
		Description: "Asks a completed session a further question: researches only what the session lacks and adds the answer to its report " +
			"as a new version (like `researchtui ask`). Returns like research, with the whole new report.",
	}, s.followUp)
}

func (s *Server) research(ctx context.Context, req *mcp.CallToolRequest, in ResearchInput) (*mcp.CallToolResult, ResearchOutput, error) {
	var zero ResearchOutput
	opt, review, warnings, err := s.researchOptions(ctx, in)
	if err != nil {
		return nil, zero, err
	}
	ctx, done, err := s.waitedRun(ctx)
	if err != nil {
		return nil, zero, err
	}
	defer done()
	r, err := s.cfg.Engine.Start(ctx, opt)
	if err != nil {
		return nil, zero, errors.New(badInputMessage(err))
	}
	return s.drive(ctx, req, r, review, warnings)
}

// researchOptions are a research or start_research call's run options and
// review policy, checked before anything starts, with warnings about
// requested sources this build lacks.
func (s *Server) researchOptions(ctx context.Context, in ResearchInput) (runopts.Options, string, []string, error) {
	opt := s.cfg.Defaults
	opt.Question = in.Question
	if err := in.overlay(&opt); err != nil { // the table's MCP options (research_input.go)
		return opt, "", nil, err
	}
	review, err := reviewPolicy(in.Review)
	if err != nil {
		return opt, "", nil, err
	}
	if err := opt.Normalize(); err != nil { // bad input is answered before anything starts
		return opt, "", nil, errors.New(badInputMessage(err))
	}
	if s.cfg.CheckCollections != nil {
		if err := s.cfg.CheckCollections(opt.Collections); err != nil {
			return opt, "", nil, errors.New(badInputMessage(err))
		}
	}
	if err := s.check(ctx, opt.Model, opt.EmbedModel); err != nil {
		return opt, "", nil, err
	}
	var warnings []string
	if names := s.cfg.Engine.SourcesNotSearched(opt.Sources); len(names) > 0 && !opt.AutoSources {
		warnings = append(warnings, "not searched: "+strings.Join(names, "; ")+"; the other sources were searched")
	}
	return opt, review, warnings, nil
}

func (s *Server) resume(ctx context.Context, req *mcp.CallToolRequest, in SessionInput) (*mcp.CallToolResult, ResearchOutput, error) {
	return s.onSession(ctx, req, in.ID, in.Review, func(ctx context.Context, eng *pipeline.Engine, sess store.Session) (*pipeline.Run, error) {
		return eng.Resume(ctx, sess.ID, nil)
	})
}

func (s *Server) followUp(ctx context.Context, req *mcp.CallToolRequest, in FollowUpInput) (*mcp.CallToolResult, ResearchOutput, error) {
	return s.onSession(ctx, req, in.ID, in.Review, func(ctx context.Context, eng *pipeline.Engine, sess store.Session) (*pipeline.Run, error) {
		return eng.Ask(ctx, sess.ID, in.Question, func(o *runopts.Options) {
			if in.Depth != "" {
				o.Depth = in.Depth
			}
			if len(in.Sources) > 0 {
				o.Sources, o.AutoSources = in.Sources, false
			}
			if in.Screen != "" {
				o.Screen = in.Screen
			}
		})
	})
}

// onSession is what resume_session and follow_up share: the review policy,
// the stored session and its models checked, then a run started by start
// and driven to its end like research's.
func (s *Server) onSession(ctx context.Context, req *mcp.CallToolRequest, id, reviewIn string, start func(context.Context, *pipeline.Engine, store.Session) (*pipeline.Run, error)) (*mcp.CallToolResult, ResearchOutput, error) {
	var zero ResearchOutput
	eng := s.cfg.Engine
	review, err := reviewPolicy(reviewIn)
	if err != nil {
		return nil, zero, err
	}
	sess, err := s.session(id)
	if err != nil {
		return nil, zero, err
	}
	if err := s.check(ctx, sess.Model, sess.EmbedModel); err != nil {
		return nil, zero, err
	}
	ctx, done, err := s.waitedRun(ctx)
	if err != nil {
		return nil, zero, err
	}
	defer done()
	r, err := start(ctx, eng, sess)
	if err != nil {
		return nil, zero, errors.New(badInputMessage(err))
	}
	return s.drive(ctx, req, r, review, nil)
}

// drive follows a run to its end: progress notifications for the client,
// the review gate by policy or elicitation, then the result.
func (s *Server) drive(ctx context.Context, req *mcp.CallToolRequest, r *pipeline.Run, review string, warnings []string) (*mcp.CallToolResult, ResearchOutput, error) {
	p := &progress{ctx: ctx, req: req}
	sess, report, runErr := pipeline.Drive(ctx, r, p.event, func(ctx context.Context, rv *pipeline.ReviewRequest) (pipeline.Decision, error) {
		d, warn, err := s.decide(ctx, req, review, rv)
		if warn != "" {
			warnings = append(warnings, warn)
		}
		return d, err
	})
	out := s.output(sess, report, warnings)
	if runErr != nil {
		if errors.Is(runErr, context.Canceled) {
			out.Message = fmt.Sprintf("session %s was cancelled; resume_session with id %s continues it", sess.ID, sess.ID)
		} else {
			out.Message = fmt.Sprintf("session %s failed: %v; resume_session with id %s retries from its last checkpoint", sess.ID, runErr, sess.ID)
		}
		res := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: out.Message}}}
		return res, out, nil
	}
	if sess.Status != store.StatusCompleted {
		out.Message = fmt.Sprintf("session %s is %s; resume_session with id %s continues it", sess.ID, strings.ReplaceAll(sess.Status, "_", " "), sess.ID)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: out.Message}}}, out, nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: reportText(out)}}}, out, nil
}

// output builds the tool's structured result from the saved session; the
// references come from the stored report (built by code from source
// metadata, never by the model).
func (s *Server) output(sess store.Session, report string, warnings []string) ResearchOutput {
	out := ResearchOutput{SessionID: sess.ID, Status: sess.Status, Report: report, Warnings: warnings,
		Usage: Usage{PromptTokens: sess.Usage.PromptTokens, CompletionTokens: sess.Usage.CompletionTokens, EmbeddingTokens: sess.Usage.EmbeddingTokens, CostUSD: sess.CostUSD}}
	if rep, err := pipeline.LoadReport(s.st, sess.ID); err == nil {
		if out.Report == "" {
			out.Report = rep.Markdown
		}
		out.References = references(rep.Sources)
	}
	if out.Report == "" && sess.Status == store.StatusCompleted {
		out.Report = sess.Report
	}
	return out
}

func references(cs []report.CitedSource) []Reference {
	var out []Reference
	for _, c := range cs {
		out = append(out, Reference{N: c.N, Title: c.Title, Authors: c.Authors, Year: c.Year, DOI: c.DOI, URL: textkit.FirstNonEmpty(c.URL, c.PDFURL)})
	}
	return out
}

// reportText is the text content beside the structured result: the report
// and a line that names the session, so a client that shows only text
// still has the ID for follow-ups.
func reportText(out ResearchOutput) string {
	return fmt.Sprintf("%s\n\n---\nresearchtui session %s (%d prompt + %d completion tokens). Ask it more with follow_up {id: %q}.",
		strings.TrimSpace(out.Report), out.SessionID, out.Usage.PromptTokens, out.Usage.CompletionTokens, out.SessionID)
}

// check runs the backend check, if any, and says how to fix a failure.
func (s *Server) check(ctx context.Context, models ...string) error {
	if s.cfg.Check == nil {
		return nil
	}
	if err := s.cfg.Check(ctx, models...); err != nil {
		return fmt.Errorf("the model backend is not ready: %v (run `researchtui doctor` for the fix)", err)
	}
	return nil
}

// session looks a session up, with a message a person can act on.
func (s *Server) session(id string) (store.Session, error) {
	id = strings.TrimSpace(id)
	if id == "" {
		return store.Session{}, errors.New("no session ID given; list_sessions shows them")
	}
	sess, err := s.st.Session(id)
	if errors.Is(err, store.ErrNotFound) {
		return store.Session{}, fmt.Errorf("no session %q; list_sessions shows the sessions there are", textkit.Clip(id, 80))
	}
	return sess, err
}

func reviewPolicy(p string) (string, error) {
	switch p = strings.ToLower(strings.TrimSpace(p)); p {
	case "":
		return runopts.ReviewApprove, nil
	case runopts.ReviewApprove, runopts.ReviewReject, runopts.ReviewAsk:
		return p, nil
	}
	return "", fmt.Errorf("review must be approve, reject or ask, not %q", textkit.Clip(p, 40))
}
