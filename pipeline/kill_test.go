package pipeline_test

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/llm/ollamafake"
	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/testkit/child"
)

// TestKilledRunChild is the child half of TestKillMidFlowThenResume: it
// runs a session against the parent's fakes until the parent kills it.
func TestKilledRunChild(t *testing.T) {
	t.Parallel()
	st, backend := childWorld(t, "RESEARCHTUI_KILL_CHILD", "TestKillMidFlowThenResume")
	src := os.Getenv("RESEARCHTUI_KILL_CHILD_SOURCES")
	e := killEngine(st, backend, src)
	var r *pipeline.Run
	var err error
	if q := os.Getenv("RESEARCHTUI_KILL_CHILD_ASK"); q != "" {
		sessions, _ := st.ListSessions()
		r, err = e.Ask(context.Background(), sessions[0].ID, q, nil)
	} else {
		opt := runopts.Options{Question: question, Model: pipelinetest.Model, EmbedModel: pipelinetest.EmbedModel, Sources: []string{"arxiv", "openalex"}, MaxRevisions: 2}
		if os.Getenv("RESEARCHTUI_KILL_CHILD_PLAN") != "" {
			opt.ReviewPlan = runopts.ReviewAsk
		}
		r, err = e.Start(context.Background(), opt)
	}
	if err != nil {
		t.Fatal(err)
	}
	// Tell the parent each analysis saved (AnalysisDone follows its
	// checkpoint), so it can kill after one for certain however slow the
	// machine: counting requests alone killed too early on a loaded CI.
	mark, _ := os.OpenFile(os.Getenv("RESEARCHTUI_KILL_CHILD_MARK"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	for ev := range r.Events() {
		if (ev.Type == pipeline.AnalysisDone || ev.Type == pipeline.ReviewRequested && ev.Review.Plan != nil) && mark != nil {
			mark.WriteString("saved\n")
		}
	}
	time.Sleep(time.Minute) // the parent kills us long before
}

// killEngine is an engine on the parent's fakes.
func killEngine(st *store.Store, backend llm.Backend, src string) *pipeline.Engine {
	client := search.NewClient(search.ClientOptions{BaseBackoff: time.Millisecond, Retries: 1})
	client.SetHostLimit(strings.TrimPrefix(src, "http://"), 0)
	return &pipeline.Engine{Store: st, LLM: backend, Sources: map[string]search.Source{
		"arxiv":    search.NewArxiv(client, src+"/arxiv/api/query"),
		"openalex": search.NewOpenAlex(client, src+"/openalex", ""),
	}}
}

// TestKillAtThePlanReviewThenResume kills (SIGKILL) a process whose run
// waits at its plan review; the session waits as awaiting review, and a
// resume in a new process asks about the plan again without planning again,
// then runs the plan as the person left it.
func TestKillAtThePlanReviewThenResume(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a child process")
	}
	script := &pipelinetest.Script{RevisionRounds: 0}
	oll := ollamafake.New(ollamafake.Options{Responder: script.Responder(), TokenDelay: time.Millisecond, Parallel: 1})
	defer oll.Close()
	env := pipelinetest.NewEnv(t, script, "")
	env.Store.Close()
	dir := t.TempDir()
	db := dir + "/researchtui.db"
	cmd := child.Command(context.Background(), "TestKilledRunChild", []string{"RESEARCHTUI_KILL_CHILD_DB=" + db, "RESEARCHTUI_KILL_CHILD_OLLAMA=" + oll.URL,
		"RESEARCHTUI_KILL_CHILD_SOURCES=" + env.Sources.URL, "RESEARCHTUI_KILL_CHILD_PLAN=1", "RESEARCHTUI_KILL_CHILD_MARK=" + dir + "/saved"}, "-test.v")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killOnceMarked(t, cmd, dir+"/saved", "plan never waited for a review")
	if n := len(env.Sources.Requests()); n != 0 {
		t.Fatalf("%d searches before the plan was decided", n)
	}
	st := reopenKilled(t, db)
	sessions, _ := st.ListSessions()
	if len(sessions) != 1 || sessions[0].Status != store.StatusAwaitingReview {
		t.Fatalf("after the kill: %+v", sessions)
	}
	backend, _ := llm.NewOllama(oll.URL, llm.OllamaOptions{})
	r, err := killEngine(st, backend, env.Sources.URL).Resume(context.Background(), sessions[0].ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	asked := 0
	pipelinetest.Drive(t, r, func(rv *pipeline.ReviewRequest) *pipeline.Decision {
		if rv.Plan == nil {
			return &pipeline.Decision{Approve: true}
		}
		asked++
		return &pipeline.Decision{Approve: true, Plan: &pipeline.PlanEdit{
			SubQuestions: []pipeline.PlanItem{{ID: rv.Plan.SubQuestions[0].ID, Question: rv.Plan.SubQuestions[0].Question}},
			Sources:      []string{"arxiv"},
		}}
	})
	sess, err := r.Wait()
	if err != nil || sess.Status != store.StatusCompleted || asked != 1 {
		t.Fatalf("resume: %q %v, plan asked %d times", sess.Status, err, asked)
	}
	if n := script.Calls(pipelinetest.Planner); n != 1 {
		t.Errorf("%d planner calls over a kill at the plan review, want 1", n)
	}
	for _, q := range env.Sources.Requests() {
		if strings.Contains(q, "/openalex") || strings.Contains(q, "chemistry") {
			t.Errorf("searched %s, which the person left out of the plan", q)
		}
	}
}

var analysedTitle = regexp.MustCompile(`(?m)^Source(?: \d+)?: (.+) \(`)

// TestKillMidFlowThenResume kills (SIGKILL) a process in the middle of the
// streaming flow, while some sources are analysed and others still being
// read or analysed, then resumes the session in a new engine on the same
// store: no finished unit's model call is made again (planner, an analysed
// source's analyst), and the run completes.
func TestKillMidFlowThenResume(t *testing.T) {
	t.Parallel()
	killMidFlow(t, &pipelinetest.Script{RevisionRounds: 1}, func(analysts, reflectors int) bool { return analysts >= 3 }, "")
}

// TestKillDuringAFollowUpThenResume kills the process while a follow-up
// reads and analyses new sources; resume finishes it repeating nothing.
func TestKillDuringAFollowUpThenResume(t *testing.T) {
	t.Parallel()
	script := &pipelinetest.Script{
		FollowUpTopics: []pipelinetest.Topic{{Question: "What is known about Luttinger liquids of helium in nanopores?", Strict: "luttinger liquid helium nanopores", Moderate: "luttinger liquid", Broad: "helium"}},
		GapQueries:     []string{"del_maestro luttinger liquids"},
	}
	// Kill at the follow-up's first analysis.
	killMidFlow(t, script, func(analysts, reflectors int) bool { return analysts >= 1 }, "What is known about Luttinger liquids of helium in nanopores?")
	if n := script.Calls(pipelinetest.Planner); n != 2 {
		t.Errorf("%d planner calls for a run and its follow-up, over a kill; want 2", n)
	}
}

// TestKillInRoundTwoThenResume does the same during a follow-up round:
// reflection has run and round 2's analysts are at work (two of them).
func TestKillInRoundTwoThenResume(t *testing.T) {
	t.Parallel()
	script := withLuttinger(&pipelinetest.Script{RevisionRounds: 1, MissingSlot: "open problems", GapQueries: []string{"del_maestro luttinger liquids"}})
	before := killMidFlow(t, script, func(analysts, reflectors int) bool { return reflectors >= 1 && analysts >= 2 }, "")
	if script.Calls(pipelinetest.Reflector) != 1 {
		t.Errorf("reflection ran %d times over the kill and the resume, want once", script.Calls(pipelinetest.Reflector))
	}
	_ = before
}

// killMidFlow runs a session in a child process and kills it when killWhen
// says so; with ask set, the session is first run to its end here and the
// child asks it that follow-up.
func killMidFlow(t *testing.T, script *pipelinetest.Script, killWhen func(analysts, reflectors int) bool, ask string) []ollamafake.Logged {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	oll := ollamafake.New(ollamafake.Options{Responder: script.Responder(), TokenDelay: 3 * time.Millisecond, Parallel: 1})
	defer oll.Close()
	env := pipelinetest.NewEnv(t, script, "")
	dir := t.TempDir()
	db := dir + "/researchtui.db"
	env.Store.Close() // the child owns its own store; this env only lends its source fake
	if ask != "" {
		st, err := store.Open(db, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		backend, _ := llm.NewOllama(oll.URL, llm.OllamaOptions{})
		first := &pipelinetest.Env{Engine: killEngine(st, backend, env.Sources.URL)}
		pipelinetest.RunToEnd(t, first, runopts.Options{Question: question, Model: pipelinetest.Model, EmbedModel: pipelinetest.EmbedModel, Sources: []string{"arxiv", "openalex"}, MaxRevisions: 2})
		st.Close()
	}

	// Only the child's requests count (with ask set, the run before the
	// follow-up made others).
	base := len(oll.Requests())
	cmd := child.Command(context.Background(), "TestKilledRunChild", []string{"RESEARCHTUI_KILL_CHILD_DB=" + db, "RESEARCHTUI_KILL_CHILD_OLLAMA=" + oll.URL, "RESEARCHTUI_KILL_CHILD_SOURCES=" + env.Sources.URL, "RESEARCHTUI_KILL_CHILD_ASK=" + ask, "RESEARCHTUI_KILL_CHILD_MARK=" + dir + "/saved"}, "-test.v")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// analystTitles are the sources analysed (alone or several to a call), those of the latest
	// round once reflection has run.
	analystTitles := func(reqs []ollamafake.Logged) []string {
		var out []string
		for _, q := range reqs {
			if q.Path == "/api/chat" && pipelinetest.KindOf(q.Call) == pipelinetest.Reflector {
				out = out[:0]
			}
			if q.Path == "/api/chat" && pipelinetest.KindOf(q.Call) == pipelinetest.Analyst {
				for _, m := range analysedTitle.FindAllStringSubmatch(q.Call.Messages[len(q.Call.Messages)-1].Content, -1) {
					out = append(out, m[1])
				}
			}
		}
		return out
	}
	reflectors := func(reqs []ollamafake.Logged) int {
		n := 0
		for _, q := range reqs {
			if q.Path == "/api/chat" && pipelinetest.KindOf(q.Call) == pipelinetest.Reflector {
				n++
			}
		}
		return n
	}
	savedInChild := func() bool {
		b, _ := os.ReadFile(dir + "/saved")
		return len(b) > 0 || ask != "" // a follow-up's saved analyses are the first run's
	}
	deadline := time.Now().Add(30 * time.Second)
	for reqs := oll.Requests()[base:]; !killWhen(len(analystTitles(reqs)), reflectors(reqs)) || !savedInChild(); reqs = oll.Requests()[base:] {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the child never reached the point to kill it at")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Kill() // SIGKILL: no cancellation, no deferred cleanup
	cmd.Wait()
	before := oll.Requests()

	st := reopenKilled(t, db)
	sessions, err := st.ListSessions()
	if err != nil || len(sessions) != 1 {
		t.Fatalf("sessions after the kill: %v %v", sessions, err)
	}
	id := sessions[0].ID
	// The analyses that finished before the kill, by their checkpoints.
	finished := map[string]bool{}
	for _, title := range analystTitles(before) {
		finished[title] = false
	}
	var keys []string
	names, _ := st.CheckpointNames(id)
	for _, n := range names {
		if strings.HasPrefix(n, "analyse/") {
			keys = append(keys, n)
		}
	}
	backend, err := llm.NewOllama(oll.URL, llm.OllamaOptions{})
	if err != nil {
		t.Fatal(err)
	}
	env.Engine.Store, env.Engine.LLM = st, backend
	for _, k := range keys {
		if raw, ok, _ := st.Source(strings.TrimPrefix(k, "analyse/")); ok {
			for title := range finished {
				if strings.Contains(string(raw), title) {
					finished[title] = true
				}
			}
		}
	}
	if len(keys) == 0 {
		t.Fatal("no analysis had finished before the kill; the test kills too early")
	}
	r, err := env.Engine.Resume(context.Background(), id, nil)
	if err != nil {
		t.Fatal(err)
	}
	pipelinetest.Drive(t, r, nil)
	sess, err := r.Wait()
	if err != nil || sess.Status != store.StatusCompleted {
		t.Fatalf("resume: status %q err %v", sess.Status, err)
	}
	after := oll.Requests()[len(before):]
	for _, q := range after {
		if q.Path == "/api/chat" && pipelinetest.KindOf(q.Call) == pipelinetest.Planner {
			t.Error("the resume planned again")
		}
	}
	for _, title := range analystTitles(after) {
		if finished[title] {
			t.Errorf("the resume analysed %q again, though its analysis was saved before the kill", title)
		}
	}
	rep, _ := pipeline.LoadReport(st, id)
	t.Logf("killed after %d analyst calls (%d saved); the resume made %d; rounds %+v", len(analystTitles(before)), len(keys), len(analystTitles(after)), rep.Rounds)
	return before
}

// reopenKilled opens the store at db after its process was killed and
// marks what it left running as interrupted, as the next start does.
func reopenKilled(t *testing.T, db string) *store.Store {
	t.Helper()
	st, err := store.Open(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.MarkInterrupted(); err != nil {
		t.Fatal(err)
	}
	return st
}

// shelfEngine is an engine on the store whose source is the shelf: the
// first one, or grown (each process builds the same world).
func shelfEngine(st *store.Store, backend llm.Backend, grown bool) *pipeline.Engine {
	shelf := firstShelf()
	if grown {
		grow(shelf)
	}
	return &pipeline.Engine{Store: st, LLM: backend, Sources: map[string]search.Source{"openalex": shelf}}
}

// TestKilledUpdateChild is the child half of TestKillDuringAnUpdate: it
// updates the session until the parent kills it.
func TestKilledUpdateChild(t *testing.T) {
	t.Parallel()
	st, backend := childWorld(t, "RESEARCHTUI_KILL_UPDATE", "TestKillDuringAnUpdateThenUpdateAgain")
	sessions, _ := st.ListSessions()
	r, err := shelfEngine(st, backend, true).Update(context.Background(), sessions[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	mark, _ := os.OpenFile(os.Getenv("RESEARCHTUI_KILL_UPDATE_MARK"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	for ev := range r.Events() {
		if ev.Type == pipeline.AnalysisDone && mark != nil {
			mark.WriteString("saved\n")
		}
	}
	time.Sleep(time.Minute) // the parent kills us long before
}

// TestKillDuringAnUpdateThenUpdateAgain kills (SIGKILL) a process while
// its update analyses the new works; `update` again in a new process
// continues it: it completes with one version and one check, makes no
// finished model call again, and never plans.
func TestKillDuringAnUpdateThenUpdateAgain(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a child process")
	}
	script := shelfScript()
	oll := ollamafake.New(ollamafake.Options{Responder: script.Responder(), TokenDelay: 3 * time.Millisecond, Parallel: 1})
	defer oll.Close()
	dir := t.TempDir()
	db := dir + "/researchtui.db"
	st, err := store.Open(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	backend, _ := llm.NewOllama(oll.URL, llm.OllamaOptions{})
	first := &pipelinetest.Env{Engine: shelfEngine(st, backend, false)}
	opt := runopts.Options{Question: question, Model: pipelinetest.Model, EmbedModel: pipelinetest.EmbedModel, Sources: []string{"openalex"}, MaxRevisions: 2}
	_, sess := pipelinetest.RunToEnd(t, first, opt)
	st.Close()
	base := len(oll.ChatCalls())
	served0 := oll.Served()

	cmd := child.Command(context.Background(), "TestKilledUpdateChild", []string{"RESEARCHTUI_KILL_UPDATE_DB=" + db, "RESEARCHTUI_KILL_UPDATE_OLLAMA=" + oll.URL, "RESEARCHTUI_KILL_UPDATE_MARK=" + dir + "/saved"}, "-test.v")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killOnceMarked(t, cmd, dir+"/saved", "update never analysed a new work")
	killedAt := len(oll.ChatCalls())
	servedKilled := oll.Served()

	st = reopenKilled(t, db)
	if vs, _ := pipeline.LoadVersions(st, sess.ID); len(vs) != 1 {
		t.Fatalf("the killed update wrote version %d", len(vs))
	}
	// The report stands: the session is completed again, not interrupted.
	if s, _ := st.Session(sess.ID); s.Status != store.StatusCompleted || s.Updating {
		t.Errorf("after the kill the session is %q (updating %v); want completed", s.Status, s.Updating)
	}
	// Followed, it is still due: cron's update --due continues it.
	if _, err := pipeline.Follow(st, sess.ID, 7*24*time.Hour); err != nil {
		t.Fatal(err)
	}
	if due, _ := pipeline.Due(st, time.Now().Add(8*24*time.Hour)); len(due) != 1 {
		t.Errorf("the interrupted update's session is not due: %d due", len(due))
	}
	backend, _ = llm.NewOllama(oll.URL, llm.OllamaOptions{})
	env := &pipelinetest.Env{Engine: shelfEngine(st, backend, true), Store: st}
	update(t, env, sess.ID)

	vs, _ := pipeline.LoadVersions(st, sess.ID)
	checks, _ := pipeline.LoadUpdateChecks(st, sess.ID)
	if len(vs) != 2 || vs[1].Kind != pipeline.VersionUpdate || len(checks) != 1 || checks[0].Version != 2 || !strings.Contains(vs[1].Report, "Property-based") {
		t.Fatalf("after the kill and update: %d versions, checks %+v", len(vs), checks)
	}
	// The resumed check counts what the killed one's searches met (a trial
	// saw "0 works seen, 0 new" for a version with 2 new sources).
	if c := checks[0]; c.Seen == 0 || c.New < c.Kept || c.New == 0 {
		t.Errorf("the resumed check's counts: %+v", c)
	}
	// Its tokens are both attempts', not only the resumed one's.
	killedTok, resumedTok := servedKilled.CompletionTokens-served0.CompletionTokens, oll.Served().CompletionTokens-servedKilled.CompletionTokens
	if c := checks[0]; killedTok == 0 || c.GeneratedTokens <= resumedTok {
		t.Errorf("the check counts %d generated tokens; the killed attempt was served %d, the resumed one %d", c.GeneratedTokens, killedTok, resumedTok)
	}
	calls := oll.ChatCalls()
	before := prompts(calls[base:killedAt])
	repeated := 0
	for _, c := range calls[killedAt:] {
		for k := range prompts([]ollamafake.ChatCall{c}) {
			if before[k] {
				repeated++
			}
		}
		if pipelinetest.KindOf(c) == pipelinetest.Planner {
			t.Error("an update planned")
		}
	}
	t.Logf("calls: %d before the kill, %d after, %d repeated", killedAt-base, len(calls)-killedAt, repeated)
	// The one model call under way when the process died may run again;
	// every finished one is checkpointed.
	if repeated > 1 {
		t.Errorf("%d model calls repeated after the kill", repeated)
	}
}

// childWorld is a child process's store and model, named by the parent's
// variables prefix_DB and prefix_OLLAMA; the test skips unless parent
// started it.
func childWorld(t *testing.T, prefix, parent string) (*store.Store, llm.Backend) {
	db := child.Var(t, prefix+"_DB", parent)
	st, err := store.Open(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	backend, err := llm.NewOllama(os.Getenv(prefix+"_OLLAMA"), llm.OllamaOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return st, backend
}

// killOnceMarked kills the child with SIGKILL (no cancellation, no
// deferred cleanup) once it has written to mark, the point the test kills
// it at; a child that has not got there in 30 s fails the test with
// "the child's " + notReached.
func killOnceMarked(t *testing.T, cmd *exec.Cmd, mark, notReached string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if b, _ := os.ReadFile(mark); len(b) > 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the child's " + notReached)
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
}
