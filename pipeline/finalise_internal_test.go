package pipeline

import (
	"strings"
	"testing"

	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/search"
)

// One citation taken out is one, in the warning (issue 47: "1 citations").
func TestRemovedCitationsWording(t *testing.T) {
	if got := removedCitations(1); got != "1 citation pointed to a source that was not retrieved and was removed" {
		t.Errorf("one: %q", got)
	}
	if got := removedCitations(3); got != "3 citations pointed to sources that were not retrieved and were removed" {
		t.Errorf("three: %q", got)
	}
}

// A plan waiting for the person is not called the reviewer's (trial: the
// headless line said "reviewer: 0 revision requests (round 0)").
func TestPlanReviewLine(t *testing.T) {
	plan := Event{Type: ReviewRequested, Review: &ReviewRequest{Plan: &Plan{}, Summary: "3 sub-questions, searching arxiv"}}
	if got := plan.Summary(); got != "  planner: the plan waits for you (3 sub-questions, searching arxiv)" {
		t.Errorf("plan review: %q", got)
	}
	one := Event{Type: ReviewRequested, Review: &ReviewRequest{Round: 1, Requests: []RevisionRequest{{ID: "r1"}}}}
	if got := one.Summary(); got != "  reviewer: 1 revision request (round 1)" {
		t.Errorf("review: %q", got)
	}
}

// A title that ends a sentence itself is not given a second stop (issue
// 46: "Does GPT-4 pass the Turing test?. We evaluated…").
func TestAbstractTextEndsTheTitleOnce(t *testing.T) {
	for title, want := range map[string]string{
		"Does GPT-4 pass the Turing test?": "Does GPT-4 pass the Turing test? We evaluated GPT-4.",
		"Neural Turing Machines":           "Neural Turing Machines. We evaluated GPT-4.",
		"A survey.":                        "A survey. We evaluated GPT-4.",
	} {
		if got := abstractText(search.Record{Title: title, Abstract: "We evaluated GPT-4."}); got != want {
			t.Errorf("%q: %q", title, got)
		}
	}
}

// The studies table's "Answers" names the sub-questions each work was read
// for, not every sub-question whose search met it (issue 46: "q1, q2, q3"
// on every row); a column that would say the same on every row is left
// out.
func TestStudiesAnswersSayWhatEachWorkWasReadFor(t *testing.T) {
	subqs := []SubQuestion{{ID: "q1"}, {ID: "q2"}, {ID: "q3"}}
	everywhere := map[string][]string{"q1": {"a", "b"}, "q2": {"a", "b"}, "q3": {"a", "b"}}
	cands := []Candidate{{Key: "a", SubQ: "q1", Read: true}, {Key: "a", SubQ: "q2"}, {Key: "b", SubQ: "q2", Read: true}, {Key: "b", SubQ: "q3", Read: true}}
	sources := []report.CitedSource{{N: 1, Key: "a", Title: "A"}, {N: 2, Key: "b", Title: "B"}}
	table := report.StudiesMarkdown(sources, nil, includedFor(cands, everywhere, subqs))
	if !strings.Contains(table, "[1] | article | — | q1 |") || !strings.Contains(table, "[2] | article | — | q2, q3 |") {
		t.Errorf("the table:\n%s", table)
	}
	same := report.StudiesMarkdown(sources, nil, includedFor(nil, everywhere, subqs))
	if strings.Contains(same, "Answers") || strings.Contains(same, "q1") {
		t.Errorf("a column alike on every row:\n%s", same)
	}
}

// Front matter and whole proceedings volumes are not works (issue 46);
// papers that mention proceedings or indexes are.
func TestNotAWork(t *testing.T) {
	for _, title := range []string{"Front Matter", "Table of Contents", "Author Index", "Index", "Preface.", "Editorial Board",
		"Algorithms -- ESA 2003 : 11th Annual European Symposium, Budapest, Hungary, September 16-19, 2003 : proceedings",
		"Proceedings of the 17th International Symposium on Algorithms and Computation", "Algorithms and Computation, 17th International Symposium, ISAAC 2006, Proceedings"} {
		if !notAWork(title) {
			t.Errorf("%q taken for a work", title)
		}
	}
	for _, title := range []string{"An index for approximate string matching", "Indexing compressed text", "Faster edit distance: proceedings of nothing, a study",
		"Contents of the human gut microbiome", "Does GPT-4 pass the Turing test?"} {
		if notAWork(title) {
			t.Errorf("%q taken for front matter", title)
		}
	}
}

// No sentence twice (issue 46): a repeat is dropped, its citations moved
// to the first; short sentences, headings and tables stay.
func TestDropRepeats(t *testing.T) {
	md := "## Executive summary\n\nMoisture degrades methylammonium lead iodide films within hours [1]. Results vary.\n\n" +
		"## Mechanisms\n\nMoisture degrades methylammonium lead iodide films within hours [2]. Hydrates form first [1]. Results vary.\n\n" +
		"- moisture degrades methylammonium lead iodide films within hours.\n\n| a | b |\n|---|---|\n| x | y |\n| x | y |\n"
	got, n := report.DropRepeats(md)
	if n != 2 {
		t.Errorf("dropped %d, want 2:\n%s", n, got)
	}
	if strings.Count(got, "within hours") != 1 || !strings.Contains(got, "within hours [1, 2].") {
		t.Errorf("the first keeps the repeat's citation:\n%s", got)
	}
	if strings.Count(got, "Results vary.") != 2 || strings.Count(got, "| x | y |") != 2 || !strings.Contains(got, "Hydrates form first [1].") {
		t.Errorf("short sentences and tables are kept:\n%s", got)
	}
	if same, n := report.DropRepeats("One sentence about perovskite films and their stability [1].\n"); n != 0 || same != "One sentence about perovskite films and their stability [1].\n" {
		t.Errorf("a text without repeats changed: %q", same)
	}
}
