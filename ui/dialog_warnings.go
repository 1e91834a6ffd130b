package ui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	tea "charm.land/bubbletea/v2"

	"github.com/researchtui/researchtui/themes"
)

// warningsDialog lists a run's warnings whole, newest last: the run screen
// has room for the count and the newest, cut to the width.
type warningsDialog struct {
	title    string
	warnings []string
	pager
	lines int // the lines drawn, for G
}

func newWarningsDialog(title string, warnings []string) *warningsDialog {
	return &warningsDialog{title: sanitizeLine(title), warnings: append([]string(nil), warnings...), pager: pager{close: "W"}}
}

func (d *warningsDialog) handle(msg tea.KeyPressMsg, _ time.Time) (action, bool, tea.Cmd) {
	return nil, d.key(msg.String(), d.lines), nil
}

func (d *warningsDialog) paste(string) tea.Cmd { return nil }

func (d *warningsDialog) keyMap() help.KeyMap { return d.pager.keyMap() }

// view draws each warning wrapped to the box, numbered, scrolled by lines.
func (d *warningsDialog) view(st *themes.Styles, w, h int) string {
	boxW := dialogWidth(w, 100)
	inner := boxW - st.Dialog.GetHorizontalFrameSize()
	var rows []string
	for i, warning := range d.warnings {
		mark := fmt.Sprintf("%d. ", i+1)
		for j, line := range strings.Split(wrapText(sanitizeLine(warning), max(inner-len(mark), 10)), "\n") {
			lead := strings.Repeat(" ", len(mark))
			if j == 0 {
				lead = mark
			}
			rows = append(rows, st.Text.Render(lead+line))
		}
	}
	d.lines = len(rows)
	room := max(h-2-2-1, 3) // two lines of the screen, the border, the title
	d.room = room
	d.offset = min(d.offset, max(len(rows)-room, 0))
	shown := rows[d.offset:min(d.offset+room, len(rows))]
	pos := ""
	if len(rows) > room {
		pos = fmt.Sprintf("  lines %d–%d of %d", d.offset+1, d.offset+len(shown), len(rows))
	}
	title := st.Title.Render(trunc("Warnings · "+d.title, max(inner-width(pos), 10))) + st.Muted.Render(pos)
	return st.Dialog.Width(boxW).Render(strings.Join(append([]string{title}, shown...), "\n"))
}
