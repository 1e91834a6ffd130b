package pipeline_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/store"
)

var refEntry = regexp.MustCompile(`(?m)^\[(\d+)\] (.+)$`)

// references maps each number of a report's References to its entry.
func references(md string) map[string]string {
	_, refs, _ := strings.Cut(md, "## References")
	out := map[string]string{}
	for _, m := range refEntry.FindAllStringSubmatch(refs, -1) {
		out[m[1]] = m[2]
	}
	return out
}

func ask(t *testing.T, env *pipelinetest.Env, id, q string) store.Session {
	t.Helper()
	r, err := env.Engine.Ask(context.Background(), id, q, nil)
	if err != nil {
		t.Fatal(err)
	}
	pipelinetest.Drive(t, r, nil)
	sess, err := r.Wait()
	if err != nil || sess.Status != store.StatusCompleted {
		t.Fatalf("follow-up: status %q err %v", sess.Status, err)
	}
	return sess
}

// TestCoveredFollowUpSearchesNothing: the session's sources answer the
// follow-up; no search or download happens, the report grows a section
// citing the old numbers, and version 1 is unchanged.
func TestCoveredFollowUpSearchesNothing(t *testing.T) {
	t.Parallel()
	env := pipelinetest.NewEnv(t, &pipelinetest.Script{}, "")
	_, sess := pipelinetest.RunToEnd(t, env, env.Options(question))
	v1, _ := pipeline.LoadReport(env.Store, sess.ID)
	before := len(env.Sources.Requests())
	sess = ask(t, env, sess.ID, "Which software testing techniques do these papers study?")
	if n := len(env.Sources.Requests()) - before; n != 0 {
		t.Errorf("a covered follow-up made %d search requests", n)
	}
	vs, err := pipeline.LoadVersions(env.Store, sess.ID)
	if err != nil || len(vs) != 2 {
		t.Fatalf("%d versions, %v", len(vs), err)
	}
	if vs[0].Report != v1.Markdown || vs[1].Kind != pipeline.VersionFollowUp {
		t.Error("version 1 changed, or version 2 is not a follow-up")
	}
	if !strings.Contains(vs[1].Report, "## Follow-up: Which software testing techniques") {
		t.Errorf("no follow-up section:\n%s", vs[1].Report)
	}
	old, now := references(v1.Markdown), references(vs[1].Report)
	for n, entry := range old {
		if now[n] != entry {
			t.Errorf("reference [%s] moved: %q became %q", n, entry, now[n])
		}
	}
	if len(now) != len(old) {
		t.Errorf("a covered follow-up has %d references, the report had %d", len(now), len(old))
	}
	rep, _ := pipeline.LoadReport(env.Store, sess.ID)
	if rep.Metrics.Removed != 0 {
		t.Errorf("%d citations did not resolve", rep.Metrics.Removed)
	}
	if n := calls(env, pipelinetest.Reviewer); n != 2 {
		t.Errorf("%d reviewer calls for a run and a follow-up; the follow-up is reviewed too", n)
	}
	// A follow-up that asks for a change revises the report instead.
	sess = ask(t, env, sess.ID, "Make it shorter, please")
	vs, _ = pipeline.LoadVersions(env.Store, sess.ID)
	if len(vs) != 3 || vs[2].Kind != pipeline.VersionRevision || vs[1].Report == vs[2].Report {
		t.Errorf("versions after a revision request: %d, kind %q", len(vs), vs[len(vs)-1].Kind)
	}
}

// TestUncoveredFollowUpReadsNewSourcesNumberedAfter: the follow-up asks
// about something the session never read; it searches, and the new sources
// take the numbers after the old ones, which keep theirs.
func TestUncoveredFollowUpReadsNewSourcesNumberedAfter(t *testing.T) {
	t.Parallel()
	script := &pipelinetest.Script{
		FollowUpTopics: []pipelinetest.Topic{{Question: "What is known about Luttinger liquids of helium in nanopores?", Strict: "luttinger liquid helium nanopores", Moderate: "luttinger liquid", Broad: "helium"}},
		GapQueries:     []string{"del_maestro luttinger liquids"},
	}
	env := pipelinetest.NewEnv(t, script, "")
	_, sess := pipelinetest.RunToEnd(t, env, env.Options(question))
	v1, _ := pipeline.LoadReport(env.Store, sess.ID)
	before := len(env.Sources.Requests())
	sess = ask(t, env, sess.ID, "What is known about Luttinger liquids of helium in nanopores?")
	if len(env.Sources.Requests()) == before {
		t.Fatal("an uncovered follow-up searched nothing")
	}
	rep, _ := pipeline.LoadReport(env.Store, sess.ID)
	old, now := references(v1.Markdown), references(rep.Markdown)
	for n, entry := range old {
		if now[n] != entry {
			t.Errorf("reference [%s] moved: %q became %q", n, entry, now[n])
		}
	}
	if len(now) <= len(old) {
		t.Fatalf("no new reference: %d before, %d now", len(old), len(now))
	}
	for _, s := range rep.Sources {
		if s.Read == "" {
			t.Errorf("source [%d] does not say how it was read", s.N)
		}
	}
	for _, s := range rep.Sources[len(v1.Sources):] {
		if s.N <= len(v1.Sources) {
			t.Errorf("new source %+v is not numbered after the old ones", s)
		}
	}
	if rep.Metrics.Removed != 0 {
		t.Errorf("%d citations did not resolve", rep.Metrics.Removed)
	}
	// The new version's draft was verified: its cited sentences have their
	// passages, numbered as the new version numbers them.
	if rep.Metrics.Verified == nil || len(rep.Support) == 0 {
		t.Fatalf("the follow-up's version carries no verification: %+v", rep.Metrics.Verified)
	}
	for _, sup := range rep.Support {
		for _, n := range sup.N {
			if n < 1 || n > len(rep.Sources) {
				t.Errorf("support entry cites [%d] of %d sources", n, len(rep.Sources))
			}
		}
	}
}

func TestFollowUpBadInput(t *testing.T) {
	t.Parallel()
	env := pipelinetest.NewEnv(t, nil, "")
	if _, err := env.Engine.Ask(context.Background(), "nope", "why?", nil); !errors.Is(err, runopts.ErrBadInput) {
		t.Errorf("unknown session: %v", err)
	}
	_, sess := pipelinetest.RunToEnd(t, env, env.Options(question))
	if _, err := env.Engine.Ask(context.Background(), sess.ID, "  \x1b[2J ", nil); !errors.Is(err, runopts.ErrBadInput) {
		t.Errorf("empty question: %v", err)
	}
}
