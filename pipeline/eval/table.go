package eval

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/researchtui/researchtui/textkit"
)

// writeHeader says who was measured and how, within 80 columns.
func writeHeader(out io.Writer, sum Summary) {
	for _, l := range []string{
		fmt.Sprintf("model %s (%s), embeddings %s", sum.Model, sum.Backend, sum.EmbedModel),
		"world " + sum.World,
		"judge: " + sum.Judge,
		fmt.Sprintf("(a cited sentence is supported when ≥ %.0f%% of its content words are in a cited work's recorded title and abstract)", 100*sum.Threshold),
	} {
		fmt.Fprintln(out, wrap80(l))
	}
	fmt.Fprintln(out)
}

// wrap80 breaks a line at spaces into lines of at most 80 columns, the
// later ones indented.
func wrap80(s string) string {
	var b strings.Builder
	line := 0
	for i, w := range strings.Fields(s) {
		n := utf8.RuneCountInString(w)
		switch {
		case i == 0:
		case line+1+n > 80:
			b.WriteString("\n  ")
			line = 2
		default:
			b.WriteByte(' ')
			line++
		}
		b.WriteString(w)
		line += n
	}
	return b.String()
}

// WriteWideTable writes an eval as a table of every run: who was measured
// and how, a row per run with every figure, and the overall row. It is
// wider than a terminal (eval --wide).
func WriteWideTable(out io.Writer, sum Summary) error {
	writeHeader(out, sum)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	// The question column reads left-aligned: its cells are padded alike.
	width := len("overall")
	for _, r := range sum.Results {
		width = max(width, len(r.Question)+1)
	}
	left := func(s string) string { return fmt.Sprintf("%-*s", width, s) }
	fmt.Fprintf(tw, "%s\trun\trecall\tprecision\tfacts\tsupported\trepaired\tunfounded\tprompt tok\tgen tok\tcalls\tunanswered\twall s\tunparsable\t\n", left("question"))
	for _, r := range sum.Results {
		q := r.Question
		if r.Assembled && r.Error == "" {
			q += "*"
		}
		// A run's error can quote the model server's own text.
		if r.Error != "" {
			fmt.Fprintf(tw, "%s\t%d\tfailed: %s\t\t\t\t\t\t%d\t%d\t%d\t%d\t%.1f\t%s\t\n", left(q), r.Run, textkit.Clip(textkit.CleanLine(r.Error), 40),
				r.PromptTokens, r.GeneratedTokens, r.ModelCalls, r.FailedCalls, r.WallSeconds, perAgent(r.ParseFailures, r.Unusable))
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%d/%d %.2f\t%d/%d %.2f\t%d/%d\t%d/%d %.2f\t%d\t%s\t%d\t%d\t%d\t%d\t%.1f\t%s\t\n", left(q), r.Run,
			r.OnTopicCited, r.OnTopic, r.Recall, r.CitedOnTopic, r.Cited, r.Precision, r.FactsCovered, r.Facts,
			r.Supported, r.CitedSentences, r.SupportedShare, r.Repaired, unfoundedCell(r), r.PromptTokens, r.GeneratedTokens, r.ModelCalls, r.FailedCalls, r.WallSeconds,
			perAgent(r.ParseFailures, r.Unusable))
	}
	o := sum.Overall
	fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.1f\t%.1f\t%.0f\t%.0f\t%.1f\t%.1f\t%.1f\t%s\t\n", left("overall"), o.Runs, o.Recall, o.Precision, o.FactsCovered,
		o.SupportedShare, o.Repaired, o.Unfounded, o.PromptTokens, o.Generated, o.ModelCalls, o.FailedCalls, o.WallSeconds, perAgent(o.ParseFailures, o.Unusable))
	if err := tw.Flush(); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(out, "\noverall: ratios over all runs; repaired, unfounded, tokens, calls and unanswered calls per run; wall time in all. %d of %d runs failed.\n", o.Failed, o.Runs); err != nil {
		return err
	}
	return writeFootnotes(out, o, sum.Judge)
}

