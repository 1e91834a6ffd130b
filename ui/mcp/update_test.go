package mcp_test

import (
	"context"
	"strings"
	"testing"

	mcpserver "github.com/researchtui/researchtui/ui/mcp"

	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/search"
)

// TestUpdateSession: update_session on a finished session reads the work
// that appeared since and returns the new version with the check's
// counts; called again, it finds nothing, writes nothing and says so.
func TestUpdateSession(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	shelf := &pipelinetest.Shelf{}
	h.env.Engine.Sources = map[string]search.Source{"openalex": shelf, "arxiv": &pipelinetest.Shelf{SourceName: "arxiv"}}
	shelf.Add(
		search.Record{Title: "Mutation testing techniques for software test suites", Year: 2021, Authors: []string{"Ada Tester"},
			Abstract: "Mutation testing is a software testing technique that injects faults. Mutation scores predict how many real faults a test suite detects."},
		search.Record{Title: "Tool use by language models for chemistry synthesis planning", Year: 2023, Authors: []string{"Ada Tester"},
			Abstract: "Language models that call chemistry tools plan syntheses more reliably. Tool calls reduce hallucinated reactions in synthesis planning."},
	)
	out := decode[mcpserver.ResearchOutput](t, h.call(context.Background(), "research", map[string]any{"question": question}))
	if out.Status != "completed" {
		t.Fatalf("research: %+v", out)
	}
	shelf.Add(search.Record{Title: "Property-based software testing techniques in practice", Year: 2026, Authors: []string{"Bo Checker"},
		Abstract: "Property-based testing is a software testing technique that checks invariants on generated inputs. Teams adopting it found subtle bugs that unit tests missed."})
	res := h.call(context.Background(), "update_session", map[string]any{"id": out.SessionID})
	up := decode[mcpserver.UpdateOutput](t, res)
	if res.IsError || up.Check == nil || up.Check.Version != 2 || up.Check.Kept != 1 || !strings.Contains(up.Report, "## What's new since") ||
		!strings.HasPrefix(text(res), "version 2: 1 new source") {
		t.Fatalf("update_session: %s\n%+v", text(res), up.Check)
	}
	res = h.call(context.Background(), "update_session", map[string]any{"id": out.SessionID})
	up = decode[mcpserver.UpdateOutput](t, res)
	if res.IsError || up.Check == nil || up.Check.Version != 0 || up.Report != "" || !strings.HasPrefix(text(res), "no new version: ") {
		t.Fatalf("a second update_session: %s\n%+v", text(res), up.Check)
	}
	if res := h.call(context.Background(), "update_session", map[string]any{"id": "01nosuchsession"}); !res.IsError || !strings.Contains(text(res), "no session") {
		t.Errorf("an unknown session: %s", text(res))
	}
}
