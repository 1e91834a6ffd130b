package ui

import (
	"strings"

	"charm.land/bubbles/v2/help"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// Layout: a header line, the backend banner when there is one, the screen
// body, a notice line, and the short help. Everything is computed from the
// window size here and nowhere else.

const minWidth, minHeight = 40, 10

func (m *rootModel) bannerLines() []string {
	if m.cfg.BackendErr == nil {
		return nil
	}
	// main phrases BackendErr as the problem and its fix, in one line.
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
	switch m.screen {
	case screenRun:
		return runKeyMap{}
	case screenReport:
		return reportKeyMap{}
	}
	return sessionsKeyMap{}
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
	right := st.Subtle.Render(m.themeName)
	if n := m.liveCount(); n > 0 {
		right = st.Info.Render(itoa(n)+" running") + st.Subtle.Render(" · "+m.themeName)
	}
	left := st.Header.Render("researchtui") + st.Subtle.Render(" › ") + st.Text.Render(m.screenName())
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
	if m.notice != "" {
		if m.noticeErr {
			notice = st.Error.Render(trunc(m.notice, w))
		} else {
			notice = st.Info.Render(trunc(m.notice, w))
		}
	}
	out = append(out, padRight(notice, w))
	out = append(out, padRight(m.help.ShortHelpView(m.currentKeys().ShortHelp()), w))
	screen := strings.Join(out, "\n")
	switch {
	case m.dialog != nil:
		screen = overlay(screen, m.dialog.view(st, w, h), w, h)
	case m.showHelp:
		screen = overlay(screen, m.helpView(w, h), w, h)
	}
	return screen
}

func (m *rootModel) liveCount() int {
	n := 0
	for _, rs := range m.runs {
		if rs.live() {
			n++
		}
	}
	return n
}

// helpView is the full-help overlay of the current screen.
func (m *rootModel) helpView(w, h int) string {
	hm := m.help
	dw := dialogWidth(w, 90)
	hm.SetWidth(dw - 4)
	body := hm.FullHelpView(m.currentKeys().FullHelp())
	body += "\n\n" + m.st.Muted.Render("q/ctrl+c quit · ? or esc closes this help · T cycles the theme")
	return dialogBox(m.st, dw, "Keys — "+m.screenName(), body, "")
}
