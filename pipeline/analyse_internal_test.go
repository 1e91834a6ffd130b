package pipeline

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func testExcerpts() excerptSet {
	return newExcerptSet([]ContextChunk{
		{ID: "arxiv:1#0", Text: "We study Turing patterns. Patterns form in 3 of 4 runs. The rate is 0.5 per second."},
		{ID: "arxiv:1#1", Text: "A second excerpt. It has two sentences."},
	}, "")
}

func TestAnalystReferencesResolveToTheSentencesShown(t *testing.T) {
	x := testExcerpts()
	for ref, want := range map[string]string{
		"E1.2": "Patterns form in 3 of 4 runs.", "[E2.1]": "A second excerpt.", "e1 s3": "The rate is 0.5 per second.",
		"2.2": "It has two sentences.", "E1 (1)": "We study Turing patterns.",
	} {
		_, got, ok := x.resolve(ref)
		if !ok || got != want {
			t.Errorf("resolve(%q) = %q, %v; want %q", ref, got, ok, want)
		}
	}
	for _, bad := range []string{"E3.1", "E1.9", "E0.1", "", "Patterns form", "E1"} {
		if _, _, ok := x.resolve(bad); ok {
			t.Errorf("resolve(%q) resolved", bad)
		}
	}
}

func TestAnalysisFindingsAreVerbatimQuotes(t *testing.T) {
	o := &orchestrator{st: runState{Plan: &Plan{SubQuestions: []SubQuestion{{Slots: []string{"methods"}}}}}}
	ans := analystAnswer{Findings: []string{"E1.2", "E9.9", "E1.2", "E2.2"}, Confidence: 0.7,
		Method: "Simulations.", Limits: "One model only."}
	ans.Slots = []string{"1:E1.1", "9:E1.1", "1:E9.9", "nonsense"}
	an := o.analysisFrom(ans, testExcerpts(), false, o.slotNames())
	if strings.Join(an.KeyFindings, "|") != "Patterns form in 3 of 4 runs.|It has two sentences." {
		t.Errorf("findings %q", an.KeyFindings)
	}
	if len(an.Quotes) != 2 || an.Quotes[1].ChunkID != "arxiv:1#1" {
		t.Errorf("quotes %+v", an.Quotes)
	}
	if an.Methodology != "" || an.Limitations != "" {
		t.Error("an abstract-only analysis kept method and limits")
	}
	if len(an.Slots) != 1 || an.Slots[0].ChunkID != "arxiv:1#0" {
		t.Errorf("slots %+v", an.Slots)
	}
	if full := o.analysisFrom(ans, testExcerpts(), true, nil); full.Methodology != "Simulations." {
		t.Errorf("full-text method %q", full.Methodology)
	}
}

// FuzzAnalystReference: whatever a model writes as a reference resolves to
// a sentence shown or to nothing, never a panic.
func FuzzAnalystReference(f *testing.F) {
	for _, s := range []string{"E1.2", "[E2.1]", "e1 s3", "E99999999999999999999.1", "E1.-1", "\x00", "E1.2.3"} {
		f.Add(s)
	}
	x := testExcerpts()
	f.Fuzz(func(t *testing.T, ref string) {
		if _, text, ok := x.resolve(ref); ok && text == "" {
			t.Fatalf("%q resolved to empty text", ref)
		}
	})
}

// The title opening an abstract chunk is not numbered as a sentence.
func TestExcerptsLeaveOutTheTitle(t *testing.T) {
	x := newExcerptSet([]ContextChunk{{ID: "a#0", Text: "Turing Patterns in Skin. Stripes form by diffusion."}}, "Turing patterns in skin")
	if _, got, ok := x.resolve("E1.1"); !ok || got != "Stripes form by diffusion." {
		t.Errorf("E1.1 = %q, %v", got, ok)
	}
}

// A model that answers slots as objects, against the schema, is understood.
func TestAnalystSlotsAsObjects(t *testing.T) {
	var ans analystAnswer
	if err := json.Unmarshal([]byte(`{"findings":["E1.2"],"confidence":0.5,"slots":[{"slot":1,"ref":"E1.1"},"1:E2.1",7]}`), &ans); err != nil {
		t.Fatal(err)
	}
	// A number alone is a slot without its sentence: a batch of short
	// sources names slots so (analyse_batch.go), a single analysis drops it.
	if strings.Join(ans.Slots, "|") != "1:E1.1|1:E2.1|7" {
		t.Errorf("slots %q", ans.Slots)
	}
}

