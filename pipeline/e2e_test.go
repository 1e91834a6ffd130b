package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/researchtui/researchtui/llm/ollamafake"
	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/store"
)

const question = "How is software testing studied, and how are language models given tools for chemistry?"

// fixtureTitles are the real titles and years of every recorded paper the
// fake sources serve, keyed by normalised title.
func fixtureTitles(t *testing.T) map[string]int {
	t.Helper()
	dir := filepath.Join("..", "search", "sourcefake", "testdata")
	out := map[string]int{}
	err := filepath.WalkDir(dir, func(path string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var recs []search.Record
		switch {
		case strings.HasSuffix(e.Name(), ".xml"):
			recs, _ = search.ParseArxivFeed(raw)
		case strings.HasSuffix(e.Name(), ".json"):
			recs, _ = search.ParseOpenAlex(raw)
		}
		for _, r := range recs {
			out[search.NormalizeTitle(r.Title)] = r.Year
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 5 {
		t.Fatalf("only %d fixture titles found", len(out))
	}
	return out
}

func TestEndToEnd(t *testing.T) {
	t.Parallel()
	env := pipelinetest.NewEnv(t, &pipelinetest.Script{RevisionRounds: 1, BogusCitation: true}, "")
	r, err := env.Engine.Start(context.Background(), env.Options(question))
	if err != nil {
		t.Fatal(err)
	}
	evs := pipelinetest.Drive(t, r, nil)
	sess, err := r.Wait()
	if err != nil {
		t.Fatalf("run failed: %v", err)
	}
	if sess.Status != store.StatusCompleted {
		t.Fatalf("status %q, want completed", sess.Status)
	}

	rep, err := pipeline.LoadReport(env.Store, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	md := rep.Markdown
	if !strings.HasPrefix(md, "# Testing and Tool-Augmented Language Models") {
		t.Errorf("report does not start with its title:\n%s", md)
	}
	for _, want := range []string{"## Executive summary", "## Which software testing techniques are studied in these papers?", "## How are large language models augmented with tools for chemistry?", "## References"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if !strings.Contains(md, "This revised report") {
		t.Error("the final report is not the revised draft")
	}
	if strings.Contains(md, "invented") || strings.Contains(md, "[42]") {
		t.Error("the model's own references or its bogus citation survived finalise")
	}
	if rep.Metrics.DistinctSources < 4 {
		t.Errorf("%d distinct sources cited, want >= 4 (the candidates are mostly on topic)", rep.Metrics.DistinctSources)
	}
	if rep.Metrics.Removed != 1 {
		t.Errorf("removed %d citations, want the 1 bogus one", rep.Metrics.Removed)
	}
	// References are exactly the cited papers, numbered 1..n, with the
	// real titles and years of the recorded responses.
	titles := fixtureTitles(t)
	_, refs, _ := strings.Cut(md, "## References")
	if got := strings.Count(refs, "\n["); got != len(rep.Sources) {
		t.Errorf("%d reference lines for %d cited sources:\n%s", got, len(rep.Sources), refs)
	}
	for i, src := range rep.Sources {
		if src.N != i+1 {
			t.Errorf("source %d numbered %d", i+1, src.N)
		}
		year, ok := titles[search.NormalizeTitle(src.Title)]
		if !ok {
			t.Errorf("cited title %q is not a recorded paper", src.Title)
		} else if year != src.Year {
			t.Errorf("%q: year %d, recorded %d", src.Title, src.Year, year)
		}
		if !strings.Contains(md, "["+itoa(src.N)+"]") {
			t.Errorf("[%d] is in the references but not cited", src.N)
		}
		if !strings.Contains(refs, src.Reference) {
			t.Errorf("reference %q not printed", src.Reference)
		}
		if src.Quote == "" {
			t.Errorf("[%d] has no supporting quote", src.N)
		}
	}
	if strings.Contains(md, "["+itoa(len(rep.Sources)+1)+"]") {
		t.Error("a citation beyond the reference list survived")
	}

	// Two review rounds: the first asked for revisions and was approved.
	if len(rep.Reviews) != 2 || rep.Reviews[0].Approved || !rep.Reviews[1].Approved {
		t.Errorf("reviews = %+v, want [revise, approved]", rep.Reviews)
	}
	if len(rep.Decisions) != 1 || !rep.Decisions[0].Approve {
		t.Errorf("decisions = %+v", rep.Decisions)
	}

	// Token totals equal what the fake served.
	served := env.Ollama.Served()
	if sess.Usage.PromptTokens != served.PromptTokens || sess.Usage.CompletionTokens != served.CompletionTokens || sess.Usage.EmbeddingTokens != served.EmbeddingTokens {
		t.Errorf("usage %+v, served %+v", sess.Usage, served)
	}

	// Events: increasing seq, the lifecycle in order, persisted.
	var last int64
	seen := map[pipeline.EventType]bool{}
	for _, ev := range evs {
		if ev.Seq <= last {
			t.Fatalf("seq %d after %d (%s)", ev.Seq, last, ev.Type)
		}
		last = ev.Seq
		if ev.SessionID != sess.ID {
			t.Fatalf("event of session %q", ev.SessionID)
		}
		seen[ev.Type] = true
	}
	for _, typ := range []pipeline.EventType{pipeline.RunStarted, pipeline.SourceFound, pipeline.ChunksIndexed, pipeline.AnalysisDone, pipeline.DraftReady, pipeline.ReviewRequested, pipeline.ReviewDecided, pipeline.TokenDelta, pipeline.Warning, pipeline.ReportReady, pipeline.RunFinished} {
		if !seen[typ] {
			t.Errorf("no %s event", typ)
		}
	}
	if evs[len(evs)-1].Type != pipeline.RunFinished {
		t.Errorf("last event %s", evs[len(evs)-1].Type)
	}
	logged, err := env.Engine.Events(sess.ID)
	if err != nil || len(logged) == 0 || logged[len(logged)-1].Type != pipeline.RunFinished {
		t.Errorf("persisted event log ends wrong (%d events, err %v)", len(logged), err)
	}
	for _, ev := range logged {
		if ev.Type == pipeline.TokenDelta {
			t.Fatal("token deltas must not be persisted")
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestFaultsDegradeButFinish(t *testing.T) {
	t.Parallel()
	script := &pipelinetest.Script{
		RevisionRounds: 1,
		Faults: []pipelinetest.Fault{
			{Kind: pipelinetest.Planner, Nth: 1, Reply: ollamafake.Reply{Content: `Sure! {"title": "x", "sub_questions": [ {"question": `}},
			{Kind: pipelinetest.Analyst, Nth: 1, Reply: ollamafake.Reply{Status: 500, Error: "llama runner process has terminated"}},
			{Kind: pipelinetest.Writer, Nth: 1, Reply: ollamafake.Reply{Content: "The report starts here and then the connection", DropAfter: 3}},
			{Kind: pipelinetest.Reviewer, Nth: 2, Reply: ollamafake.Reply{Content: "I think it's fine, approved!!"}},
		},
	}
	env := pipelinetest.NewEnv(t, script, "")
	evs, sess := pipelinetest.RunToEnd(t, env, env.Options(question))
	for i, fired := range script.Fired() {
		if !fired {
			t.Errorf("fault %d (%s call %d) was never served", i, script.Faults[i].Kind, script.Faults[i].Nth)
		}
	}
	// The analyst's HTTP 500 costs that source its model analysis: it is
	// summarised from its abstract, and the person is told.
	if !warnedAbout(evs, "500") {
		t.Error("no warning tells of the analyst's HTTP 500")
	}
	rep, err := pipeline.LoadReport(env.Store, sess.ID)
	if err != nil || len(rep.Sources) == 0 || !strings.Contains(rep.Markdown, "## References") {
		t.Fatalf("no usable report: %v\n%s", err, rep.Markdown)
	}
	served := env.Ollama.Served()
	if sess.Usage.PromptTokens != served.PromptTokens || sess.Usage.CompletionTokens != served.CompletionTokens {
		t.Errorf("usage %+v, served %+v", sess.Usage, served)
	}
}

func TestResumeAfterAnalyseRepeatsNoModelCall(t *testing.T) {
	t.Parallel()
	env := pipelinetest.NewEnv(t, &pipelinetest.Script{RevisionRounds: 1}, "")
	r, err := env.Engine.Start(context.Background(), env.Options(question))
	if err != nil {
		t.Fatal(err)
	}
	for ev := range r.Events() {
		if ev.Type == pipeline.StageFinished && ev.Stage == pipeline.StageAnalyse {
			r.Cancel()
		}
	}
	sess, err := r.Wait()
	if !errors.Is(err, context.Canceled) && sess.Status != store.StatusAwaitingReview {
		t.Fatalf("first attempt: status %q err %v", sess.Status, err)
	}
	firstSteps := sess.Steps
	if firstSteps == 0 {
		t.Error("the first attempt recorded no model steps")
	}
	before := env.Ollama.Requests()
	count := func(reqs []ollamafake.Logged, pred func(ollamafake.Logged) bool) int {
		n := 0
		for _, q := range reqs {
			if pred(q) {
				n++
			}
		}
		return n
	}
	isEmbed := func(q ollamafake.Logged) bool { return q.Path == "/api/embed" }
	kindIs := func(kind string) func(ollamafake.Logged) bool {
		return func(q ollamafake.Logged) bool {
			return q.Path == "/api/chat" && pipelinetest.KindOf(q.Call) == kind
		}
	}
	planners, analysts, embeds := count(before, kindIs(pipelinetest.Planner)), count(before, kindIs(pipelinetest.Analyst)), count(before, isEmbed)
	if planners == 0 || analysts == 0 || embeds == 0 {
		t.Fatalf("first attempt made %d planner, %d analyst, %d embed calls", planners, analysts, embeds)
	}

	r2, err := env.Engine.Resume(context.Background(), sess.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	pipelinetest.Drive(t, r2, nil)
	sess, err = r2.Wait()
	if err != nil || sess.Status != store.StatusCompleted {
		t.Fatalf("resume: status %q err %v", sess.Status, err)
	}
	if sess.Steps <= firstSteps {
		t.Errorf("steps %d after resuming from %d: the step budget would restart", sess.Steps, firstSteps)
	}
	after := env.Ollama.Requests()[len(before):]
	if n := count(after, kindIs(pipelinetest.Planner)); n != 0 {
		t.Errorf("resume repeated %d planner calls", n)
	}
	if n := count(after, kindIs(pipelinetest.Analyst)); n != 0 {
		t.Errorf("resume repeated %d analyst calls", n)
	}
	if n := count(after, isEmbed); n != 0 {
		t.Errorf("resume repeated %d embedding calls", n)
	}
	if count(after, kindIs(pipelinetest.Writer)) == 0 && count(before, kindIs(pipelinetest.Writer)) == 0 {
		t.Error("nobody wrote the report")
	}
	served := env.Ollama.Served()
	if sess.Usage.PromptTokens != served.PromptTokens || sess.Usage.CompletionTokens != served.CompletionTokens || sess.Usage.EmbeddingTokens != served.EmbeddingTokens {
		t.Errorf("usage over both attempts %+v, served %+v", sess.Usage, served)
	}
}

func TestQuitAtReviewLeavesSessionAwaitingReview(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := pipelinetest.NewEnv(t, &pipelinetest.Script{RevisionRounds: 1}, dir)
	ctx, cancel := context.WithCancel(context.Background())
	r, err := env.Engine.Start(ctx, env.Options(question))
	if err != nil {
		t.Fatal(err)
	}
	pipelinetest.Drive(t, r, func(*pipeline.ReviewRequest) *pipeline.Decision { cancel(); return nil })
	sess, err := r.Wait()
	if err != nil || sess.Status != store.StatusAwaitingReview || len(sess.PendingReview) == 0 {
		t.Fatalf("status %q pending %d err %v, want awaiting_review with the review saved", sess.Status, len(sess.PendingReview), err)
	}
	// Later (a restart), the pending review is asked again and decided.
	r2, err := env.Engine.Resume(context.Background(), sess.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	asked := 0
	pipelinetest.Drive(t, r2, func(rv *pipeline.ReviewRequest) *pipeline.Decision {
		asked++
		return &pipeline.Decision{Approve: true, Accepted: []string{rv.Requests[0].ID}, Note: "keep it short"}
	})
	sess, err = r2.Wait()
	if err != nil || sess.Status != store.StatusCompleted || asked != 1 {
		t.Fatalf("status %q err %v asked %d", sess.Status, err, asked)
	}
}

func TestBadQuestion(t *testing.T) {
	t.Parallel()
	env := pipelinetest.NewEnv(t, nil, "")
	for _, q := range []string{"", "   \n\t ", "\x1b[2J", strings.Repeat("why ", 2000)} {
		_, err := env.Engine.Start(context.Background(), env.Options(q))
		if !errors.Is(err, runopts.ErrBadInput) {
			t.Errorf("question %.20q: err %v, want ErrBadInput", q, err)
		}
	}
	if all, _ := env.Store.ListSessions(); len(all) != 0 {
		t.Errorf("bad input created %d sessions", len(all))
	}
}

func TestMaxRevisionsBoundsTheReviewLoop(t *testing.T) {
	t.Parallel()
	env := pipelinetest.NewEnv(t, &pipelinetest.Script{RevisionRounds: 10}, "")
	opt := env.Options(question)
	opt.MaxRevisions = 1
	evs, _ := pipelinetest.RunToEnd(t, env, opt)
	asked, warned := 0, false
	for _, ev := range evs {
		if ev.Type == pipeline.ReviewRequested {
			asked++
		}
		if ev.Type == pipeline.Warning && strings.Contains(ev.Message, "--max-revisions") {
			warned = true
		}
	}
	if asked != 1 || !warned || env.Script.Calls(pipelinetest.Reviewer) != 2 {
		t.Errorf("asked %d times, warned %v, %d reviewer calls; want 1, true, 2", asked, warned, env.Script.Calls(pipelinetest.Reviewer))
	}
}

func TestTokenBudgetSkipsOptionalWork(t *testing.T) {
	t.Parallel()
	env := pipelinetest.NewEnv(t, &pipelinetest.Script{RevisionRounds: 1}, "")
	opt := env.Options(question)
	opt.BudgetTokens = 1 // spent by the first call
	evs, sess := pipelinetest.RunToEnd(t, env, opt)
	if !warnedAbout(evs, "budget") {
		t.Error("no budget warning")
	}
	if n := env.Script.Calls(pipelinetest.Analyst) + env.Script.Calls(pipelinetest.Reviewer); n != 0 {
		t.Errorf("%d analyst/reviewer calls after the budget was spent", n)
	}
	rep, err := pipeline.LoadReport(env.Store, sess.ID)
	if err != nil || rep.Markdown == "" {
		t.Fatalf("no report within budget: %v", err)
	}
}

// nomic-embed-text retrieves well only with its task prefixes: documents
// and queries are sent with them.
func TestEmbeddingTaskPrefixes(t *testing.T) {
	t.Parallel()
	env := pipelinetest.NewEnv(t, &pipelinetest.Script{}, "")
	pipelinetest.RunToEnd(t, env, env.Options(question))
	docs, queries := 0, 0
	for _, q := range env.Ollama.Requests() {
		if q.Path != "/api/embed" {
			continue
		}
		var body struct {
			Input []string `json:"input"`
		}
		if err := json.Unmarshal(q.Body, &body); err != nil {
			t.Fatal(err)
		}
		for _, in := range body.Input {
			switch {
			case strings.HasPrefix(in, "search_document: "):
				docs++
			case strings.HasPrefix(in, "search_query: "):
				queries++
			default:
				t.Errorf("embedded without a task prefix: %.60q", in)
			}
		}
	}
	if docs == 0 || queries == 0 {
		t.Errorf("%d documents and %d queries embedded with prefixes", docs, queries)
	}
}

func TestASessionRunsOnceAtATime(t *testing.T) {
	t.Parallel()
	env := pipelinetest.NewEnv(t, &pipelinetest.Script{RevisionRounds: 1}, "")
	ctx, cancel := context.WithCancel(context.Background())
	r, err := env.Engine.Start(ctx, env.Options(question))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Engine.Resume(context.Background(), r.ID(), nil); !errors.Is(err, pipeline.ErrRunning) {
		t.Errorf("resuming a live run: %v, want ErrRunning", err)
	}
	pipelinetest.Drive(t, r, func(*pipeline.ReviewRequest) *pipeline.Decision { cancel(); return nil })
	if _, err := r.Wait(); err != nil {
		t.Fatal(err)
	}
	r2, err := env.Engine.Resume(context.Background(), r.ID(), &pipeline.Decision{Approve: false})
	if err != nil {
		t.Fatalf("resuming once the run ended: %v", err)
	}
	pipelinetest.Drive(t, r2, nil)
	if sess, err := r2.Wait(); err != nil || sess.Status != store.StatusCompleted {
		t.Fatalf("status %q err %v", sess.Status, err)
	}
}

func (n nothingFound) Name() string { return n.name }

func (nothingFound) Search(context.Context, string, int) ([]search.Record, error) {
	return nil, nil
}

// A run that fails while researching is listed as stopped there, not at
// the last stage it finished ("failed (at plan)" read as failing to plan),
// and its message names what to change in the words of every front end.
func TestAFailedRunRecordsTheStageItStoppedIn(t *testing.T) {
	t.Parallel()
	env := pipelinetest.NewEnv(t, nil, "")
	env.Engine.Sources = map[string]search.Source{"arxiv": nothingFound{"arxiv"}, "openalex": nothingFound{"openalex"}}
	r, err := env.Engine.Start(context.Background(), env.Options(question))
	if err != nil {
		t.Fatal(err)
	}
	pipelinetest.Drive(t, r, nil)
	sess, err := r.Wait()
	if err == nil || sess.Status != store.StatusFailed {
		t.Fatalf("status %q, err %v: want a failed run", sess.Status, err)
	}
	if sess.Stage != string(pipeline.StageResearch) {
		t.Errorf("the session's stage is %q, want %q", sess.Stage, pipeline.StageResearch)
	}
}

// TestAnalystsSayWhatTheyFound: an analyst answers by reference ("E1.3");
// its AgentFinished event carries the sentences those references name, so
// a person watching sees findings, not labels (issue 47 #11).
func TestAnalystsSayWhatTheyFound(t *testing.T) {
	t.Parallel()
	env := pipelinetest.NewEnv(t, &pipelinetest.Script{RevisionRounds: 0}, "")
	evs, _ := pipelinetest.RunToEnd(t, env, env.Options(question))
	shown := 0
	for _, ev := range evs {
		if ev.Type != pipeline.AgentFinished || !strings.HasPrefix(ev.Agent, "analyst") || ev.Text == "" {
			continue
		}
		shown++
		if regexp.MustCompile(`\bE\d+\.\d+\b`).MatchString(ev.Text) || !strings.HasPrefix(ev.Text, "• ") {
			t.Errorf("%s finished showing %q", ev.Agent, ev.Text)
		}
	}
	if shown == 0 {
		t.Error("no analyst said what it found")
	}
}
