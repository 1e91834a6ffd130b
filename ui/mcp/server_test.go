package mcp_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/history"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/store"
	mcpserver "github.com/researchtui/researchtui/ui/mcp"
)

const question = "How is software testing studied?"

// harness is a server on the offline fakes with one connected client.
type harness struct {
	t   *testing.T
	env *pipelinetest.Env
	srv *mcpserver.Server
	cs  *mcp.ClientSession

	mu       sync.Mutex
	progress []string
}

func newHarness(t *testing.T, copt *mcp.ClientOptions) *harness {
	return newHarnessVersion(t, copt, "")
}

func newHarnessVersion(t *testing.T, copt *mcp.ClientOptions, version string) *harness {
	t.Helper()
	env := pipelinetest.NewEnv(t, &pipelinetest.Script{RevisionRounds: 1}, "")
	defaults := env.Options("")
	defaults.Question = ""
	h := &harness{t: t, env: env}
	h.srv = mcpserver.New(mcpserver.Config{Engine: env.Engine, Defaults: defaults, Version: "test"})
	if copt == nil {
		copt = &mcp.ClientOptions{}
	}
	copt.ProgressNotificationHandler = func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		h.mu.Lock()
		h.progress = append(h.progress, r.Params.Message)
		h.mu.Unlock()
	}
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := h.srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, copt).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	h.cs = cs
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
		h.srv.Wait() // runs saved before the store closes
	})
	return h
}

// call calls a tool and returns its result (a protocol error fails the test:
// no input may cause one).
func (h *harness) call(ctx context.Context, name string, args map[string]any) *mcp.CallToolResult {
	h.t.Helper()
	p := &mcp.CallToolParams{Name: name, Arguments: args}
	p.SetProgressToken("tok-" + name)
	res, err := h.cs.CallTool(ctx, p)
	if err != nil {
		h.t.Fatalf("%s %v: protocol error %v", name, args, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func decode[T any](t *testing.T, res *mcp.CallToolResult) T {
	t.Helper()
	var v T
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("structured content %s: %v", raw, err)
	}
	return v
}

func TestToolsAreDescribed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	ctx := context.Background()
	want := map[string]bool{"research": true, "search_knowledge": true, "list_sessions": true, "get_session": true, "resume_session": true, "follow_up": true, "start_research": true, "cancel_session": true, "update_session": true}
	for tool, err := range h.cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		delete(want, tool.Name)
		if len(tool.Description) < 40 {
			t.Errorf("%s: description %q says too little", tool.Name, tool.Description)
		}
		var schema struct {
			Properties map[string]struct {
				Description string `json:"description"`
			} `json:"properties"`
		}
		raw, _ := json.Marshal(tool.InputSchema)
		if err := json.Unmarshal(raw, &schema); err != nil || len(schema.Properties) == 0 {
			t.Errorf("%s: input schema %s", tool.Name, raw)
		}
		for name, p := range schema.Properties {
			if p.Description == "" {
				t.Errorf("%s.%s has no description", tool.Name, name)
			}
		}
	}
	if len(want) > 0 {
		t.Errorf("tools missing: %v", want)
	}
	if _, err := h.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "research", Arguments: map[string]string{"question": question}}); err != nil {
		t.Errorf("prompt: %v", err)
	}
}

