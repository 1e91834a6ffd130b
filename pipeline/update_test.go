package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/researchtui/researchtui/llm/ollamafake"
	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/history"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/store"
)

func work(title string, year int, abstract string, authors ...string) search.Record {
	if len(authors) == 0 {
		authors = []string{"Ada Tester"}
	}
	return search.Record{Title: title, Year: year, Abstract: abstract, Authors: authors}
}

// chemCrow is a cited preprint whose published version appears later.
var chemCrow = search.Record{Title: "ChemCrow: Augmenting large language models with chemistry tools", Year: 2023,
	Authors: []string{"Andres M. Bran", "Sam Cox"}, ArxivID: "2304.05376", Venue: "arXiv",
	Abstract: "Large language models augmented with chemistry tools plan syntheses. ChemCrow gives a language model eighteen chemistry tools and completes synthesis tasks."}

// shelfScript's screener knows sourdough is off topic.
func shelfScript() *pipelinetest.Script {
	return &pipelinetest.Script{Screen: &pipelinetest.ScreenScript{OffTopic: func(title string) bool { return strings.Contains(title, "Sourdough") }}}
}

// firstShelf is the on-topic works a session's first run reads.
func firstShelf() *pipelinetest.Shelf {
	shelf := &pipelinetest.Shelf{}
	shelf.Add(
		work("Mutation testing techniques for software test suites", 2021, "Mutation testing is a software testing technique that injects faults. Mutation scores predict how many real faults a test suite detects."),
		work("Search-based software testing of web applications", 2020, "Search-based software testing generates tests for web applications. The generated tests reach higher branch coverage than manual tests."),
		work("Fuzzing as a software testing technique at scale", 2022, "Fuzzing is a software testing technique that feeds random inputs. Continuous fuzzing found thousands of bugs in open-source software."),
		chemCrow,
		work("Tool use by language models for chemistry synthesis planning", 2023, "Language models that call chemistry tools plan syntheses more reliably. Tool calls reduce hallucinated reactions in synthesis planning."),
	)
	return shelf
}

// grow adds what appears after the first run: two works on topic, one
// off topic, one citing a cited work (found only by following citations),
// and the published version of the cited preprint.
func grow(shelf *pipelinetest.Shelf) {
	shelf.Add(
		work("Property-based software testing techniques in practice", 2026, "Property-based testing is a software testing technique that checks invariants on generated inputs. Teams adopting it found subtle bugs that unit tests missed."),
		work("Language models with laboratory tools for chemistry automation", 2026, "Language models given laboratory tools automate chemistry experiments. The models planned and ran syntheses with few human corrections."),
		work("Sourdough fermentation: testing bread recipes at home", 2026, "Testing bread recipes at home shows that longer fermentation improves sourdough flavour."),
		search.Record{Title: "Augmenting large language models with chemistry tools", Year: 2024, Authors: []string{"Andres M. Bran", "Sam Cox"},
			DOI: "10.1038/s42256-024-00832-8", Venue: "Nature Machine Intelligence", Abstract: chemCrow.Abstract},
	)
	shelf.AddCiting("Mutation testing techniques for software test suites",
		work("Equivalent mutants in software testing revisited", 2026, "Equivalent mutants inflate mutation scores in software testing studies. Removing them changes which testing technique looks best."))
}

// shelfWorld is a session's world: the first shelf, searched as OpenAlex.
func shelfWorld(t *testing.T) (*pipelinetest.Env, *pipelinetest.Shelf, runopts.Options) {
	t.Helper()
	env := pipelinetest.NewEnv(t, shelfScript(), "")
	shelf := firstShelf()
	env.Engine.Sources = map[string]search.Source{"openalex": shelf}
	opt := env.Options(question)
	opt.Sources = []string{"openalex"}
	return env, shelf, opt
}

