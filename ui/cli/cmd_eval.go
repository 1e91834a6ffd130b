package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/eval"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/textkit"
)

// evalCommand is `researchtui eval` (issue 40): the person's model run on
// a frozen world and scored against its ground truth and recorded text.
func evalCommand() *cobra.Command {
	var model, questions, compare, judge, backend string
	var runs, seed int
	var asJSON, wide bool
	cmd := &cobra.Command{
		Use:   "eval [--model M] [--runs N] [--wide|--json] [flags]",
		Short: "Measure a model on frozen sources: recall, precision, facts, supported sentences, tokens, time",
		Long: `eval runs each question of a set with your configured backend and model
(or --model) on a frozen world: recorded scholarly API answers (Semantic
Scholar, arXiv) served in-process (no network), each run on a fresh
temporary store (never your data dir), with the pipeline's default options
and every review approved.
It scores the reports against the questions' ground truth and the recorded
text, never the pipeline's own verdicts:

  recall     on-topic works cited ÷ on-topic works in the world
  precision  cited works that are on topic ÷ cited works
  facts      key facts stated, each by a sentence citing a work whose
             recorded abstract holds the fact's words
  supported  cited sentences ≥ 60% of whose content words the recorded title
             and abstract of a work they cite hold (the judge: lexical match
             against the recorded text; a paraphrase can fall short of it)
  repaired   sentences the verifier re-cited, uncited or dropped
  unfounded  claims no recorded work makes (the question's list: the
             Loebner Prize, LSTMs being Turing complete, ...) that the
             report states, cited or not
  prompt tok, gen tok, calls
             tokens and chat requests (a retry is one more)
  unanswered chat requests the model did not answer (an error, or nothing
             generated); a run in which it answered none is a failed run,
             scored zero
  wall s     wall time
  unparsable structured answers that stayed unparsable (analyst 4), and
             warnings that an agent's answer was unusable (planner 1w)

The table has a row per question: the means over its runs, ± their
standard deviation with --runs 2 or more, and the overall row (ratios over
all runs; tokens per run; wall time in all). --wide has a row per run with
every figure; --json has the same figures under the same names.

Sets: turing (default; turing-test, turing-complete, on recorded Semantic
Scholar answers), testing (gui-testing, on a recorded arXiv answer), all,
or question IDs separated by commas. Questions run in a fixed order, each
chat call with a sampling seed (--seed), so an eval repeats where the
backend honours one.

--judge J adds a second judge for paraphrase: each cited sentence the words
alone do not support is put to model J with the recorded title and abstract
of each work it cites ("does the source support the claim? YES or NO").
J can only add support, never remove it; an answer that says neither counts
as no and is reported. J must not be the model under test, and its tokens
are counted apart.

--compare A,B runs the same questions, runs and seeds with model A, then B,
and prints both and a table of the two side by side.`,
		Example: `  researchtui eval
  researchtui eval --model qwen3:4b --runs 3 --json > qwen3-4b.json
  researchtui eval --compare qwen3:8b,qwen3:4b
  researchtui eval --model qwen3:4b --judge qwen3:32b`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runs < 1 || runs > 20 {
				return fmt.Errorf("%w: --runs must be 1 to 20", errUsage)
			}
			qs, err := eval.Select(questions)
			if err != nil {
				return fmt.Errorf("%w: %v", errUsage, err)
			}
			cfg, err := loadConfig()
			if err != nil {
				return err
			}
			if backend != "" {
				cfg.Backend = backend
			}
			opt := cfg.defaultOptions()
			if model != "" {
				opt.Model = model
			}
			opt.Question = qs[0].Text // Normalize checks the models; each run takes its own question
			if err := opt.Normalize(); err != nil {
				return fmt.Errorf("%w: %v", errUsage, err)
			}
			judge = strings.TrimSpace(judge)
			if compare == "" {
				if judge != "" && sameModel(judge, opt.Model) {
					return fmt.Errorf("%w: --judge %s is the model under test; a model never judges its own report", errUsage, judge)
				}
				return runEval(cmd, cfg, opt, qs, runs, seed, judge, asJSON, wide)
			}
			models := strings.Split(compare, ",")
			for i := range models {
				models[i] = strings.TrimSpace(models[i])
			}
			if len(models) != 2 || models[0] == "" || models[1] == "" || model != "" {
				return fmt.Errorf("%w: --compare takes two models, A,B (and no --model)", errUsage)
			}
			if sameModel(models[0], models[1]) {
				return fmt.Errorf("%w: --compare %s,%s names one model twice; --runs N measures one model N times", errUsage, models[0], models[1])
			}
			if judge != "" && (sameModel(judge, models[0]) || sameModel(judge, models[1])) {
				return fmt.Errorf("%w: --judge %s is one of the models compared; a model never judges its own report", errUsage, judge)
			}
			// Both models (and the judge) are checked before A's eval
			// starts: B refused after A's hour of runs would waste them.
			b, err := newBackend(cfg)
			if err != nil {
				return err
			}
			for _, m := range append(models, judge) {
				if m != "" {
					if err := checkBackend(cmd.Context(), b, m); err != nil {
						return err
					}
				}
			}
			var sums []eval.Summary
			var stopped error
			for _, m := range models {
				opt.Model = m
				sum, err := evalModel(cmd, cfg, opt, qs, runs, seed, judge)
				if len(sum.Results) > 0 {
					sums = append(sums, sum)
				}
				if err != nil {
					stopped = err
					break
				}
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				if err := enc.Encode(map[string][]eval.Summary{"compare": sums}); err != nil {
					return err
				}
				return stopped
			}
			for _, sum := range sums {
				if err := writeEvalTable(cmd.OutOrStdout(), sum, wide); err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout())
			}
			if stopped != nil || len(sums) < 2 {
				return stopped // what finished is printed; no comparison of a part
			}
			return eval.WriteComparison(cmd.OutOrStdout(), sums[0], sums[1])
		},
	}
	cmd.Flags().StringVar(&model, "model", "", "the model to measure (default: the configured model)")
	cmd.Flags().StringVar(&compare, "compare", "", "two models A,B: the same eval with each, side by side")
	cmd.Flags().StringVar(&judge, "judge", "", "a model judging paraphrase the words miss")
	cmd.Flags().StringVar(&backend, "backend", "", "ollama or openai (default: the configured one)")
	cmd.Flags().StringVar(&questions, "questions", eval.DefaultSet, "a set, or IDs joined by commas")
	cmd.Flags().IntVar(&runs, "runs", 1, "runs of each question (1 to 20)")
	cmd.Flags().IntVar(&seed, "seed", 42, "run k's sampling seed is S+k-1; 0: none")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the results as one JSON object")
	cmd.Flags().BoolVar(&wide, "wide", false, "a row per run with every figure (wide)")
	return cmd
}