// A research call through MCP: progress arrives, the report's citations all
// resolve, and the session is then searchable, listed and readable as a
// resource.
func TestResearchThenLibrary(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	ctx := context.Background()
	res := h.call(ctx, "research", map[string]any{"question": question})
	if res.IsError {
		t.Fatalf("research failed: %s", text(res))
	}
	out := decode[mcpserver.ResearchOutput](t, res)
	if out.Status != "completed" || out.SessionID == "" || !strings.Contains(out.Report, "## References") {
		t.Fatalf("result %+v", out)
	}
	if out.Usage.PromptTokens == 0 || out.Usage.CompletionTokens == 0 {
		t.Errorf("usage %+v", out.Usage)
	}
	// The client handles notifications on their own goroutines, so the
	// last may be handled just after the call's answer.
	var progress []string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		h.mu.Lock()
		progress = append([]string(nil), h.progress...)
		h.mu.Unlock()
		if strings.Contains(strings.Join(progress, "\n"), "completed") || time.Now().After(deadline) {
			break
		}
	}
	if len(progress) == 0 || !strings.Contains(strings.Join(progress, "\n"), "completed") {
		t.Errorf("progress notifications: %q", progress)
	}
	refs := map[int]mcpserver.Reference{}
	for _, r := range out.References {
		refs[r.N] = r
		if r.Title == "" || (r.DOI == "" && r.URL == "") {
			t.Errorf("reference %+v has no title or link", r)
		}
	}
	cited := regexp.MustCompile(`\[(\d+)\]`).FindAllStringSubmatch(out.Report, -1)
	if len(cited) == 0 {
		t.Fatal("the report cites nothing")
	}
	for _, m := range cited {
		n, _ := strconv.Atoi(m[1])
		if _, ok := refs[n]; !ok {
			t.Errorf("[%d] resolves to no reference", n)
		}
	}
	if !strings.Contains(text(res), out.SessionID) {
		t.Errorf("the text content does not name the session")
	}

	sr := h.call(ctx, "search_knowledge", map[string]any{"query": "software testing", "k": 3})
	found := decode[mcpserver.SearchOutput](t, sr)
	if sr.IsError || len(found.Passages) == 0 || len(found.Passages) > 3 {
		t.Fatalf("search_knowledge: %s", text(sr))
	}
	readBy := false
	for _, p := range found.Passages {
		if p.Title == "" || p.Text == "" {
			t.Errorf("passage %+v", p)
		}
		for _, id := range p.Sessions {
			readBy = readBy || id == out.SessionID
		}
	}
	if !readBy {
		t.Errorf("no passage names session %s as its reader: %+v", out.SessionID, found.Passages)
	}
	only := decode[mcpserver.SearchOutput](t, h.call(ctx, "search_knowledge", map[string]any{"query": "software testing", "sources": []string{"pubmed"}}))
	if len(only.Passages) != 0 {
		t.Errorf("a pubmed-only search found %d passages of a run that searched arxiv and openalex", len(only.Passages))
	}

	list := decode[mcpserver.ListOutput](t, h.call(ctx, "list_sessions", map[string]any{"status": "completed"}))
	if list.Total != 1 || list.Sessions[0].ID != out.SessionID {
		t.Errorf("list_sessions: %+v", list)
	}
	got := h.call(ctx, "get_session", map[string]any{"id": out.SessionID})
	if got.IsError || !strings.Contains(text(got), "## References") {
		t.Errorf("get_session: %s", text(got))
	}
	all := decode[history.SessionDetail](t, h.call(ctx, "get_session", map[string]any{"id": out.SessionID, "part": "all"}))
	if all.ID != out.SessionID || len(all.Sources) != len(out.References) || len(all.Candidates) == 0 {
		t.Errorf("get_session all: %d sources, %d candidates", len(all.Sources), len(all.Candidates))
	}

	uri := "researchtui://sessions/" + out.SessionID + "/report"
	listed := false
	for r, err := range h.cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		listed = listed || (r.URI == uri && r.MIMEType == "text/markdown")
	}
	if !listed {
		t.Errorf("%s not listed", uri)
	}
	templated := false
	for rt, err := range h.cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		templated = templated || rt.URITemplate == "researchtui://sessions/{id}/report"
	}
	if !templated {
		t.Error("no resource template")
	}
	rr, err := h.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != out.Report {
		t.Errorf("read %s: %v", uri, err)
	}
	if _, err := h.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "researchtui://sessions/nope/report"}); err == nil {
		t.Error("an unknown report was readable")
	}
}

// Bad input is a tool result with isError and a message a person can act
// on, and the server serves the next request.
func TestBadInputIsAToolError(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	ctx := context.Background()
	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"research", map[string]any{"question": "   "}, "question is empty"},
		{"research", map[string]any{"question": strings.Repeat("why ", 2000)}, "keep it to"},
		{"research", map[string]any{"question": question, "sources": []string{"arxiv", "myspace"}}, "unknown source"},
		{"research", map[string]any{"question": question, "depth": "bottomless"}, "unknown depth"},
		{"research", map[string]any{"question": question, "review": "maybe"}, "review must be"},
		{"research", map[string]any{"question": 42}, "question"},
		{"research", map[string]any{}, "question"},
		{"get_session", map[string]any{"id": "01nosuchsession"}, "no session"},
		{"get_session", map[string]any{"id": ""}, "no session ID"},
		{"get_session", map[string]any{"id": "x", "part": "everything"}, "part must be"},
		{"resume_session", map[string]any{"id": "01nosuchsession"}, "no session"},
		{"follow_up", map[string]any{"id": "01nosuchsession", "question": "and then?"}, "no session"},
		{"search_knowledge", map[string]any{"query": ""}, "query is empty"},
		{"search_knowledge", map[string]any{"query": "x", "k": 0.5}, "k"},
		{"search_knowledge", map[string]any{"query": "x", "k": 5000}, "k must be between"},
		{"search_knowledge", map[string]any{"query": "x", "k": -1}, "k must be between"},
		{"search_knowledge", map[string]any{"query": "x", "sources": []string{"geocities"}}, "unknown source"},
		{"list_sessions", map[string]any{"limit": -3}, "limit must be"},
		{"list_sessions", map[string]any{"status": "happy"}, "unknown status"},
	}
	for _, c := range cases {
		res := h.call(ctx, c.tool, c.args)
		if !res.IsError || !strings.Contains(text(res), c.want) {
			t.Errorf("%s %v: isError %v, %q; want a message with %q", c.tool, c.args, res.IsError, text(res), c.want)
		}
	}
	if res := h.call(ctx, "list_sessions", nil); res.IsError {
		t.Errorf("the server stopped serving: %s", text(res))
	}
	if _, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool"}); err == nil {
		t.Log("an unknown tool is a result, not an error") // either is within the protocol
	}
}