// FuzzAnalystAnswer: whatever JSON a model writes for an analysis is
// either refused or resolved to findings that are sentences shown.
func FuzzAnalystAnswer(f *testing.F) {
	for _, s := range []string{
		`{"findings":["E1.2","E2.1"],"slots":["1:E1.1"],"confidence":0.8}`,
		`{"findings":["E1.2"],"slots":[{"slot":1,"ref":"E1.1"}],"confidence":0.5,"method":"x","limits":"y"}`,
		`{"findings":[1,2],"slots":"none"}`, `{"slots":[null,{},[]]}`, `[]`, `{`,
	} {
		f.Add(s)
	}
	o := &orchestrator{st: runState{Plan: &Plan{SubQuestions: []SubQuestion{{Slots: []string{"methods", "results"}}}}}}
	x := testExcerpts()
	shown := map[string]bool{}
	for _, ss := range x.sents {
		for _, s := range ss {
			shown[s] = true
		}
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var ans analystAnswer
		if json.Unmarshal([]byte(raw), &ans) != nil {
			return
		}
		an := o.analysisFrom(ans, x, true, o.slotNames())
		for _, fd := range an.KeyFindings {
			if !shown[fd] {
				t.Fatalf("finding %q is no sentence shown", fd)
			}
		}
	})
}

// FuzzSeveralAnswer: whatever JSON a model writes for a batch of short
// sources, each source keeps only references into its own excerpts.
func FuzzSeveralAnswer(f *testing.F) {
	f.Add(`{"sources":[{"n":1,"findings":["E1.1"],"slots":[1,2],"confidence":0.8},{"n":2,"findings":["E2.1","E1.1"],"slots":["1:E1.1"],"confidence":0.5}]}`)
	f.Add(`{"sources":[{"n":2,"findings":["E3.2"],"confidence":0.8},{"n":2,"findings":["E2.1"]}]}`)
	f.Add(`{"sources":[{"n":-1},{"n":99,"findings":["E9.9"]}], "extra": true}`)
	f.Add(`{"sources":[{"n":2,"findings":["E2.1"],"slots":["0A:E2.1"]}]}`) // a slot by a name the plan lacks
	whole := excerptSet{
		chunks: []ContextChunk{{ID: "a#0"}, {ID: "b#0"}, {ID: "b#1"}},
		sents:  [][]string{{"A one."}, {"B one.", "B two."}, {"B three."}},
	}
	owner := []int{0, 1, 1}
	f.Fuzz(func(t *testing.T, raw string) {
		var ans severalAnswer
		if json.Unmarshal([]byte(raw), &ans) != nil {
			return
		}
		for i, a := range ans.split(whole, owner, 2) {
			if a == nil {
				continue
			}
			if len(a.Findings) == 0 {
				t.Fatalf("source %d kept with no findings", i)
			}
			for _, r := range append(slices.Clone(a.Findings), a.Slots...) {
				if e, ok := whole.excerptOf(refInAnswer(r)); !ok || owner[e] != i {
					t.Fatalf("source %d kept %q, not one of its own sentences", i, r)
				}
			}
		}
	})
}

// TestSlotsGivenByName: a small model that names a slot instead of
// numbering it ("methods:E1.2", or "Methods" alone) still fills it; the
// name alone is shown by the first finding's sentence. A name the plan
// does not have fills nothing.
func TestSlotsGivenByName(t *testing.T) {
	names := []string{"key findings", "methods", "open problems"}
	for _, c := range []struct {
		in      string
		n       int
		ref     string
		matched bool
	}{
		{"2:E1.3", 2, "E1.3", true},
		{"methods:E1.2", 2, "E1.2", true},
		{" Methods ", 2, "E1.1", true},
		{"Open problems = E2.1", 3, "E2.1", true},
		{"limitations", 0, "", false},
		{"9:E1.1", 9, "E1.1", false},
	} {
		n, ref, ok := slotOf(c.in, names, "E1.1")
		if ok != c.matched || (ok && (n != c.n || ref != c.ref)) {
			t.Errorf("slotOf(%q) = %d, %q, %v; want %d, %q, %v", c.in, n, ref, ok, c.n, c.ref, c.matched)
		}
	}
	// In a batch, a slot by name alone is shown by the source's first finding.
	if got := slotsShownBy([]string{"methods", "2", "1:E1.3"}, "E1.2"); got[0] != "methods:E1.2" || got[1] != "2:E1.2" || got[2] != "1:E1.3" {
		t.Errorf("slotsShownBy: %q", got)
	}
}
