package eval

import (
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/researchtui/researchtui/textkit"
)

// WriteTable writes an eval as a table that fits 80 columns: who was
// measured and how, a row per question with its mean over the runs (and,
// with more than one run, ± the standard deviation between them), the
// overall row, and the runs that failed. WriteWideTable has every figure
// of every run.
func WriteTable(out io.Writer, sum Summary) error {
	writeHeader(out, sum)
	byQ, order := map[string][]Result{}, []string(nil)
	for _, r := range sum.Results {
		if _, ok := byQ[r.Question]; !ok {
			order = append(order, r.Question)
		}
		byQ[r.Question] = append(byQ[r.Question], r)
	}
	rows := [][]string{{"question", "runs", "recall", "precision", "facts", "support", "gen tok", "wall s"}}
	var failed []Result
	for _, q := range order {
		rs := byQ[q]
		name := textkit.Clip(textkit.CleanLine(q), 18)
		for _, r := range rs {
			if r.Assembled && !strings.HasSuffix(name, "*") {
				name += "*"
			}
			if r.Error != "" {
				failed = append(failed, r)
			}
		}
		rows = append(rows, []string{name, fmt.Sprint(len(rs)),
			spread(rs, "%.2f", func(r Result) float64 { return r.Recall }),
			spread(rs, "%.2f", func(r Result) float64 { return r.Precision }),
			spread(rs, "%.2f", factsShare),
			spread(rs, "%.2f", func(r Result) float64 { return r.SupportedShare }),
			spread(rs, "%.0f", func(r Result) float64 { return float64(r.GeneratedTokens) }),
			spread(rs, "%.0f", func(r Result) float64 { return r.WallSeconds })})
	}
	o := sum.Overall
	rows = append(rows, []string{"overall", fmt.Sprint(o.Runs), fmt.Sprintf("%.2f", o.Recall), fmt.Sprintf("%.2f", o.Precision),
		fmt.Sprintf("%.2f", o.FactsCovered), fmt.Sprintf("%.2f", o.SupportedShare), fmt.Sprintf("%.0f", o.Generated), fmt.Sprintf("%.0f", o.WallSeconds)})
	if _, err := io.WriteString(out, columns(rows)); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nmeans over each question's runs (± their standard deviation); overall: ratios\nover all runs, generated tokens per run, wall time in all. --wide has every\nrun and figure (repaired, unfounded, prompt tokens, calls, unanswered calls).\n")
	if o.Failed > 0 {
		fmt.Fprintf(out, "%d of %d runs failed (scored zero):\n", o.Failed, o.Runs)
	}
	for _, r := range failed {
		// A run's error can quote the model server's own text.
		fmt.Fprintf(out, "  %s run %d: %s\n", textkit.Clip(textkit.CleanLine(r.Question), 18), r.Run, textkit.Clip(textkit.CleanLine(r.Error), 50))
	}
	return writeFootnotes(out, o, sum.Judge)
}

// columns lays rows out: the first column left-aligned, the others
// right-aligned, two spaces apart.
func columns(rows [][]string) string {
	var widths []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		for i, c := range r {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			switch {
			case i == 0:
				b.WriteString(c + pad)
			default:
				b.WriteString("  " + pad + c)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// factsShare is the share of a question's facts a run's report states.
func factsShare(r Result) float64 {
	if r.Facts == 0 {
		return 0
	}
	return float64(r.FactsCovered) / float64(r.Facts)
}

// spread is the mean of f over rs in format, with "±" and the sample
// standard deviation (no leading zero: "0.55±.05") when there are several.
func spread(rs []Result, format string, f func(Result) float64) string {
	var sum float64
	for _, r := range rs {
		sum += f(r)
	}
	mean := sum / float64(len(rs))
	if len(rs) < 2 {
		return fmt.Sprintf(format, mean)
	}
	var sq float64
	for _, r := range rs {
		sq += (f(r) - mean) * (f(r) - mean)
	}
	sd := strings.TrimPrefix(fmt.Sprintf(format, math.Sqrt(sq/float64(len(rs)-1))), "0.")
	if strings.HasPrefix(format, "%.2") {
		sd = "." + sd
	}
	return fmt.Sprintf(format, mean) + "±" + sd
}