// writeEvalTable writes sum as the 80-column table, or every run's row.
func writeEvalTable(out io.Writer, sum eval.Summary, wide bool) error {
	if wide {
		return eval.WriteWideTable(out, sum)
	}
	return eval.WriteTable(out, sum)
}

// runEval runs one model's eval and prints it; an eval stopped midway (a
// cancel, a backend gone) still prints the runs that finished.
func runEval(cmd *cobra.Command, cfg *Config, opt runopts.Options, qs []eval.Question, runs, seed int, judge string, asJSON, wide bool) error {
	sum, err := evalModel(cmd, cfg, opt, qs, runs, seed, judge)
	if err != nil && len(sum.Results) == 0 {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		if jerr := enc.Encode(sum); jerr != nil {
			return jerr
		}
		return err
	}
	if terr := writeEvalTable(cmd.OutOrStdout(), sum, wide); terr != nil {
		return terr
	}
	return err
}

// evalModel runs the eval with opt.Model (and judge, when not ""),
// progress on stderr.
func evalModel(cmd *cobra.Command, cfg *Config, opt runopts.Options, qs []eval.Question, runs, seed int, judge string) (eval.Summary, error) {
	ctx := cmd.Context()
	b, err := newBackend(cfg)
	if err != nil {
		return eval.Summary{}, err
	}
	if err := checkBackend(ctx, b, opt.Model, opt.EmbedModel); err != nil {
		return eval.Summary{}, err
	}
	var mj *eval.ModelJudge
	if judge != "" {
		if err := checkBackend(ctx, b, judge); err != nil {
			return eval.Summary{}, err
		}
		mj = &eval.ModelJudge{LLM: b, Model: judge, Seed: seed}
	}
	ws, err := eval.OpenWorlds(ctx, qs)
	if err != nil {
		return eval.Summary{}, err
	}
	defer ws.Close()
	stderr := cmd.ErrOrStderr()
	fmt.Fprintf(stderr, "eval: %s on %s; %s, %s each (%s in all); judge: %s\n", opt.Model, cfg.Backend,
		textkit.Plural(len(qs), "question", "questions"), textkit.Plural(runs, "run", "runs"), textkit.Plural(len(qs)*runs, "run", "runs"), eval.JudgeName(mj))
	setup := eval.Setup{LLM: b, Model: opt.Model, EmbedModel: opt.EmbedModel, ModelParallel: cfg.modelParallel(), Seed: seed, Judge: mj,
		OnEvent: func(ev pipeline.Event) { evalEvent(stderr, ev) }}
	sum, err := eval.Run(ctx, setup, ws, qs, runs, func(s eval.Step) { evalStep(stderr, s) })
	sum.Backend = cfg.Backend
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return sum, &exitError{exitCancelled, fmt.Errorf("the eval was cancelled after %d of %d runs (the finished ones are printed)", len(sum.Results), len(qs)*runs)}
		}
		return sum, &exitError{exitFailed, fmt.Errorf("the eval stopped: %w", err)}
	}
	fmt.Fprintf(stderr, "eval: done in %s\n", time.Duration(sum.Overall.WallSeconds*float64(time.Second)).Round(time.Second))
	return sum, nil
}

