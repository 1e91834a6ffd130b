package mcp_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	mcpserver "github.com/researchtui/researchtui/ui/mcp"
)

// jobsServer is an HTTP server on the offline fakes whose reviewer asks for
// a revision, so a run started with review "ask" waits for a person.
func jobsServer(t *testing.T) (string, *pipelinetest.Env) {
	return jobsServerCapped(t, 0)
}

func jobsServerCapped(t *testing.T, maxRuns int) (string, *pipelinetest.Env) {
	t.Helper()
	env := pipelinetest.NewEnv(t, &pipelinetest.Script{RevisionRounds: 1}, "")
	defaults := env.Options("")
	defaults.Question = ""
	srv := mcpserver.New(mcpserver.Config{Engine: env.Engine, Defaults: defaults, Version: "test", MaxRuns: maxRuns})
	ts := httptest.NewServer(srv.Handler(mcpserver.HTTPOptions{}))
	t.Cleanup(func() { ts.Close(); srv.Shutdown() })
	return ts.URL + "/mcp", env
}

// connect opens a client session; a client with asking set answers
// elicitation by waiting until its session ends (a person who never
// answers), and tells asking when it was asked.
func connect(t *testing.T, url string, opt *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "jobs-test", Version: "1"}, opt).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callJSON[T any](t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) T {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("%s: %s", name, text(res))
	}
	var out T
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: %v in %s", name, err, raw)
	}
	return out
}

type sessionView struct {
	Session struct {
		Status string `json:"status"`
	} `json:"session"`
	Report   string                 `json:"report"`
	Progress *mcpserver.RunProgress `json:"progress"`
	Refs     []mcpserver.Reference  `json:"references"`
}

// waitReview polls get_session until the run's review waits for a
// person, and returns that view.
func waitReview(t *testing.T, cs *mcp.ClientSession, id string) sessionView {
	t.Helper()
	var view sessionView
	waitFor(t, "the review waits in get_session", func() bool {
		view = callJSON[sessionView](t, cs, "get_session", map[string]any{"id": id})
		return view.Progress != nil && view.Progress.Review != nil
	})
	return view
}

// start_research returns the session at once; the run waits on its review
// where get_session shows it live; the client that started it goes away
// and the run goes on (the review falls back to approve); a subscriber of
// its report hears that it changed and reads the finished report.
func TestStartResearchOutlivesItsClientAndNotifiesSubscribers(t *testing.T) {
	t.Parallel()
	url, env := jobsServer(t)
	starter := connect(t, url, nil)
	updated := make(chan string, 4)
	watcher := connect(t, url, &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
		updated <- r.Params.URI
	}})

	started := callJSON[mcpserver.StartOutput](t, starter, "start_research", map[string]any{"question": question, "review": "ask"})
	if started.SessionID == "" || started.Status != "running" || !strings.Contains(started.ReportURI, started.SessionID) {
		t.Fatalf("start_research: %+v", started)
	}
	if err := watcher.Subscribe(context.Background(), &mcp.SubscribeParams{URI: started.ReportURI}); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	view := waitReview(t, watcher, started.SessionID)
	if p := view.Progress; !p.Running || p.Stage != "review" || len(p.Review.Requests) == 0 || p.SourcesFound == 0 || p.DocumentsRead == 0 || p.Tokens.CompletionTokens == 0 {
		t.Fatalf("get_session while the review waits: %+v", view.Progress)
	}

	starter.Close() // the host quits; the run is the server's and waits on
	if view := callJSON[sessionView](t, watcher, "get_session", map[string]any{"id": started.SessionID}); view.Progress == nil || !view.Progress.Running {
		t.Fatalf("the run ended with the client that started it: %+v", view)
	}
	// The person decides in the TUI (another researchtui on the data dir).
	if err := env.Engine.DecideElsewhere(started.SessionID, pipeline.Decision{Approve: true}); err != nil {
		t.Fatal(err)
	}
	if uri := <-updated; uri != started.ReportURI {
		t.Fatalf("notification for %q, want %q", uri, started.ReportURI)
	}
	res, err := watcher.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: started.ReportURI})
	if err != nil || len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, "## References") {
		t.Fatalf("the report after the update: %v %+v", err, res)
	}
	view = callJSON[sessionView](t, watcher, "get_session", map[string]any{"id": started.SessionID})
	if view.Session.Status != "completed" || view.Progress != nil {
		t.Errorf("after the run: %s, progress %+v", view.Session.Status, view.Progress)
	}
}

// cancel_session stops a run start_research started; the session is left
// resumable, and cancelling it again says there is nothing to cancel.
func TestCancelSession(t *testing.T) {
	t.Parallel()
	url, _ := jobsServer(t)
	cs := connect(t, url, nil)
	started := callJSON[mcpserver.StartOutput](t, cs, "start_research", map[string]any{"question": question, "review": "ask"})
	waitReview(t, cs, started.SessionID)
	out := callJSON[mcpserver.CancelOutput](t, cs, "cancel_session", map[string]any{"id": started.SessionID})
	if out.Status == "running" || out.Status == "completed" || !strings.Contains(out.Message, "resume_session") {
		t.Fatalf("cancel_session: %+v", out)
	}
	again, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "cancel_session", Arguments: map[string]any{"id": started.SessionID}})
	if err != nil || !again.IsError || !strings.Contains(text(again), "not running") {
		t.Errorf("cancelling twice: %v %s", err, text(again))
	}
	resumed := callJSON[mcpserver.ResearchOutput](t, cs, "resume_session", map[string]any{"id": started.SessionID, "review": "approve"})
	if resumed.Status != "completed" {
		t.Errorf("resume after cancel: %+v", resumed)
	}
}

// A client that starts runs in a loop meets the cap: past it, start_research
// and research answer isError naming the cap; a slot freed by cancelling
// takes the next run (issue 39 #7: 200 calls gave 200 runs at once).
func TestRunsAreCapped(t *testing.T) {
	t.Parallel()
	url, _ := jobsServerCapped(t, 2)
	cs := connect(t, url, nil)
	var ids []string
	for range 2 { // each waits for a person on its plan: both hold their slot
		started := callJSON[mcpserver.StartOutput](t, cs, "start_research", map[string]any{"question": question, "review": "ask", "review_plan": "ask"})
		ids = append(ids, started.SessionID)
	}
	for _, tool := range []string{"start_research", "research"} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"question": question, "review": "approve"}})
		if err != nil || !res.IsError || !strings.Contains(text(res), "driving 2 research runs, its cap") {
			t.Errorf("%s past the cap: %v %q", tool, err, text(res))
		}
	}
	waitReview(t, cs, ids[0])
	callJSON[mcpserver.CancelOutput](t, cs, "cancel_session", map[string]any{"id": ids[0]})
	waitFor(t, "a slot frees when a run ends", func() bool {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "start_research", Arguments: map[string]any{"question": question, "review": "ask"}})
		return err == nil && !res.IsError
	})
}