func update(t *testing.T, env *pipelinetest.Env, id string) store.Session {
	t.Helper()
	r, err := env.Engine.Update(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	pipelinetest.Drive(t, r, nil)
	sess, err := r.Wait()
	if err != nil || sess.Status != store.StatusCompleted {
		t.Fatalf("update: status %q err %v", sess.Status, err)
	}
	return sess
}

func prompts(calls []ollamafake.ChatCall) map[string]bool {
	out := map[string]bool{}
	for _, c := range calls {
		var b strings.Builder
		for _, m := range c.Messages {
			b.WriteString(m.Role + ":" + m.Content + "\n")
		}
		out[b.String()] = true
	}
	return out
}

// TestUpdateReadsOnlyNewWork: new works appear between the run and its
// update — two on topic, one off topic, one citing a cited work (found
// only by following citations), and the published version of a cited
// preprint. The update reads only the new works, cites the on-topic ones
// in a "What's new" section at the top, keeps every earlier number, merges
// the preprint's published metadata under its old number, and repeats no
// model call. A second update finds nothing and writes nothing.
func TestUpdateReadsOnlyNewWork(t *testing.T) {
	t.Parallel()
	env, shelf, opt := shelfWorld(t)
	_, sess := pipelinetest.RunToEnd(t, env, opt)
	v1, _ := pipeline.LoadReport(env.Store, sess.ID)
	if !strings.Contains(v1.Markdown, "ChemCrow") || !strings.Contains(v1.Markdown, "Mutation testing techniques") {
		t.Fatalf("the first run did not cite the preprint and the mutation paper:\n%s", v1.Markdown)
	}
	before := prompts(env.Ollama.ChatCalls())
	ncalls := len(env.Ollama.ChatCalls())

	grow(shelf)
	sess = update(t, env, sess.ID)

	vs, _ := pipeline.LoadVersions(env.Store, sess.ID)
	if len(vs) != 2 || vs[1].Kind != pipeline.VersionUpdate {
		t.Fatalf("%d versions, last %q; want an update version", len(vs), vs[len(vs)-1].Kind)
	}
	md := vs[1].Report
	title, rest, _ := strings.Cut(md, "\n\n")
	if !strings.HasPrefix(title, "# ") || !strings.HasPrefix(rest, "## What's new since ") {
		t.Fatalf("the update's section is not at the top:\n%s", md)
	}
	rep, _ := pipeline.LoadReport(env.Store, sess.ID)
	old, now := references(v1.Markdown), references(md)
	for n, entry := range old {
		switch {
		case strings.Contains(entry, "ChemCrow"):
			if !strings.Contains(now[n], "Nature Machine Intelligence") {
				t.Errorf("the cited preprint [%s] did not gain its published version: %q", n, now[n])
			}
		case now[n] != entry:
			t.Errorf("reference [%s] moved: %q became %q", n, entry, now[n])
		}
	}
	whatsNew := strings.SplitN(rest, "\n## ", 2)[0]
	for _, want := range []string{"Property-based software testing", "laboratory tools for chemistry", "Equivalent mutants"} {
		n := ""
		for k, entry := range now {
			if strings.Contains(entry, want) {
				n = k
			}
		}
		if n == "" || len(n) == 0 || !strings.Contains(whatsNew, "["+n+"]") {
			t.Errorf("the new work %q is not cited in the new section (reference %q):\n%s", want, n, whatsNew)
		}
	}
	if strings.Contains(md, "Sourdough") || strings.Count(md, "Augmenting large language models with chemistry tools") > 1 {
		t.Errorf("an off-topic work, or the preprint's published version as a new source, reached the report:\n%s", md)
	}
	if rep.Metrics.Removed != 0 || rep.Metrics.Verified == nil {
		t.Errorf("the update's citations: removed %d, verification %+v", rep.Metrics.Removed, rep.Metrics.Verified)
	}
	for _, c := range env.Ollama.ChatCalls()[ncalls:] {
		p := prompts([]ollamafake.ChatCall{c})
		for k := range p {
			if before[k] {
				t.Errorf("the update repeated a %s call", pipelinetest.KindOf(c))
			}
			if pipelinetest.KindOf(c) == pipelinetest.Analyst && (strings.Contains(k, "Fuzzing as a software") || strings.Contains(k, "Search-based software")) {
				t.Errorf("the update analysed a work the session had read")
			}
		}
	}
	// The exports say so, and the new works' references export alone.
	if len(rep.Updates) != 1 || rep.Updates[0].Version != 2 || rep.Updates[0].New != 3 {
		t.Errorf("the report's updates: %+v", rep.Updates)
	}
	if page, _ := history.ExportReport(rep, "html"); !strings.Contains(string(page), ": 3 new works (version 2).</p>") {
		t.Errorf("the HTML export does not say it was updated:\n%s", page)
	}
	fresh, err := history.ReferencesSince(env.Store, rep, 1)
	ris, _ := history.ExportReport(fresh, "ris")
	if err != nil || len(fresh.Sources) != 3 || !strings.Contains(string(ris), "Property-based") || strings.Contains(string(ris), "Fuzzing") {
		t.Errorf("the references since version 1: %v, %d sources\n%s", err, len(fresh.Sources), ris)
	}
	// The update's candidates are the session's too, each with its verdict.
	cands, _ := pipeline.LoadCandidates(env.Store, sess.ID)
	sourdough := false
	for _, c := range cands {
		if c.Update == 1 && strings.Contains(c.Title, "Sourdough") && !c.Read && c.Reason != "" {
			sourdough = true
		}
	}
	if !sourdough {
		t.Errorf("the update's candidates do not show the off-topic work and why it was not read: %+v", cands)
	}
	for _, c := range cands {
		if c.Update > 0 && strings.HasPrefix(c.Origin, "reference of") {
			t.Errorf("the update followed a cited source's references (older works): %+v", c)
		}
	}
	checks, err := pipeline.LoadUpdateChecks(env.Store, sess.ID)
	if err != nil || len(checks) != 1 {
		t.Fatalf("checks %+v, %v", checks, err)
	}
	c := checks[0]
	if c.Version != 2 || c.Kept < 3 || c.New < 4 || len(c.Merged) != 1 || c.Seen <= c.New || c.Chased == 0 {
		t.Errorf("the check records %+v", c)
	}
	// The version's counts add the check's to the run's.
	if f := rep.Funnel; f.Read != v1.Funnel.Read+c.Read || f.Found != v1.Funnel.Found+c.New || f.Cited != len(rep.Sources) || f.Cited > f.Analysed {
		t.Errorf("the updated funnel %+v (the run's %+v, the check %+v)", f, v1.Funnel, c)
	}
	if v1.Flow != nil && (rep.Flow == nil || rep.Flow.Included != len(rep.Sources) || rep.Flow.Identified != v1.Flow.Identified+c.Seen) {
		t.Errorf("the updated PRISMA flow %+v (the run's %+v)", rep.Flow, v1.Flow)
	}
	if sess.Living == nil || sess.Living.Unread != 2 || sess.Living.LastNew != c.Kept {
		t.Errorf("the session's living state %+v", sess.Living)
	}

	// Nothing new: no version, the check recorded, no model call.
	ncalls = len(env.Ollama.ChatCalls())
	sess = update(t, env, sess.ID)
	if vs, _ := pipeline.LoadVersions(env.Store, sess.ID); len(vs) != 2 {
		t.Errorf("an update with nothing new wrote version %d", len(vs))
	}
	if n := len(env.Ollama.ChatCalls()) - ncalls; n != 0 {
		t.Errorf("an update with nothing new made %d model calls", n)
	}
	checks, _ = pipeline.LoadUpdateChecks(env.Store, sess.ID)
	if len(checks) != 2 || checks[1].Version != 0 || checks[1].New != 0 || !strings.Contains(checks[1].Reason, "met before") {
		t.Errorf("the second check: %+v", checks[len(checks)-1])
	}
	// The stored events say which update began and how it ended in
	// fields, not only in words (issue 49).
	recs, err := env.Store.Events(sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	var started []int
	var last pipeline.Event
	for _, r := range recs {
		var ev pipeline.Event
		if json.Unmarshal(r.Data, &ev) != nil {
			continue
		}
		if ev.Type == pipeline.RunStarted && ev.Update > 0 {
			started = append(started, ev.Update)
		}
		if ev.Type == pipeline.RunFinished {
			last = ev
		}
	}
	if len(started) != 2 || started[0] != 1 || started[1] != 2 || last.Outcome != pipeline.OutcomeNothingNew {
		t.Errorf("updates started %v; the last ended with outcome %q", started, last.Outcome)
	}
}

// TestUpdateWithTheSourceDown: the source fails during an update; the
// check says so instead of "nothing new", and no version is written.
func TestUpdateWithTheSourceDown(t *testing.T) {
	t.Parallel()
	env, shelf, opt := shelfWorld(t)
	_, sess := pipelinetest.RunToEnd(t, env, opt)
	grow(shelf)
	shelf.Fail(errors.New("HTTP 503 Service Unavailable"))
	sess = update(t, env, sess.ID)
	checks, _ := pipeline.LoadUpdateChecks(env.Store, sess.ID)
	if len(checks) != 1 || checks[0].Version != 0 || !strings.HasPrefix(checks[0].Reason, "the searches failed") || !strings.Contains(checks[0].Reason, "503") {
		t.Fatalf("the check with the source down: %+v", checks)
	}
	// Back up, the next update finds the new works.
	shelf.Fail(nil)
	sess = update(t, env, sess.ID)
	if checks, _ = pipeline.LoadUpdateChecks(env.Store, sess.ID); len(checks) != 2 || checks[1].Version != 2 {
		t.Errorf("the check after the source came back: %+v", checks[len(checks)-1])
	}
}

// TestCancelledUpdateLeavesTheReportCompleted: an update cancelled while
// it searches leaves the session completed with its report as it was;
// the next update continues it and writes the version.
func TestCancelledUpdateLeavesTheReportCompleted(t *testing.T) {
	t.Parallel()
	env, shelf, opt := shelfWorld(t)
	_, sess := pipelinetest.RunToEnd(t, env, opt)
	grow(shelf)
	shelf.Latency = 50 * time.Millisecond
	r, err := env.Engine.Update(context.Background(), sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	for ev := range r.Events() {
		if ev.Type == pipeline.StageStarted && ev.Stage == pipeline.StageResearch {
			r.Cancel()
		}
	}
	got, _ := r.Wait()
	if got.Status != store.StatusCompleted {
		t.Fatalf("a cancelled update left the session %s", got.Status)
	}
	if vs, _ := pipeline.LoadVersions(env.Store, sess.ID); len(vs) != 1 {
		t.Fatalf("a cancelled update wrote version %d", len(vs))
	}
	shelf.Latency = 0
	update(t, env, sess.ID)
	if vs, _ := pipeline.LoadVersions(env.Store, sess.ID); len(vs) != 2 {
		t.Errorf("the next update did not write the version: %d versions", len(vs))
	}
}

// TestUpdateRanksANewWorkForEverySubQuestion: a new work that one
// sub-question's search finds first (and ranks low) is still ranked, and
// read, for the sub-question it answers. Sub-questions are researched one
// at a time, the first first, so the first always meets it first.
func TestUpdateRanksANewWorkForEverySubQuestion(t *testing.T) {
	t.Parallel()
	env, shelf, opt := shelfWorld(t)
	_, sess := pipelinetest.RunToEnd(t, env, opt)
	env.Engine.Workers = 1
	shelf.Add(work("Language models with laboratory tools for chemistry automation", 2026,
		"Language models given laboratory tools automate chemistry experiments. Testing the models on real syntheses needed few human corrections."))
	update(t, env, sess.ID)
	rep, _ := pipeline.LoadReport(env.Store, sess.ID)
	if !strings.Contains(rep.Markdown, "laboratory tools for chemistry automation") {
		t.Errorf("the new work on chemistry tools, found first by the testing sub-question, was not read for its own:\n%s", rep.Markdown)
	}
}
