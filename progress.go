package main

import (
	"fmt"
	"io"
	"strings"
	"time"

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
	line := ""
	switch ev.Type {
	case pipeline.RunStarted:
		line = fmt.Sprintf("session %s: %s", ev.SessionID, ev.Message)
	case pipeline.StageStarted:
		line = fmt.Sprintf("▸ %-9s %s", ev.Stage, ev.Message)
	case pipeline.StageFinished:
		line = fmt.Sprintf("✓ %-9s %s %s", ev.Stage, ev.Message, dur(ev.Elapsed))
	case pipeline.SourceFound:
		p.sources++
		if ev.Source != nil {
			line = fmt.Sprintf("  + [%s] %s", ev.Source.Source, truncate(ev.Source.Title, 90))
		}
	case pipeline.Warning:
		line = "  ! " + ev.Message
	case pipeline.ReviewRequested:
		if ev.Review != nil {
			line = fmt.Sprintf("  reviewer: %d revision requests (round %d)", len(ev.Review.Requests), ev.Review.Round)
		}
	case pipeline.ReviewDecided:
		line = "  decision: " + ev.Message
	case pipeline.ReportReady:
		line = "  " + ev.Message
	case pipeline.RunFinished, pipeline.RunFailed, pipeline.RunCancelled, pipeline.RunSuspended:
		line = fmt.Sprintf("%s: %s %s", ev.Status, ev.Message, dur(ev.Elapsed))
	}
	if line != "" {
		fmt.Fprintln(p.w, sanitize(line))
	}
}

func dur(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return "(" + d.Round(100*time.Millisecond).String() + ")"
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

// oneLineText collapses a passage to one line for listing.
func oneLineText(s string) string { return strings.Join(strings.Fields(s), " ") }
