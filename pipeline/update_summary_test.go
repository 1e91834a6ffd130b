package pipeline_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/researchtui/researchtui/llm/ollamafake"
	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/search"
)

// section is the body of a report's "## " section whose heading starts
// with name ("" when there is none).
func section(md, name string) string {
	for _, part := range strings.Split(md, "\n## ")[1:] {
		if strings.HasPrefix(part, name) {
			_, body, _ := strings.Cut(part, "\n")
			return strings.TrimSpace(body)
		}
	}
	return ""
}

// summaryWriter makes the scripted writer answer the update's summary
// call, its second writer call after the run, with answer (the script's own
// good answer when answer is "").
func summaryWriter(script *pipelinetest.Script, answer string) {
	if answer != "" {
		n := script.Calls(pipelinetest.Writer) + 2
		script.Faults = append(script.Faults, pipelinetest.Fault{Kind: pipelinetest.Writer, Nth: n, Reply: ollamafake.Reply{Content: answer}})
	}
}

// TestUpdateRevisesTheSummaryWhereTheNewWorksBearOnIt: an update whose new
// works add to the report takes them into the executive summary (its old
// sentences kept, the new one citing a new work and checked by the
// verifier); the rest of the report stays word for word. A writer that
// answers UNCHANGED, or junk, leaves the summary as it was (junk said).
func TestUpdateRevisesTheSummaryWhereTheNewWorksBearOnIt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		answer  func(old string, firstNew int) string
		revised bool
		warning string
	}{
		{"revised", func(string, int) string { return "" }, true, ""},
		{"unchanged", func(string, int) string { return "UNCHANGED." }, false, ""},
		{"junk", func(string, int) string { return "Sure! Here is the summary you asked for." }, false, "revised summary was unusable"},
		// A small model that writes the whole summary again, with its new
		// sentence: taken as written.
		{"whole summary again", func(old string, n int) string {
			return "## Executive summary\n\n" + old + " Since then, equivalent mutants were found to inflate mutation scores in software testing studies [" + strconv.Itoa(n) + "]."
		}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			script := shelfScript()
			env := pipelinetest.NewEnv(t, script, "")
			shelf := firstShelf()
			env.Engine.Sources = map[string]search.Source{"openalex": shelf}
			opt := env.Options(question)
			opt.Sources = []string{"openalex"}
			_, sess := pipelinetest.RunToEnd(t, env, opt)
			v1, _ := pipeline.LoadReport(env.Store, sess.ID)
			oldSummary := section(v1.Markdown, "Executive summary")
			if oldSummary == "" {
				t.Fatalf("the first report has no executive summary:\n%s", v1.Markdown)
			}
			grow(shelf)
			summaryWriter(script, tc.answer(oldSummary, len(v1.Sources)+1))
			r, err := env.Engine.Update(context.Background(), sess.ID)
			if err != nil {
				t.Fatal(err)
			}
			var warnings []string
			for _, ev := range pipelinetest.Drive(t, r, nil) {
				if ev.Type == pipeline.Warning {
					warnings = append(warnings, ev.Message)
				}
			}
			if _, err := r.Wait(); err != nil {
				t.Fatal(err)
			}
			rep, _ := pipeline.LoadReport(env.Store, sess.ID)
			summary := section(rep.Markdown, "Executive summary")
			firstNew := len(v1.Sources) + 1
			switch {
			case tc.revised && (!strings.HasPrefix(summary, oldSummary) || !strings.Contains(summary[len(oldSummary):], "[") || summary == oldSummary):
				t.Errorf("the summary did not take the new works in:\nbefore: %s\nafter:  %s", oldSummary, summary)
			case !tc.revised && summary != oldSummary:
				t.Errorf("the summary changed:\nbefore: %s\nafter:  %s", oldSummary, summary)
			}
			if tc.revised && !strings.Contains(summary, fmt.Sprintf("[%d", firstNew)) && !citesAtLeast(summary, firstNew) {
				t.Errorf("the revised summary cites no new work (numbers from %d): %s", firstNew, summary)
			}
			// The sections between the summary and the references are as they were.
			for _, name := range []string{"Findings", "Consensus", "Research gaps"} {
				if before := section(v1.Markdown, name); before != "" && section(rep.Markdown, name) != before {
					t.Errorf("section %s changed:\n%s\n---\n%s", name, before, section(rep.Markdown, name))
				}
			}
			if tc.revised {
				checked := false
				for _, s := range rep.Support {
					if added := strings.TrimSpace(summary[len(oldSummary):]); strings.HasPrefix(added, strings.TrimSuffix(strings.TrimSpace(s.Sentence), ".")) {
						checked = true
					}
				}
				if !checked {
					t.Errorf("the summary's new sentence is not in the verification's support map: %+v", rep.Support)
				}
			}
			said := strings.Join(warnings, "\n")
			if (tc.warning == "") != !strings.Contains(said, "summary") || (tc.warning != "" && !strings.Contains(said, tc.warning)) {
				t.Errorf("warnings %q; want %q", said, tc.warning)
			}
		})
	}
}

// citesAtLeast reports whether text cites some number ≥ n.
func citesAtLeast(text string, n int) bool {
	for _, g := range report.CiteGroups(text) {
		for _, k := range report.ParseCiteGroup(text[g[2]:g[3]]) {
			if k >= n {
				return true
			}
		}
	}
	return false
}
