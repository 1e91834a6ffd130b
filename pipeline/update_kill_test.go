package pipeline_test

import (
	"context"
	"os"
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
	db := child.Var(t, "RESEARCHTUI_KILL_UPDATE_DB", "TestKillDuringAnUpdateThenUpdateAgain")
	st, err := store.Open(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	backend, err := llm.NewOllama(os.Getenv("RESEARCHTUI_KILL_UPDATE_OLLAMA"), llm.OllamaOptions{})
	if err != nil {
		t.Fatal(err)
	}
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
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if b, _ := os.ReadFile(dir + "/saved"); len(b) > 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the child's update never analysed a new work")
		}
	}
	cmd.Process.Kill() // SIGKILL: no cancellation, no deferred cleanup
	cmd.Wait()
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
