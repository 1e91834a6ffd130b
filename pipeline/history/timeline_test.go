package history_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/history"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
)

// TestTimelineFromTheEventLog: a finished run's stored events give a
// waterfall with every stage, the agents' tokens adding up to the
// session's, the model's busy share, and a critical path that ends with
// the last agent; a cancelled run's unfinished spans are marked open.
func TestTimelineFromTheEventLog(t *testing.T) {
	env := pipelinetest.NewEnv(t, &pipelinetest.Script{RevisionRounds: 1}, "")
	_, sess := runToEnd(t, env, env.Options(question))
	evs, err := pipeline.LoadEvents(env.Store, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	tl := history.BuildTimeline(sess.ID, evs)
	stages := map[string]bool{}
	tokens := map[string][3]int{} // by span kind: prompt, completion, embedding
	searches := 0
	for _, s := range tl.Spans {
		switch s.Kind {
		case "stage":
			stages[s.Name] = true
		case "search":
			searches++
		case "call":
			if s.Parent < 0 {
				t.Errorf("model call %+v belongs to no agent or stage", s)
			}
		}
		n := tokens[s.Kind]
		tokens[s.Kind] = [3]int{n[0] + s.Prompt, n[1] + s.Completion, n[2] + s.Embedding}
		if s.Open || s.End < s.Start {
			t.Errorf("span %+v is open or ends before it starts", s)
		}
	}
	want := [3]int{sess.Usage.PromptTokens, sess.Usage.CompletionTokens, sess.Usage.EmbeddingTokens}
	if tokens["call"] != want {
		t.Errorf("the model calls' tokens %v, the session's %v", tokens["call"], want)
	}
	if a := tokens["agent"]; a[0] != want[0] || a[1] != want[1] || a[2] > want[2] {
		// Sub-question embeddings are made outside any agent.
		t.Errorf("the agents' tokens %v, the session's %v", a, want)
	}
	if searches == 0 || tl.ModelCalls == 0 {
		t.Errorf("%d searches and %d model calls in the timeline", searches, tl.ModelCalls)
	}
	for _, st := range pipeline.Stages {
		if !stages[string(st)] {
			t.Errorf("no %s stage in the timeline", st)
		}
	}
	if tl.ModelUtil <= 0 || tl.ModelUtil > 1 || len(tl.Critical) == 0 || !strings.HasPrefix(tl.Critical[len(tl.Critical)-1], "reviewer") {
		t.Errorf("utilisation %.2f, critical path %v", tl.ModelUtil, tl.Critical)
	}
	w := tl.Waterfall(80)
	for _, want := range []string{"plan", "analyst 1", "writer", "model busy", "critical path:"} {
		if !strings.Contains(w, want) {
			t.Errorf("waterfall lacks %q:\n%s", want, w)
		}
	}
	for _, line := range strings.Split(w, "\n") {
		if len([]rune(line)) > 80 {
			t.Errorf("line wider than 80 columns: %q", line)
		}
	}
	sc, err := history.LoadScores(env.Store, sess.ID)
	if err != nil || !sc.ReviewerApproved || sc.RevisionRounds != 1 || sc.SourcesCited == 0 || sc.StepsUsed != sess.Steps {
		t.Errorf("scores %+v, %v", sc, err)
	}

	// A cancelled run: the spans that never finished are open.
	r, err := env.Engine.Start(context.Background(), env.Options(question))
	if err != nil {
		t.Fatal(err)
	}
	for ev := range r.Events() {
		if ev.Type == pipeline.AgentStarted && strings.HasPrefix(ev.Agent, "analyst") {
			r.Cancel()
		}
	}
	if _, err := r.Wait(); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancel: %v", err)
	}
	evs, _ = pipeline.LoadEvents(env.Store, r.ID())
	open := 0
	for _, s := range history.BuildTimeline(r.ID(), evs).Spans {
		if s.Open {
			open++
		}
	}
	if open == 0 {
		t.Error("a cancelled run shows no unfinished span")
	}
}
