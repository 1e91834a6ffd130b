package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/history"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/textkit"
)

// Limits of the library tools: big enough for any real use, small enough
// that one call cannot make the server read or send without bound.
const (
	maxK         = 50
	defaultK     = 10
	maxLimit     = 500
	defaultLimit = 20
)

// ListInput is list_sessions' arguments.
type ListInput struct {
	Limit  int    `json:"limit,omitempty" jsonschema:"how many sessions at most, newest first (1-500, default 20)"`
	Status string `json:"status,omitempty" jsonschema:"only sessions in this status: running, awaiting_review, completed, failed, cancelled or interrupted"`
}

// SessionSummary is one session in a list.
type SessionSummary struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Question  string `json:"question"`
	Status    string `json:"status"`
	CreatedAt string `json:"created_at" jsonschema:"RFC 3339 time the session was started"`
	Model     string `json:"model"`
	Usage     Usage  `json:"usage"`
}

// ListOutput is list_sessions' result.
type ListOutput struct {
	Sessions []SessionSummary `json:"sessions"`
	Total    int              `json:"total" jsonschema:"sessions matching the status filter, before the limit"`
}

// GetInput is get_session's arguments.
type GetInput struct {
	ID   string `json:"id" jsonschema:"the session ID"`
	Part string `json:"part,omitempty" jsonschema:"report (the default: status, report and references), sources (the references and every candidate considered, with why it was or was not read) or all (everything stored, as sessions show --json prints it)"`
}

// SearchInput is search_knowledge's arguments.
type SearchInput struct {
	Query   string   `json:"query" jsonschema:"what to look for, in words (at most 4000 characters)"`
	K       int      `json:"k,omitempty" jsonschema:"passages to return, at most one per source (1-50, default 10)"`
	Sources []string `json:"sources,omitempty" jsonschema:"only passages from these source types: arxiv, openalex, pubmed, semanticscholar, crossref, web, local, materials"`
}

// Passage is one search_knowledge hit.
type Passage struct {
	Title    string   `json:"title"`
	Year     int      `json:"year,omitempty"`
	DOI      string   `json:"doi,omitempty"`
	URL      string   `json:"url,omitempty"`
	Source   string   `json:"source" jsonschema:"where it came from: arxiv, openalex, local, ..."`
	Page     int      `json:"page,omitempty"`
	Text     string   `json:"text" jsonschema:"the passage"`
	Score    float64  `json:"score" jsonschema:"relevance: cosine similarity when semantic, share of query words otherwise"`
	Sessions []string `json:"sessions,omitempty" jsonschema:"IDs of the sessions that read this source, newest first"`
}

// SearchOutput is search_knowledge's result.
type SearchOutput struct {
	Passages []Passage `json:"passages"`
	Semantic bool      `json:"semantic" jsonschema:"true when the embedding model ranked the passages; false for keyword matching (the model did not answer)"`
}