// Cancelling the call cancels the run; the session is resumable and
// resume_session finishes it.
func TestCancelThenResume(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	copt := &mcp.ClientOptions{}
	h := newHarness(t, copt)
	// Cancel as soon as the research stage reports progress: the run is
	// then mid-way (many model calls remain).
	go func() {
		for {
			h.mu.Lock()
			started := strings.Contains(strings.Join(h.progress, "\n"), "research")
			h.mu.Unlock()
			if started {
				once.Do(cancel)
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	p := &mcp.CallToolParams{Name: "research", Arguments: map[string]any{"question": question}}
	p.SetProgressToken("cancel-me")
	if _, err := h.cs.CallTool(ctx, p); err == nil {
		t.Fatal("the cancelled call returned a result")
	}
	h.srv.Wait()
	all, err := h.env.Store.ListSessions()
	if err != nil || len(all) != 1 {
		t.Fatalf("sessions %v %v", all, err)
	}
	if all[0].Status != store.StatusCancelled {
		t.Fatalf("status %s after cancelling, want cancelled", all[0].Status)
	}
	res := h.call(context.Background(), "resume_session", map[string]any{"id": all[0].ID})
	out := decode[mcpserver.ResearchOutput](t, res)
	if res.IsError || out.Status != "completed" || out.SessionID != all[0].ID || len(out.References) == 0 {
		t.Fatalf("resume: %s", text(res))
	}
	// A follow-up then grows the report.
	// follow_up takes the overrides ask takes (depth, sources, screen),
	// and a bad one is refused by name.
	if bad := h.call(context.Background(), "follow_up", map[string]any{"id": out.SessionID, "question": "and then?", "screen": "sometimes"}); !bad.IsError || !strings.Contains(text(bad), "screen") {
		t.Errorf("follow_up with screen \"sometimes\": %s", text(bad))
	}
	fu := h.call(context.Background(), "follow_up", map[string]any{"id": out.SessionID, "question": "Which of these methods need labelled data?", "screen": "off"})
	if fu.IsError || decode[mcpserver.ResearchOutput](t, fu).Status != "completed" {
		t.Fatalf("follow_up: %s", text(fu))
	}
}

// review "ask" with a client that can elicit puts the reviewer's requests
// to the person; without elicitation the default policy applies and says so.
func TestReviewAsk(t *testing.T) {
	t.Parallel()
	var asked []string
	var mu sync.Mutex
	// Server-initiated elicitation is 2025-11-25's; 2026-07-28 moves it
	// into the tool result (multi round-trip requests).
	h := newHarnessVersion(t, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			asked = append(asked, r.Params.Message)
			mu.Unlock()
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "reject_all"}}, nil
		},
	}, "2025-11-25")
	res := h.call(context.Background(), "research", map[string]any{"question": question, "review": "ask"})
	out := decode[mcpserver.ResearchOutput](t, res)
	if res.IsError || out.Status != "completed" {
		t.Fatalf("research: %s", text(res))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || !strings.Contains(asked[0], "revisions") || !strings.Contains(asked[0], "1. [") {
		t.Fatalf("elicitations: %q", asked)
	}
	evs, err := pipeline.LoadEvents(h.env.Store, out.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if ev.Type == pipeline.ReviewDecided && (ev.Decision == nil || ev.Decision.Approve) {
			t.Errorf("the person rejected the requests, the run recorded %+v", ev.Decision)
		}
	}

	plain := newHarness(t, nil)
	res = plain.call(context.Background(), "research", map[string]any{"question": question, "review": "ask"})
	out = decode[mcpserver.ResearchOutput](t, res)
	if res.IsError || out.Status != "completed" || !strings.Contains(strings.Join(out.Warnings, " "), "elicitation") {
		t.Fatalf("without elicitation: %+v", out.Warnings)
	}
}