// writeFootnotes says which runs' reports were assembled, and what the
// model judge did.
func writeFootnotes(out io.Writer, o Totals, judge string) error {
	if o.Assembled > 0 {
		if _, err := fmt.Fprintln(out, wrap80(fmt.Sprintf("* %s: the writer's drafts were unusable and the pipeline assembled the report from the analyses; those scores measure that fallback more than the model.",
			textkit.Plural(o.Assembled, "run", "runs")))); err != nil {
			return err
		}
	}
	if o.Judged == 0 && judge == Judge {
		return nil
	}
	_, err := fmt.Fprintln(out, wrap80(fmt.Sprintf("model judge: %s put to it, %d accepted as paraphrase (in supported above), %s neither yes nor no or failed; %s of its own, not counted above.",
		textkit.Plural(o.Judged, "sentence", "sentences"), o.SupportedByJudge, textkit.Plural(o.JudgeUnclear, "answer", "answers"), textkit.Plural(o.JudgeTokens, "token", "tokens"))))
	return err
}

// unfoundedCell is how many unfounded claims a run stated, and which.
func unfoundedCell(r Result) string {
	if r.Unfounded == 0 {
		return "0"
	}
	return fmt.Sprintf("%d (%s)", r.Unfounded, strings.Join(r.UnfoundedStated, ", "))
}

// perAgent lists unparsable answers and unusable-answer warnings by agent:
// "analyst 2, planner 1w" (w: a warning), "-" when none.
func perAgent(failed, warned map[string]int) string {
	var parts []string
	for _, k := range sortedKeys(failed) {
		parts = append(parts, fmt.Sprintf("%s %d", k, failed[k]))
	}
	for _, k := range sortedKeys(warned) {
		parts = append(parts, fmt.Sprintf("%s %dw", k, warned[k]))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// WriteComparison writes two evals' overall figures side by side, with B's
// difference from A.
func WriteComparison(out io.Writer, a, b Summary) error {
	fmt.Fprintf(out, "compare: A %s, B %s (same questions, runs and seeds)\n", a.Model, b.Model)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-14s\tA\tB\tB - A\t\n", "")
	row := func(name, format string, x, y float64) {
		// The difference of the figures shown, not of the unrounded
		// ones: "0.55 0.45 -0.10", never "-0.09".
		rx, _ := strconv.ParseFloat(fmt.Sprintf(format, x), 64)
		ry, _ := strconv.ParseFloat(fmt.Sprintf(format, y), 64)
		fmt.Fprintf(tw, "%-14s\t"+format+"\t"+format+"\t%+"+format[1:]+"\t\n", name, x, y, ry-rx)
	}
	oa, ob := a.Overall, b.Overall
	row("recall", "%.2f", oa.Recall, ob.Recall)
	row("precision", "%.2f", oa.Precision, ob.Precision)
	row("facts", "%.2f", oa.FactsCovered, ob.FactsCovered)
	row("supported", "%.2f", oa.SupportedShare, ob.SupportedShare)
	row("repaired/run", "%.1f", oa.Repaired, ob.Repaired)
	row("unfounded/run", "%.1f", oa.Unfounded, ob.Unfounded)
	row("gen tok/run", "%.0f", oa.Generated, ob.Generated)
	row("prompt tok/run", "%.0f", oa.PromptTokens, ob.PromptTokens)
	row("calls/run", "%.1f", oa.ModelCalls, ob.ModelCalls)
	row("unanswered/run", "%.1f", oa.FailedCalls, ob.FailedCalls)
	row("unparsable", "%.0f", float64(total(oa.ParseFailures)+total(oa.Unusable)), float64(total(ob.ParseFailures)+total(ob.Unusable)))
	row("wall s", "%.1f", oa.WallSeconds, ob.WallSeconds)
	row("failed runs", "%.0f", float64(oa.Failed), float64(ob.Failed))
	row("assembled runs", "%.0f", float64(oa.Assembled), float64(ob.Assembled))
	return tw.Flush()
}
