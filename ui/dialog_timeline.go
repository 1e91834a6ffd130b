package ui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/researchtui/researchtui/pipeline/history"
	"github.com/researchtui/researchtui/themes"
)

// timelineLoadedMsg brings a session's timeline, built from its stored
// event log in the Cmd.
type timelineLoadedMsg struct {
	id, title string
	tl        history.Timeline
	err       error
}

// loadTimelineCmd reads a session's event log and builds its timeline off
// the Update loop.
func loadTimelineCmd(svc services, id, title string) tea.Cmd {
	return func() tea.Msg {
		evs, err := svc.Events(id)
		if err != nil {
			return timelineLoadedMsg{id: id, title: title, err: err}
		}
		return timelineLoadedMsg{id: id, title: title, tl: history.BuildTimeline(id, evs)}
	}
}

// timelineDialog shows where a run's time and tokens went: the time axis
// and the model's busy row stay on top, the stages and agents scroll below
// them, and the model's busy share, its idle gaps, the agents that used the
// most tokens and the critical path stay in view at the bottom.
type timelineDialog struct {
	title string
	tl    history.Timeline
	pager

	linesW int // the width lines were drawn for
	lines  []history.WaterfallLine
}

func newTimelineDialog(title string, tl history.Timeline) *timelineDialog {
	return &timelineDialog{title: sanitizeLine(title), tl: tl, pager: pager{close: "T"}}
}

func (d *timelineDialog) handle(msg tea.KeyPressMsg, _ time.Time) (action, bool, tea.Cmd) {
	return nil, d.key(msg.String(), len(d.lines)), nil
}

func (d *timelineDialog) paste(string) tea.Cmd { return nil }

// view draws the dialog nearly full screen: it leaves the screen's header
// and key line visible.
func (d *timelineDialog) view(st *themes.Styles, w, h int) string {
	boxW := dialogWidth(w, 160)
	inner := boxW - st.Dialog.GetHorizontalFrameSize()
	if d.linesW != inner {
		d.lines, d.linesW = d.tl.Lines(inner), inner
	}
	var head, rows, tail []string
	var legend string
	more := false
	for _, l := range d.lines {
		text := sanitizeLine(l.Text)
		switch l.Kind {
		case "scale":
			head = append(head, st.Muted.Render(trunc(text, inner)))
		case "model", "stage", "agent", "wait", "segment":
			line := d.row(st, l, inner)
			if l.Kind == "model" {
				head = append(head, line)
			} else {
				rows = append(rows, line)
			}
		case "critical":
			if strings.HasPrefix(l.Text, "critical path") {
				tail = append(tail, st.Accent.Render(trunc(text, inner)))
			} else {
				more = true
			}
		case "legend":
			legend = text
		default:
			tail = append(tail, st.Text.Render(trunc(text, inner)))
		}
	}
	if more && len(tail) > 0 {
		last := tail[len(tail)-1]
		tail[len(tail)-1] = trunc(last, inner-2) + st.Accent.Render(" …")
	}
	// Box: border (2), title, head, rows, tail, legend; two lines of the
	// screen stay visible. Rows give way first, down to three; then the
	// summary does.
	avail := max(h-2-2-1-1-len(head), 3)
	for len(tail) > 0 && avail-len(tail) < min(3, len(rows)) {
		tail = tail[:len(tail)-1]
	}
	room := max(avail-len(tail), 1)
	d.room = room
	d.offset = min(d.offset, max(len(rows)-room, 0))
	shown := rows[d.offset:min(d.offset+room, len(rows))]

	title := "Timeline · " + sanitizeLine(d.title)
	pos := ""
	if len(rows) > room {
		pos = fmt.Sprintf("  rows %d–%d of %d", d.offset+1, d.offset+len(shown), len(rows))
	}
	if d.tl.Attempts > 1 {
		pos = fmt.Sprintf("  %d attempts", d.tl.Attempts) + pos
	}
	titleLine := st.Title.Render(trunc(title, max(inner-width(pos), 10))) + st.Muted.Render(pos)
	body := []string{titleLine}
	body = append(body, head...)
	body = append(body, shown...)
	body = append(body, tail...)
	body = append(body, st.Subtle.Render(trunc(legend, inner)))
	return st.Dialog.Width(boxW).Render(strings.Join(body, "\n"))
}

// row draws a span row: the name in the row's style, the bar in the
// accent colour, the time and tokens muted.
func (d *timelineDialog) row(st *themes.Styles, l history.WaterfallLine, inner int) string {
	name := st.Text
	switch {
	case l.Kind == "stage":
		name = st.Heading
	case l.Kind == "segment": // a run on the session: the first, a follow-up, an update
		name = st.Title
	case l.Kind == "model":
		name = st.Muted
	case l.Kind == "wait": // a person's time, not the machine's
		name = st.Warning
	case l.Critical:
		name = st.Accent
	}
	bar := st.Info
	switch l.Kind {
	case "stage", "segment":
		bar = st.Subtle
	case "wait":
		bar = st.Warning
	}
	n, b, s := sanitizeLine(l.Name), sanitizeLine(l.Bar), sanitizeLine(l.Stats)
	out := name.Render(n) + " " + bar.Render(b)
	if s != "" {
		out += " " + st.Muted.Render(s)
	}
	return trunc(out, inner)
}