// sameModel reports whether two Ollama model names are one model: "qwen3"
// is "qwen3:latest".
func sameModel(a, b string) bool {
	tagged := func(m string) string {
		m = strings.ToLower(strings.TrimSpace(m))
		if !strings.Contains(m[strings.LastIndex(m, "/")+1:], ":") {
			m += ":latest"
		}
		return m
	}
	return tagged(a) == tagged(b)
}

// evalStep says, with a bar of the runs done, which run starts, how long
// the eval has taken and about how long it has left (the mean run so far
// times the runs to go).
func evalStep(w io.Writer, s eval.Step) {
	left := "time left unknown until a run finishes"
	if s.I > 0 {
		per := s.Elapsed / time.Duration(s.I)
		left = fmt.Sprintf("about %s left", (per * time.Duration(s.N-s.I)).Round(time.Second))
	}
	what := fmt.Sprintf("question %d of %d: %s", s.I+1, s.N, s.Question.ID)
	if s.Runs > 1 {
		what = fmt.Sprintf("run %d of %d: %s, its run %d of %d", s.I+1, s.N, s.Question.ID, s.Run, s.Runs)
	}
	fmt.Fprintf(w, "eval: %s %s · %s elapsed · %s\n", progressBar(s.I, s.N, 12), what, s.Elapsed.Round(time.Second), left)
}

// progressBar draws done of n as a bar of width cells: [████░░░░].
func progressBar(done, n, width int) string {
	full := 0
	if n > 0 {
		full = min(done*width/n, width)
	}
	return "[" + strings.Repeat("█", full) + strings.Repeat("░", width-full) + "]"
}

// evalEvent shows a run's stages and warnings, not its every event.
func evalEvent(w io.Writer, ev pipeline.Event) {
	switch ev.Type {
	case pipeline.StageStarted, pipeline.Warning, pipeline.RunFailed:
		if line := ev.Summary(); line != "" {
			fmt.Fprintln(w, "  "+textkit.StripControls(line))
		}
	}
}
