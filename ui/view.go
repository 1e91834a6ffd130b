package ui

import (
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/researchtui/researchtui/themes"
)

// Layout: a header line, the backend banner when there is one, the screen
// body, a notice line, and the short help. Everything is computed from the
// window size here and nowhere else.

const minWidth, minHeight = 40, 10

func (m *rootModel) bannerLines() []string {
	if m.cfg.BackendErr == nil {
		return nil
	}
	// ui/cli phrases BackendErr as the problem and its fix, in one line.
	msg := "⚠ " + sanitizeLine(m.cfg.BackendErr.Error())
	fix := "Stored sessions can still be browsed; new research needs the model backend (`researchtui doctor` checks it)"
	if line := m.pullLine(); line != "" {
		return []string{m.st.Banner.Render(padRight(msg, m.width-2)), line}
	}
	return []string{m.st.Banner.Render(padRight(msg, m.width-2)), m.st.Warning.Render(trunc(fix, m.width))}
}

// bodySize is the space left for the current screen.
func (m *rootModel) bodySize() (int, int) {
	h := m.height - 3 - len(m.bannerLines()) // header, notice, help
	return m.width, max(h, 3)
}

// relayout re-derives sizes after a resize or theme change.
func (m *rootModel) relayout() tea.Cmd {
	w, h := m.bodySize()
	m.help.SetWidth(w)
	if m.screen == screenReport || m.report.id != "" {
		return m.layoutReport(w, h)
	}
	return nil
}

func (m *rootModel) screenName() string {
	switch m.screen {
	case screenRun:
		return "Run"
	case screenReport:
		return "Report"
	}
	return "Sessions"
}

func (m *rootModel) currentKeys() help.KeyMap {
	if m.dialog != nil {
		return m.dialog.keyMap()
	}
	if m.showHelp {
		return formKeyMap{short: []key.Binding{kb([]string{"esc", "?", "q"}, "esc/?", "close help")}}
	}
	return m.keys()
}

// View draws the whole screen.
func (m *rootModel) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.WindowTitle = "researchtui"
	return v
}

// render is View's content, separate so tests and benchmarks can call it.
func (m *rootModel) render() string {
	if m.quitting {
		return ""
	}
	w, h := m.width, m.height
	st := m.st
	if w < minWidth || h < minHeight {
		return st.Warning.Render(trunc("researchtui needs at least 40×10; enlarge the window", w))
	}
	var out []string
	left := st.Header.Render("researchtui") + st.Subtle.Render(" › ") + st.Text.Render(m.screenName())
	right := m.headerRight(w - lipgloss.Width(left) - 1)
	out = append(out, left+strings.Repeat(" ", max(w-lipgloss.Width(left)-lipgloss.Width(right), 1))+right)
	out = append(out, m.bannerLines()...)
	bw, bh := m.bodySize()
	var body string
	switch m.screen {
	case screenRun:
		body = m.viewRun(bw, bh)
	case screenReport:
		body = m.viewReport(bw, bh)
	default:
		body = m.viewSessions(bw, bh)
	}
	out = append(out, fitLines(strings.Split(body, "\n"), bw, bh))
	notice := ""
	if n := m.shownNotice(); n != "" {
		if m.noticeErr {
			notice = st.Error.Render(trunc(n, w))
		} else {
			notice = st.Info.Render(trunc(n, w))
		}
	}
	out = append(out, padRight(notice, w))
	out = append(out, padRight(footerLine(st, m.currentKeys().ShortHelp(), w), w))
	screen := strings.Join(out, "\n")
	switch {
	case m.dialog != nil:
		screen = overlay(screen, m.dialog.view(st, w, h), w, h)
	case m.showHelp:
		screen = overlay(screen, m.helpView(w, h), w, h)
	}
	return screen
}

// themeLabel is the theme as the header names it: "auto: dark" when the
// terminal's background chose it, so a t from auto to dark is seen.
func (m *rootModel) themeLabel() string {
	if m.followsBackground() {
		return "auto: " + m.themeName
	}
	return m.themeName
}

// headerRight is the header's right side within room cells: the live
// runs, working and awaiting review, and the theme, shortened as the
// terminal narrows.
func (m *rootModel) headerRight(room int) string {
	st := m.st
	running, waiting := m.liveCounts()
	if running+waiting == 0 {
		return st.Subtle.Render(m.themeLabel())
	}
	var long, short []string
	if running > 0 {
		long = append(long, itoa(running)+" running")
		short = append(short, itoa(running)+" running")
	}
	if waiting > 0 {
		long = append(long, itoa(waiting)+" awaiting review")
		short = append(short, itoa(waiting)+" to review")
	}
	for _, c := range []string{strings.Join(long, " · "), strings.Join(short, " · ")} {
		if out := st.Info.Render(c) + st.Subtle.Render(" · "+m.themeLabel()); lipgloss.Width(out) <= room {
			return out
		}
		if lipgloss.Width(c) <= room {
			return st.Info.Render(c)
		}
	}
	return st.Info.Render(itoa(running+waiting) + " live")
}

