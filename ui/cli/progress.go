package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/textkit"
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
		fmt.Fprintln(p.w, textkit.StripControls(line))
	}
}

// progressLine shows the progress of a long task on one line of a
// terminal (redrawn at most five times a second), or as a line per step
// when the output is not a terminal.
type progressLine struct {
	w     io.Writer
	tty   bool
	last  time.Time
	step0 string
	drawn bool
}

func newProgressLine(w io.Writer) *progressLine {
	p := &progressLine{w: w}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func (p *progressLine) step(name string, done, total int) {
	if !p.tty {
		if name != p.step0 {
			fmt.Fprintln(p.w, textkit.StripControls(name)+"…")
			p.step0 = name
		}
		return
	}
	if name == p.step0 && time.Since(p.last) < 200*time.Millisecond {
		return
	}
	p.step0, p.last = name, time.Now()
	line := textkit.StripControls(name)
	if total > 0 {
		line += fmt.Sprintf(" %s %d%% (%s of %s)", bar(done, total, 20), 100*done/total, commas(done), commas(total))
	}
	fmt.Fprintf(p.w, "\r\x1b[2K%s", line)
	p.drawn = true
}

func (p *progressLine) done() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[2K")
		p.drawn = false
	}
}

func bar(done, total, width int) string {
	n := min(width, width*done/max(total, 1))
	return "[" + strings.Repeat("█", n) + strings.Repeat("·", width-n) + "]"
}
