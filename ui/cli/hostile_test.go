package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/llm/ollamafake"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/textkit/texttest"
)

// Every output path carries hostile model text without its controls: the
// headless progress and report, --json events, sessions list/show (text
// and JSON), trace, and every export format.
func TestHostileTextReachesNoOutput(t *testing.T) {
	t.Parallel()
	plan := `{"title":"Title` + jsonString(texttest.Evil) + `","intent":"cs_physics","canonical_term":"testing","sub_questions":[` +
		`{"question":"Which software testing techniques are studied` + jsonString(texttest.Evil) + `?","queries":{"strict":"software testing techniques","moderate":"software testing","broad":"testing"},"slots":["key findings"]}]}`
	prose := strings.Repeat("Software testing research compares techniques on real systems and reports how well each finds faults [1]. ", 4)
	report := "# Title" + texttest.Evil + "\n\n## Executive summary\n\nTesting is studied" + texttest.Evil + " widely [1].\n\n" + prose + "\n\n## Research gaps\n\nMore work" + texttest.Evil + ".\n"
	review := `{"approved":true,"summary":"Good` + jsonString(texttest.Evil) + `","requests":[]}`
	script := &pipelinetest.Script{Faults: []pipelinetest.Fault{
		{Kind: pipelinetest.Planner, Nth: 1, Reply: ollamafake.Reply{Content: plan}},
		{Kind: pipelinetest.Writer, Nth: 1, Reply: ollamafake.Reply{Content: report}},
		{Kind: pipelinetest.Reviewer, Nth: 1, Reply: ollamafake.Reply{Content: review}},
	}}
	c, _, _ := scriptedCLI(t, script)
	check := func(what, out string) {
		t.Helper()
		if bad := texttest.Hostile(out); bad != "" {
			t.Errorf("%s carries a control: %q", what, bad)
		}
	}
	stdout, stderr, code, _ := c.run("run", "--sources", "arxiv,openalex", "How is software testing studied?")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	check("run's report", stdout)
	check("run's progress", stderr)
	for i, fired := range script.Fired() {
		if !fired {
			t.Fatalf("hostile answer %d was never served: the test proves nothing", i)
		}
	}
	if !strings.Contains(stdout, "Testing is studied") {
		t.Fatalf("the hostile report's text did not reach the output:\n%s", stdout)
	}
	stdout, stderr, _, _ = c.run("run", "--json", "--sources", "arxiv,openalex", "How is software testing studied, again?")
	check("run --json", stdout)
	check("run --json's stderr", stderr)
	var id string
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var ev struct {
			SessionID string `json:"session_id"`
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.SessionID != "" {
			id = ev.SessionID
		}
	}
	if id == "" {
		t.Fatal("no session ID in the events")
	}
	for _, args := range [][]string{
		{"sessions", "list"}, {"sessions", "list", "--json"},
		{"sessions", "show", id}, {"sessions", "show", id, "--json"},
		{"sessions", "trace", id}, {"sessions", "trace", id, "--json"},
	} {
		out, errOut, _, _ := c.run(args...)
		check(strings.Join(args[:len(args)-1], " "), out+errOut)
	}
	for _, f := range []string{"md", "html", "json", "bibtex"} {
		file := filepath.Join(c.dir, "export."+f)
		if _, errOut, code, _ := c.run("sessions", "export", id, "--format", f, "--out", file); code != 0 {
			t.Fatalf("export %s: exit %d\n%s", f, code, errOut)
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		check("export "+f, string(b))
	}

	// The MCP server's tool results and resources, as an agent host reads them.
	cmd := c.command("mcp")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "hostile-test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, call := range []*mcp.CallToolParams{
		{Name: "get_session", Arguments: map[string]any{"id": id}},
		{Name: "list_sessions", Arguments: map[string]any{}},
		{Name: "search_knowledge", Arguments: map[string]any{"query": "software testing"}},
	} {
		res, err := cs.CallTool(ctx, call)
		if err != nil {
			t.Fatalf("%s: %v", call.Name, err)
		}
		raw, _ := json.Marshal(res)
		check("mcp "+call.Name, string(raw)+toolText(res))
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "researchtui://sessions/" + id + "/report"})
	if err != nil {
		t.Fatalf("read the report resource: %v", err)
	}
	for _, ct := range rr.Contents {
		check("mcp report resource", ct.Text)
	}
}

func toolText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, ct := range res.Content {
		if tc, ok := ct.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// jsonString is s as the inside of a JSON string literal.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// A model server's words reach no terminal raw (issue 48): /api/show
// capabilities with escape sequences in the "cannot chat" refusal, a
// status message in a failed look-up, a model name in the `ollama pull`
// hint. Exit codes still come from what the errors are.
func TestServerWordsInErrorsAreClean(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/api/version":
			io.WriteString(w, `{"version":"0.12.0"}`)
		case r.URL.Path == "/api/show" && strings.Contains(readAll(r), "broken"):
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"error":"runner died`+jsonString(texttest.Evil)+`"}`)
		case r.URL.Path == "/api/show" && strings.Contains(readAll(r), "gone"):
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error":"model not found"}`)
		case r.URL.Path == "/api/show":
			io.WriteString(w, `{"capabilities":["embedding`+jsonString(texttest.Evil)+`","vision"]}`)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	b, err := llm.NewOllama(srv.URL, llm.OllamaOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for model, code := range map[string]int{"embedder": exitUsage, "broken": exitFailed, "gone" + texttest.Evil: exitBackend} {
		err := checkBackend(t.Context(), b, model)
		if err == nil {
			t.Fatalf("%q: the check passed", model)
		}
		if bad := texttest.Hostile(err.Error()); bad != "" {
			t.Errorf("%q: the error carries %q", model, bad)
		}
		if got := exitCode(t.Context(), err); got != code {
			t.Errorf("%q: exit code %d, want %d (%v)", model, got, code, err)
		}
	}
}

func readAll(r *http.Request) string {
	b, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(strings.NewReader(string(b)))
	return string(b)
}
