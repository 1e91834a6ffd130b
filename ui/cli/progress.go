package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/researchtui/researchtui/pipeline"
)

// progress prints a headless run as short human lines: stages, sources,
// warnings, the review and the outcome. Streamed text is not printed.
type progress struct {
	w       io.Writer
	sources int
}

func (p *progress) show(ev pipeline.Event) {
	if ev.Type == pipeline.SourceFound {
		p.sources++
	}
	if line := ev.Summary(); line != "" {
		fmt.Fprintln(p.w, sanitize(line))
	}
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// sanitize strips terminal control sequences from text that came from the
// network or a model before it reaches the terminal.
func sanitize(s string) string {
	s = ansi.Strip(s)
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return r
		}
		if r < 0x20 || (r >= 0x7f && r < 0xa0) {
			return -1
		}
		return r
	}, s)
}

// oneLine is untrusted text made safe for one line of a terminal.
func oneLine(s string) string { return oneLineText(sanitize(s)) }

// oneLineText collapses a passage to one line for listing.
func oneLineText(s string) string { return strings.Join(strings.Fields(s), " ") }
