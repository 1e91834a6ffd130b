package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/textkit"
)

// The headless plan review (--review-plan ask): the plan is printed and
// the person edits it with short commands, one per line, until an empty
// line (or "go") sends the run on. The plan is the model's words: stripped
// before the terminal.

const planHelp = `Enter (or "go") runs this plan. To change it first, one command per line:
  d N            delete sub-question N
  e N TEXT       rewrite sub-question N
  q N Q1; Q2     search sub-question N with these queries
  + TEXT         add a sub-question (the planner writes its queries)
  s SRC,SRC      search these sources (e.g. s arxiv,pubmed)
  p              print the plan as it stands
`

// decidePlan asks the person about the plan on the terminal.
func decidePlan(ctx context.Context, p *pipeline.Plan, answers func() <-chan string, out io.Writer) (pipeline.Decision, error) {
	edit := planEditOf(p)
	changed := false
	fmt.Fprint(out, "\n")
	printPlan(out, edit)
	fmt.Fprint(out, planHelp)
	for {
		fmt.Fprint(out, "plan> ")
		line, err := readAnswer(ctx, answers, out)
		if err != nil {
			return pipeline.Decision{}, err
		}
		line = strings.TrimSpace(line)
		if line == "" || strings.EqualFold(line, "go") || strings.EqualFold(line, "a") {
			if !changed {
				return pipeline.Decision{Approve: true}, nil
			}
			return pipeline.Decision{Approve: true, Plan: edit}, nil
		}
		if strings.EqualFold(line, "p") {
			printPlan(out, edit)
			continue
		}
		done, err := applyPlanCommand(edit, line)
		if err != nil {
			fmt.Fprintf(out, "  %v\n", err)
			continue
		}
		changed = true
		// What changed, not the whole plan again: a script of many
		// commands must not print the plan for each.
		fmt.Fprintf(out, "  %s\n", textkit.CleanLine(done))
	}
}

// planEditOf is the plan as an edit that changes nothing.
func planEditOf(p *pipeline.Plan) *pipeline.PlanEdit {
	e := &pipeline.PlanEdit{Sources: append([]string(nil), p.Sources...)}
	for _, sq := range p.SubQuestions {
		e.SubQuestions = append(e.SubQuestions, pipeline.PlanItem{ID: sq.ID, Question: sq.Question, Queries: sq.Queries.List()})
	}
	return e
}

// applyPlanCommand applies one command line to the edit and says what it
// did.
func applyPlanCommand(e *pipeline.PlanEdit, line string) (string, error) {
	cmd, rest, _ := strings.Cut(line, " ")
	rest = strings.TrimSpace(rest)
	index := func() (int, string, error) {
		num, text, _ := strings.Cut(rest, " ")
		n, err := strconv.Atoi(num)
		if err != nil || n < 1 || n > len(e.SubQuestions) {
			return 0, "", fmt.Errorf("no sub-question %q (1 to %d)", num, len(e.SubQuestions))
		}
		return n - 1, strings.TrimSpace(text), nil
	}
	switch strings.ToLower(cmd) {
	case "d":
		i, _, err := index()
		if err != nil {
			return "", err
		}
		if len(e.SubQuestions) == 1 {
			return "", errors.New("the plan needs at least one sub-question")
		}
		gone := e.SubQuestions[i].Question
		e.SubQuestions = append(e.SubQuestions[:i], e.SubQuestions[i+1:]...)
		return fmt.Sprintf("deleted %d. %s (%s left)", i+1, gone, textkit.Plural(len(e.SubQuestions), "sub-question", "sub-questions")), nil
	case "e":
		i, text, err := index()
		if err != nil || text == "" {
			return "", errors.Join(err, errors.New("usage: e N TEXT"))
		}
		e.SubQuestions[i].Question = text
		return fmt.Sprintf("%d. %s", i+1, text), nil
	case "q":
		i, text, err := index()
		if err != nil {
			return "", err
		}
		var qs []string
		for _, q := range strings.Split(text, ";") {
			if q = strings.TrimSpace(q); q != "" {
				qs = append(qs, q)
			}
		}
		if len(qs) == 0 {
			return "", errors.New("usage: q N QUERY; QUERY")
		}
		e.SubQuestions[i].Queries = qs
		return fmt.Sprintf("%d. queries: %s", i+1, strings.Join(qs, "; ")), nil
	case "+":
		if rest == "" {
			return "", errors.New("usage: + TEXT")
		}
		if len(e.SubQuestions) >= pipeline.MaxPlanSubQuestions {
			return "", fmt.Errorf("the plan holds at most %d sub-questions: delete one first (d N)", pipeline.MaxPlanSubQuestions)
		}
		e.SubQuestions = append(e.SubQuestions, pipeline.PlanItem{Question: rest})
		return fmt.Sprintf("added %d. %s (the planner writes its queries)", len(e.SubQuestions), rest), nil
	case "s":
		var srcs []string
		known := map[string]bool{}
		for _, s := range runopts.KnownSources {
			known[s] = true
		}
		for _, s := range strings.Split(rest, ",") {
			s = strings.ToLower(strings.TrimSpace(s))
			if !known[s] {
				return "", fmt.Errorf("unknown source %q (use %s)", s, strings.Join(runopts.KnownSources, ", "))
			}
			srcs = append(srcs, s)
		}
		e.Sources = srcs
		return "searching " + strings.Join(srcs, ", "), nil
	}
	return "", fmt.Errorf("unknown command %q (p prints the plan)", textkit.CleanLine(cmd))
}

func printPlan(out io.Writer, e *pipeline.PlanEdit) {
	fmt.Fprintf(out, "The plan: %s, searching %s\n", textkit.Plural(len(e.SubQuestions), "sub-question", "sub-questions"), strings.Join(e.Sources, ", "))
	for i, it := range e.SubQuestions {
		fmt.Fprintf(out, "  %d. %s\n", i+1, textkit.CleanLine(it.Question))
		if len(it.Queries) > 0 {
			fmt.Fprintf(out, "     queries: %s\n", textkit.CleanLine(strings.Join(it.Queries, "; ")))
		} else {
			fmt.Fprintln(out, "     queries: (the planner writes them)")
		}
	}
}
