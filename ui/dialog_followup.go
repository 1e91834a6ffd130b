package ui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/themes"
)

// followUpDialog asks a finished report a follow-up question, or for a
// change ("make it shorter"). Every printable key types, as on the
// sessions screen's question line.
type followUpDialog struct {
	id, title string
	input     lineInput
}

// actAsk starts a follow-up run on a session.
type actAsk struct{ id, question string }

func newFollowUpDialog(st *themes.Styles, id, title string) *followUpDialog {
	d := &followUpDialog{id: id, title: title, input: newInput(st, "ask more, or ask for a change (\"make it shorter\")", 60)}
	d.input.Focus()
	return d
}

func (d *followUpDialog) handle(msg tea.KeyPressMsg, _ time.Time) (action, bool, tea.Cmd) {
	switch msg.String() {
	case "enter":
		q := strings.TrimSpace(d.input.Value())
		if q == "" {
			return nil, true, nil
		}
		return actAsk{id: d.id, question: q}, false, nil
	case "esc":
		return nil, false, nil
	}
	d.input.Update(msg)
	return nil, true, nil
}

func (d *followUpDialog) paste(s string) tea.Cmd {
	d.input.Insert(strings.Join(strings.Fields(s), " "))
	return nil
}

func (d *followUpDialog) view(st *themes.Styles, w, _ int) string {
	width := dialogWidth(w, 72)
	d.input.SetWidth(width - 6)
	// wrapped, not cut: at 80 columns the hint would lose its end
	body := d.input.View() + "\n\n" + st.Subtle.Render(wrapText("answered from the session's sources when they cover it; researched when not", width-6))
	return dialogBox(st, width, "Follow-up · "+trunc(d.title, width-20), body, helpLines(st, d.keyMap().ShortHelp(), width-6))
}

func (d *followUpDialog) keyMap() help.KeyMap {
	return formKeyMap{short: []key.Binding{kb([]string{"enter"}, "enter", "ask"), keyEsc}}
}

// versionsDialog lists a session's report versions; enter shows how the
// selected one differs from the one before.
type versionsDialog struct {
	versions []pipeline.Version
	cursor   int
	diff     bool
	offset   int
}

func newVersionsDialog(vs []pipeline.Version) *versionsDialog {
	return &versionsDialog{versions: vs, cursor: max(len(vs)-1, 0)}
}

func (d *versionsDialog) handle(msg tea.KeyPressMsg, _ time.Time) (action, bool, tea.Cmd) {
	switch msg.String() {
	case "esc", "q":
		if d.diff {
			d.diff = false
			return nil, true, nil
		}
		return nil, false, nil
	case "enter":
		d.diff, d.offset = !d.diff, 0
	case "up", "k":
		if d.diff {
			d.offset = max(d.offset-1, 0)
		} else {
			d.cursor = max(d.cursor-1, 0)
		}
	case "down", "j":
		if d.diff {
			d.offset++
		} else {
			d.cursor = min(d.cursor+1, len(d.versions)-1)
		}
	case "g", "home":
		d.offset = 0
	case "G", "end":
		d.offset = 1 << 30 // the view clamps it to the last page
	case "pgdown", "space", "ctrl+d":
		d.offset += 10
	case "pgup", "ctrl+u":
		d.offset = max(d.offset-10, 0)
	}
	return nil, true, nil
}

func (d *versionsDialog) paste(string) tea.Cmd { return nil }

func (d *versionsDialog) view(st *themes.Styles, w, h int) string {
	width := dialogWidth(w, 100)
	inner := width - 6
	var lines []string
	if !d.diff || len(d.versions) == 0 {
		for i, v := range d.versions {
			mark := "  "
			if i == d.cursor {
				mark = "▸ "
			}
			line := fmt.Sprintf("%sv%d  %-9s %s  %s", mark, v.N, strings.ReplaceAll(v.Kind, "_", "-"), v.CreatedAt.Local().Format("2006-01-02 15:04"), sanitizeLine(v.Question))
			style := st.Text
			if i == d.cursor {
				style = st.Selected
			}
			lines = append(lines, style.Render(trunc(line, inner)))
		}
		return dialogBox(st, width, "Versions", strings.Join(lines, "\n"), st.HelpDesc.Render("j/k choose · enter what changed · esc close"))
	}
	v := d.versions[d.cursor]
	prev := ""
	if d.cursor > 0 {
		prev = d.versions[d.cursor-1].Report
	}
	// Added and removed lines wrap, so a new paragraph can be read whole;
	// unchanged ones are context and keep one line each.
	var shown []string
	for _, l := range lineDiff(sanitize(prev), sanitize(v.Report)) {
		if strings.HasPrefix(l, " ") || len(l) < 2 {
			shown = append(shown, trunc(l, inner))
			continue
		}
		for i, part := range strings.Split(wrapText(l[2:], inner-2), "\n") {
			if i == 0 {
				shown = append(shown, l[:2]+part)
			} else {
				shown = append(shown, l[:1]+" "+part)
			}
		}
	}
	room := max(h-10, 5)
	start := min(d.offset, max(len(shown)-room, 0))
	d.offset = start
	for _, l := range shown[start:min(start+room, len(shown))] {
		style := st.Subtle
		switch {
		case strings.HasPrefix(l, "+"):
			style = st.IconDone
		case strings.HasPrefix(l, "-"):
			style = st.IconFailed
		}
		lines = append(lines, style.Render(l))
	}
	if len(lines) == 0 {
		lines = append(lines, st.Subtle.Render("no change"))
	}
	title := fmt.Sprintf("v%d against v%d", v.N, max(v.N-1, 0))
	return dialogBox(st, width, title, strings.Join(lines, "\n"), st.HelpDesc.Render("j/k scroll · g/G top/bottom · pgdn/pgup page · esc back"))
}

func (d *versionsDialog) keyMap() help.KeyMap {
	return formKeyMap{short: []key.Binding{kb([]string{"j", "k"}, "j/k", "move"), kb([]string{"enter"}, "enter", "what changed"), keyEsc}}
}

// lineDiff is a line diff of a and b: unchanged lines with two spaces,
// removed with "- ", added with "+ " (longest common subsequence; long
// reports are compared by their first 2,000 lines).
func lineDiff(a, b string) []string {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	if a == "" {
		x = nil
	}
	x, y = x[:min(len(x), 2000)], y[:min(len(y), 2000)]
	n, m := len(x), len(y)
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && x[i] == y[j]:
			out = append(out, "  "+x[i])
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			out = append(out, "+ "+y[j])
			j++
		default:
			out = append(out, "- "+x[i])
			i++
		}
	}
	return out
}