func (s *Server) addLibraryTools() {
	mcp.AddTool(s.srv, &mcp.Tool{
		Name:        "search_knowledge",
		Title:       "Search everything researched so far",
		Description: "Searches every passage researchtui has read (all past sessions' sources and the local corpus) and returns the best, one per source, with title, year, DOI/URL, the sessions that read it and the score. Fast; try it before research.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, s.searchKnowledge)
	mcp.AddTool(s.srv, &mcp.Tool{
		Name:        "list_sessions",
		Title:       "List research sessions",
		Description: "Lists research sessions, newest first: ID, title, question, status, start time, model and token usage.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, s.listSessions)
	mcp.AddTool(s.srv, &mcp.Tool{
		Name:  "get_session",
		Title: "Read a research session",
		Description: "Reads one session: its report and references (part=report, the default), its sources and every candidate considered (part=sources), or everything stored (part=all). " +
			"For a run start_research started, also its live progress: stage, round, sources found, documents read, chunks indexed, tokens, elapsed seconds and a review waiting for a decision.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, s.getSession)
}

func (s *Server) listSessions(_ context.Context, _ *mcp.CallToolRequest, in ListInput) (*mcp.CallToolResult, ListOutput, error) {
	var zero ListOutput
	if in.Limit < 0 || in.Limit > maxLimit {
		return nil, zero, fmt.Errorf("limit must be between 1 and %d (got %d)", maxLimit, in.Limit)
	}
	if in.Limit == 0 {
		in.Limit = defaultLimit
	}
	status := strings.ToLower(strings.TrimSpace(in.Status))
	if status != "" && !knownStatus(status) {
		return nil, zero, fmt.Errorf("unknown status %q; use running, awaiting_review, completed, failed, cancelled or interrupted", textkit.Clip(in.Status, 40))
	}
	page, err := s.st.ListSessionPage(status, in.Limit)
	if err != nil {
		return nil, zero, err
	}
	out := ListOutput{Sessions: []SessionSummary{}, Total: page.Total}
	for _, ss := range page.Sessions {
		out.Sessions = append(out.Sessions, summary(ss))
	}
	var b strings.Builder
	for _, ss := range out.Sessions {
		fmt.Fprintf(&b, "%s  %-15s  %s  %s\n", ss.ID, ss.Status, ss.CreatedAt, ss.Title)
	}
	if out.Total == 0 {
		b.WriteString("no sessions yet; start one with the research tool\n")
	} else if out.Total > len(out.Sessions) {
		fmt.Fprintf(&b, "(%d of %d shown; raise limit for more)\n", len(out.Sessions), out.Total)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: b.String()}}}, out, nil
}

func summary(ss store.Session) SessionSummary {
	return SessionSummary{ID: ss.ID, Title: ss.Title, Question: ss.Question, Status: ss.Status,
		CreatedAt: ss.CreatedAt.UTC().Format(time.RFC3339), Model: ss.Model,
		Usage: Usage{PromptTokens: ss.Usage.PromptTokens, CompletionTokens: ss.Usage.CompletionTokens, EmbeddingTokens: ss.Usage.EmbeddingTokens, CostUSD: ss.CostUSD}}
}

func knownStatus(s string) bool {
	switch s {
	case store.StatusRunning, store.StatusAwaitingReview, store.StatusCompleted, store.StatusFailed, store.StatusCancelled, store.StatusInterrupted:
		return true
	}
	return false
}

// getSession's structured output has no declared schema (Out is any): part
// "all" returns history.SessionDetail as `sessions show --json` prints it,
// whose stored options are free-form JSON.
func (s *Server) getSession(_ context.Context, _ *mcp.CallToolRequest, in GetInput) (*mcp.CallToolResult, any, error) {
	part := strings.ToLower(strings.TrimSpace(in.Part))
	switch part {
	case "":
		part = "report"
	case "report", "sources", "all":
	default:
		return nil, nil, fmt.Errorf("part must be report, sources or all, not %q", textkit.Clip(in.Part, 40))
	}
	sess, err := s.session(in.ID)
	if err != nil {
		return nil, nil, err
	}
	d, err := history.LoadDetail(s.st, sess.ID)
	if err != nil {
		return nil, nil, err
	}
	var text strings.Builder
	fmt.Fprintf(&text, "%s\nsession %s, %s; question: %s\n", d.Title, d.ID, d.Status, d.Question)
	if d.Error != "" {
		fmt.Fprintf(&text, "error: %s\n", d.Error)
	}
	var live *RunProgress
	if j := s.liveJob(sess.ID); j != nil {
		p := j.snapshot()
		live = &p
		text.WriteString(progressText(p))
	}
	refs := references(d.Sources)
	if refs == nil {
		refs = []Reference{}
	}
	switch part {
	case "report":
		if d.Report != "" {
			fmt.Fprintf(&text, "\n%s\n", strings.TrimSpace(d.Report))
		} else {
			text.WriteString("\nno report yet\n")
		}
		out := map[string]any{"session": summary(d.Session), "report": d.Report, "references": refs}
		if live != nil {
			out["progress"] = live
		}
		return textResult(text.String()), out, nil
	case "sources":
		for _, c := range d.Sources {
			fmt.Fprintf(&text, "[%d] %s\n", c.N, c.Reference)
		}
		fmt.Fprintf(&text, "%d candidates considered, %d read\n", len(d.Candidates), countRead(d.Candidates))
		out := map[string]any{"session": summary(d.Session), "references": refs, "candidates": d.Candidates}
		if live != nil {
			out["progress"] = live
		}
		return textResult(text.String()), out, nil
	}
	if d.Report != "" {
		fmt.Fprintf(&text, "\n%s\n", strings.TrimSpace(d.Report))
	}
	return textResult(text.String()), d, nil
}

func countRead(cs []pipeline.Candidate) int {
	n := 0
	for _, c := range cs {
		if c.Read {
			n++
		}
	}
	return n
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func (s *Server) searchKnowledge(ctx context.Context, _ *mcp.CallToolRequest, in SearchInput) (*mcp.CallToolResult, SearchOutput, error) {
	var zero SearchOutput
	query := strings.TrimSpace(in.Query)
	switch {
	case query == "":
		return nil, zero, errors.New("the query is empty; say what to look for, e.g. \"off-target detection in CRISPR screens\"")
	case utf8.RuneCountInString(query) > runopts.MaxQuestionChars:
		return nil, zero, fmt.Errorf("the query is %d characters; keep it to %d", utf8.RuneCountInString(query), runopts.MaxQuestionChars)
	case in.K < 0 || in.K > maxK:
		return nil, zero, fmt.Errorf("k must be between 1 and %d (got %d)", maxK, in.K)
	}
	k := in.K
	if k == 0 {
		k = defaultK
	}
	only := map[string]bool{}
	for _, src := range in.Sources {
		src = strings.ToLower(strings.TrimSpace(src))
		if !known(src) {
			return nil, zero, fmt.Errorf("unknown source %q (known: %s)", textkit.Clip(src, 40), strings.Join(runopts.KnownSources, ", "))
		}
		only[src] = true
	}
	fetch := k
	if len(only) > 0 {
		fetch = min(k*5, 250) // filtered afterwards: ask for more
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ps, semantic, err := s.cfg.Engine.SearchKnowledge(ctx, query, s.cfg.Defaults.EmbedModel, fetch)
	if err != nil {
		return nil, zero, fmt.Errorf("the search failed: %v", err)
	}
	out := SearchOutput{Passages: []Passage{}, Semantic: semantic}
	var keys []string
	for _, p := range ps {
		if len(only) > 0 && !only[p.Source] {
			continue
		}
		if len(out.Passages) == k {
			break
		}
		out.Passages = append(out.Passages, Passage{Title: p.Title, Year: p.Year, DOI: p.DOI, URL: p.URL, Source: p.Source, Page: p.Page, Text: p.Text, Score: float64(p.Score)})
		keys = append(keys, p.SourceKey)
	}
	if readBy, err := history.ReadBy(s.st, keys); err == nil {
		for i := range out.Passages {
			out.Passages[i].Sessions = readBy[keys[i]]
		}
	}
	var b strings.Builder
	if !semantic {
		b.WriteString("(keyword search: the embedding model did not answer)\n")
	}
	if len(out.Passages) == 0 {
		b.WriteString("nothing found; research the question first\n")
	}
	for i, p := range out.Passages {
		fmt.Fprintf(&b, "%d. %s", i+1, p.Title)
		if p.Year > 0 {
			fmt.Fprintf(&b, " (%d)", p.Year)
		}
		fmt.Fprintf(&b, " [%s, %.2f] %s\n   %s\n", p.Source, p.Score, textkit.FirstNonEmpty(doiURL(p.DOI), p.URL), textkit.Clip(strings.Join(strings.Fields(p.Text), " "), 400))
	}
	return textResult(b.String()), out, nil
}

func doiURL(doi string) string {
	if doi == "" {
		return ""
	}
	return "https://doi.org/" + doi
}

func known(src string) bool {
	for _, k := range runopts.KnownSources {
		if k == src {
			return true
		}
	}
	return false
}
