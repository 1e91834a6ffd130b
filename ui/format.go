package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// fmtTokens prints a token count compactly: 950, 12.3k, 4.1M.
func fmtTokens(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d", n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	default:
		return fmt.Sprintf("%.1fM", float64(n)/1_000_000)
	}
}

// fmtCost prints dollars; local models cost nothing and say so.
func fmtCost(usd float64) string {
	if usd == 0 {
		return "$0"
	}
	if usd < 0.01 {
		return fmt.Sprintf("$%.4f", usd)
	}
	return fmt.Sprintf("$%.2f", usd)
}

// fmtDuration prints elapsed time as 4.2s, 3m05s or 1h02m.
func fmtDuration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	default:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
}

// fmtDate prints a session date relative to now: a time today, a date this
// year, a full date before.
func fmtDate(t, now time.Time) string {
	t = t.In(now.Location())
	switch {
	case t.Year() == now.Year() && t.YearDay() == now.YearDay():
		return t.Format("15:04")
	case t.Year() == now.Year():
		return t.Format("Jan 02")
	default:
		return t.Format("2006-01-02")
	}
}

// statusLabel is the human name of a store status.
func statusLabel(s string) string {
	switch s {
	case "awaiting_review":
		return "awaiting review"
	case "":
		return "unknown"
	}
	return s
}

// width is ansi.StringWidth with a fast path for plain ASCII, which is most
// of what the run screen draws every frame.
func width(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 || c < 0x20 {
			return ansi.StringWidth(s)
		}
	}
	return len(s)
}

// trunc cuts styled or plain text to w cells with an ellipsis.
func trunc(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if width(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "…")
}

// padRight pads s with spaces to exactly w cells (truncating if longer).
func padRight(s string, w int) string {
	if w <= 0 {
		return ""
	}
	n := width(s)
	if n > w {
		s = ansi.Truncate(s, w, "…")
		n = ansi.StringWidth(s)
	}
	if n < w {
		s += strings.Repeat(" ", w-n)
	}
	return s
}

// wrapText word-wraps plain text to w cells.
func wrapText(s string, w int) string {
	if w <= 0 {
		return s
	}
	return ansi.Wrap(s, w, "")
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) []string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// fitLines makes a block exactly h lines of at most w cells, so panes keep
// their size whatever their content.
func fitLines(lines []string, w, h int) string {
	if h <= 0 {
		return ""
	}
	out := make([]string, h)
	for i := 0; i < h; i++ {
		if i < len(lines) {
			out[i] = padRight(lines[i], w)
		} else {
			out[i] = strings.Repeat(" ", w)
		}
	}
	return strings.Join(out, "\n")
}

func clamp(v, lo, hi int) int {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}