// liveCounts splits the live runs into those working and those waiting
// for the person's review decision: the header says which.
func (m *rootModel) liveCounts() (running, waiting int) {
	for _, rs := range m.runs {
		switch {
		case !rs.live():
		case rs.status == "awaiting_review":
			waiting++
		default:
			running++
		}
	}
	return running, waiting
}

// helpView is the full-help overlay: the current screen's key table, the
// same one that dispatches its keys.
func (m *rootModel) helpView(w, h int) string {
	t := m.keys()
	dw := dialogWidth(w, 96)
	inner := dw - m.st.Dialog.GetHorizontalFrameSize()
	body := helpColumns(m.st, t.FullHelp(), inner)
	if t.legend != "" {
		body += "\n\n" + m.st.Subtle.Render(wrapText(t.legend, inner))
	}
	if lines := strings.Split(body, "\n"); len(lines) > h-6 && h > 8 {
		body = strings.Join(append(lines[:h-7], m.st.Subtle.Render("… (a larger window shows every key)")), "\n")
	}
	return dialogBox(m.st, dw, "Keys — "+t.title, body, m.st.Muted.Render("esc or ? closes this help"))
}

// footerLine draws key hints in one line of width w. When they don't fit,
// hints before the last two are dropped from the end, so the way back,
// help and quit always show (help lists everything).
func footerLine(st *themes.Styles, bs []key.Binding, w int) string {
	const sep = " • "
	var items []string
	for _, b := range bs {
		if b.Enabled() {
			h := b.Help()
			items = append(items, st.HelpKey.Render(h.Key)+" "+st.HelpDesc.Render(h.Desc))
		}
	}
	line := func() string { return strings.Join(items, st.HelpSep.Render(sep)) }
	for len(items) > 2 && ansi.StringWidth(line()) > w {
		items = append(items[:len(items)-3], items[len(items)-2:]...)
	}
	if ansi.StringWidth(line()) > w {
		return ansi.Truncate(line(), w, "…")
	}
	return line()
}

// helpColumns lays groups of keys out as columns, starting a new band of
// columns below when the next one doesn't fit: unlike help.Model's full
// view, which drops the columns that don't fit, every key stays visible.
func helpColumns(st *themes.Styles, groups [][]key.Binding, w int) string {
	const gap = 3
	type column struct {
		lines []string
		width int
	}
	var cols []column
	for _, g := range groups {
		kw := 0
		for _, b := range g {
			kw = max(kw, ansi.StringWidth(b.Help().Key))
		}
		var c column
		for _, b := range g {
			h := b.Help()
			line := st.HelpKey.Render(padRight(h.Key, kw)) + " " + st.HelpDesc.Render(h.Desc)
			if ansi.StringWidth(line) > w {
				line = ansi.Truncate(line, w, "…")
			}
			c.lines = append(c.lines, line)
			c.width = max(c.width, ansi.StringWidth(line))
		}
		cols = append(cols, c)
	}
	var bands []string
	for i := 0; i < len(cols); {
		j, used := i, 0
		for j < len(cols) && (j == i || used+gap+cols[j].width <= w) {
			if j > i {
				used += gap
			}
			used += cols[j].width
			j++
		}
		parts := make([]string, 0, j-i)
		for k := i; k < j; k++ {
			block := make([]string, len(cols[k].lines))
			for n, l := range cols[k].lines {
				block[n] = padRight(l, cols[k].width)
				if k < j-1 {
					block[n] += strings.Repeat(" ", gap)
				}
			}
			parts = append(parts, strings.Join(block, "\n"))
		}
		bands = append(bands, joinBlocks(parts))
		i = j
	}
	return strings.Join(bands, "\n\n")
}

// joinBlocks is joinColumns for blocks of uneven height: short ones are
// padded to their width so later columns stay aligned.
func joinBlocks(blocks []string) string {
	split := make([][]string, len(blocks))
	widths := make([]int, len(blocks))
	h := 0
	for i, b := range blocks {
		split[i] = strings.Split(b, "\n")
		for _, l := range split[i] {
			widths[i] = max(widths[i], ansi.StringWidth(l))
		}
		h = max(h, len(split[i]))
	}
	var b strings.Builder
	for y := 0; y < h; y++ {
		for i := range split {
			if y < len(split[i]) {
				b.WriteString(padRight(split[i][y], widths[i]))
			} else if i < len(split)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]))
			}
		}
		if y < h-1 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}
