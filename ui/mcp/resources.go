package mcp

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/textkit"
)

const (
	reportTemplate = "researchtui://sessions/{id}/report"
	reportPrefix   = "researchtui://sessions/"
	reportSuffix   = "/report"
)

func reportURI(id string) string { return reportPrefix + id + reportSuffix }

// reportID is the session ID a report URI names.
func reportID(uri string) (string, bool) {
	id, ok := strings.CutPrefix(uri, reportPrefix)
	if ok {
		id, ok = strings.CutSuffix(id, reportSuffix)
	}
	return id, ok && id != "" && !strings.Contains(id, "/")
}

// addResources offers every finished report as a resource. Reports come
// and go with sessions (in this process or, with a shared store, in
// another), so instead of registering one resource per report and keeping
// the set in sync, the template serves reads and resources/list is
// answered from the store at the time of the call.
func (s *Server) addResources() {
	s.srv.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "report",
		Title:       "Research report",
		URITemplate: reportTemplate,
		Description: "The Markdown report of a finished researchtui session, with its References section.",
		MIMEType:    "text/markdown",
	}, s.readReport)
	s.srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method != "resources/list" || err != nil {
				return res, err
			}
			if lr, ok := res.(*mcp.ListResourcesResult); ok && lr.NextCursor == "" {
				lr.Resources = append(lr.Resources, s.reportResources()...)
			}
			return res, err
		}
	})
}

// reportResources are the completed sessions' reports, newest first.
func (s *Server) reportResources() []*mcp.Resource {
	all, err := s.st.ListSessions()
	if err != nil {
		s.log.Warn("listing sessions for resources", "err", err)
		return nil
	}
	var out []*mcp.Resource
	for _, ss := range all {
		if ss.Status != store.StatusCompleted {
			continue
		}
		out = append(out, &mcp.Resource{
			URI:         reportURI(ss.ID),
			Name:        "report-" + ss.ID,
			Title:       ss.Title,
			Description: "Report: " + textkit.Clip(ss.Question, 200),
			MIMEType:    "text/markdown",
		})
	}
	return out
}

func (s *Server) readReport(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	id, ok := reportID(uri)
	if !ok {
		return nil, reportNotFound(uri)
	}
	sess, err := s.st.Session(id)
	if err != nil || sess.Report == "" {
		return nil, reportNotFound(uri)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: sess.Report}}}, nil
}

// reportNotFound is mcp.ResourceNotFoundError with its data marshalled as
// JSON (the SDK's own uses %q; see guardWire), with the code the MCP
// specification gives (SEP-2164: invalid params, -32602).
func reportNotFound(uri string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Resource not found", Data: jsonData(map[string]string{"uri": uri})}
}

// subscribe accepts a subscription to a session's report, finished or
// not: a run's subscriber is told when it ends (start_research).
func (s *Server) subscribe(_ context.Context, req *mcp.SubscribeRequest) error {
	uri := req.Params.URI
	id, ok := reportID(uri)
	if !ok {
		return reportNotFound(uri)
	}
	if _, err := s.st.Session(id); err != nil {
		return reportNotFound(uri)
	}
	return nil
}
