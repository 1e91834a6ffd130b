package ui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/charmbracelet/x/ansi"
	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/themes"
)

// sessionRow is a session prepared for the list once, when it loads: the
// sanitized strings and the lower-cased haystack the filter searches, so
// filtering and drawing hundreds of rows never re-sanitizes.
type sessionRow struct {
	s        store.Session
	title    string
	question string
	model    string
	asked    string // how it was asked where not the default: "deep review de"
	hay      string
}

// Focus on the sessions screen: the question line or the list.
type sessionsFocus int

const (
	focusLine sessionsFocus = iota
	focusList
)

// maxLineRows is how many lines a long question may take on screen.
const maxLineRows = 3

// sessionsModel is the home screen's state: the question line, all
// sessions newest first, the filtered view of them and the selection.
type sessionsModel struct {
	focus  sessionsFocus
	line   lineInput // the always-visible question line
	rows   []sessionRow
	view   []int // indexes into rows that pass the filter
	cursor int   // index into view
	// pick is the session the cursor goes to when the list next holds it
	// (the report just left), whatever was selected before.
	pick      string
	offset    int // first visible row
	filter    lineInput
	filtering bool
	query     string
	loading   bool
	listed    bool // loaded at least once (runs that appear later are new)
	loads     int  // session-list loads started
	shown     int  // the newest load applied
}

func newSessionsModel(st *themes.Styles) sessionsModel {
	s := sessionsModel{line: newInput(st, "Type a research question and press enter", 60)}
	s.line.limit = runopts.MaxQuestionChars
	s.line.Focus()
	return s
}

// setFocus moves the keys between the question line and the list.
func (s *sessionsModel) setFocus(f sessionsFocus) {
	s.focus = f
	if f == focusLine {
		s.line.Focus()
	} else {
		s.line.Blur()
	}
}

func (s *sessionsModel) setSessions(list []store.Session) {
	var selID string
	if sel := s.selected(); sel != nil {
		selID = sel.s.ID
	}
	if s.pick != "" {
		selID = s.pick
	}
	s.rows = make([]sessionRow, len(list))
	for i, sess := range list {
		summary, short := askedAs(sess.Options)
		r := sessionRow{s: sess, title: sanitizeLine(sess.Title), question: sanitizeLine(sess.Question), model: sanitizeLine(sess.Model), asked: short}
		if r.title == "" {
			r.title = r.question
		}
		if r.title == "" {
			r.title = "(untitled)"
		}
		r.hay = strings.ToLower(r.title + "\x00" + r.question + "\x00" + r.model + "\x00" + r.asked + "\x00" + summary + "\x00" + statusLabel(sess.Status) + "\x00" + sess.ID)
		s.rows[i] = r
	}
	s.applyFilter()
	if selID != "" {
		for i, idx := range s.view {
			if s.rows[idx].s.ID == selID {
				s.cursor = i
				if selID == s.pick {
					s.pick = ""
				}
			}
		}
	}
}

// sessionsListed are the sessions the list holds now.
func (s *sessionsModel) sessionsListed() []store.Session {
	out := make([]store.Session, len(s.rows))
	for i, r := range s.rows {
		out[i] = r.s
	}
	return out
}

func (s *sessionsModel) applyFilter() {
	q := strings.ToLower(strings.TrimSpace(s.query))
	s.view = s.view[:0]
	for i := range s.rows {
		if q == "" || strings.Contains(s.rows[i].hay, q) {
			s.view = append(s.view, i)
		}
	}
	s.cursor = clamp(s.cursor, 0, max(len(s.view)-1, 0))
}

func (s *sessionsModel) selected() *sessionRow {
	if s.cursor < 0 || s.cursor >= len(s.view) {
		return nil
	}
	return &s.rows[s.view[s.cursor]]
}

// paste puts pasted text where typing goes: the filter while filtering,
// else the question line (a paste is a question, even onto the list).
// Line breaks become spaces, so a question pasted from a document arrives
// whole and is not started at its first line break.
func (s *sessionsModel) paste(text string) {
	if s.filtering {
		s.filter.Insert(pastedLine(text))
		s.query = s.filter.Value()
		s.applyFilter()
		return
	}
	s.setFocus(focusLine)
	s.line.Insert(pastedLine(text))
}

// sessionsKeys is the key table of the sessions screen for its focus.
func (m *rootModel) sessionsKeys() keyTable {
	s := &m.sessions
	switch {
	case s.filtering:
		return keyTable{title: "Sessions · filter", groups: [][]command{
			{
				do(sKeys.FilterDone, func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd {
					m.sessions.filtering = false
					m.sessions.filter.Blur()
					return nil
				}).footer(),
				do(sKeys.FilterClear, func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd {
					s := &m.sessions
					s.filtering, s.query = false, ""
					s.filter.SetValue("")
					s.applyFilter()
					return nil
				}).footer(),
				do(sKeys.FilterMove, func(m *rootModel, msg tea.KeyPressMsg) tea.Cmd {
					m.moveCursor(map[string]int{"up": -1, "down": 1}[msg.String()])
					return nil
				}).footer(),
			},
			editHelp(),
			typingGroup(),
		}}
	case s.focus == focusLine:
		esc, escBrief := sKeys.ClearLine, "clear"
		if s.line.Value() == "" {
			esc.SetHelp("esc", "sessions list")
			escBrief = "list"
		}
		return keyTable{title: "Sessions · question line", groups: [][]command{
			{
				do(sKeys.Ask, (*rootModel).askFromLine).footerAs("start"),
				do(sKeys.Options, (*rootModel).newResearchForm).footerAs("options"),
				do(sKeys.ToList, func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd {
					m.sessions.setFocus(focusList)
					return nil
				}).footerAs("list").whenOr(len(s.rows) > 0, "once there are sessions"),
				// esc on an empty line reaches the list's keys even before
				// there are sessions: t (theme) and q work there.
				do(esc, func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd {
					s := &m.sessions
					if s.line.Value() != "" {
						s.line.SetValue("")
					} else {
						s.setFocus(focusList)
					}
					return nil
				}).footerAs(escBrief),
			},
			editHelp(),
			typingGroup(),
		}}
	}
	sel := s.selected() != nil
	return keyTable{title: "Sessions · list", groups: [][]command{
		{
			do(nav.Up, func(m *rootModel, msg tea.KeyPressMsg) tea.Cmd {
				if m.sessions.cursor == 0 && msg.String() == "up" {
					m.sessions.setFocus(focusLine) // the line is above the list
					return nil
				}
				m.moveCursor(-1)
				return nil
			}),
			do(nav.Down, func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd { m.moveCursor(1); return nil }),
			do(nav.Top, func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd { m.sessions.cursor = 0; return nil }),
			do(nav.Bottom, func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd { m.moveCursor(len(m.sessions.view)); return nil }),
			do(nav.PageUp, func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd { m.moveCursor(-m.listHeight()); return nil }),
			do(nav.PageDown, func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd { m.moveCursor(m.listHeight()); return nil }),
		},
		{
			do(sKeys.Open, func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd { return m.openSession() }).footer().when(sel),
			do(sKeys.ToLine, func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd {
				m.sessions.setFocus(focusLine)
				return nil
			}).footerAs("ask"),
			do(sKeys.New, (*rootModel).newResearchForm).footerAs("new"),
			do(sKeys.Filter, func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd {
				s := &m.sessions
				s.filtering = true
				s.filter = newInput(m.st, "filter by title, question, model, depth, status", 40)
				s.filter.SetValue(s.query)
				s.filter.CursorEnd()
				return s.filter.Focus()
			}).footer().when(len(s.rows) > 0),
			do(sKeys.ClearFilter, func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd {
				m.sessions.query = ""
				m.sessions.applyFilter()
				return nil
			}).when(s.query != ""),
			do(sKeys.Delete, (*rootModel).deleteSelected).footer().when(sel),
			do(sKeys.Resume, func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd { return m.resumeSelected() }).footer().when(sel),
			do(sKeys.Follow, func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd { return m.toggleFollow(m.sessions.selected().s) }).when(sel),
		},
		m.globalGroup(true),
	}, legend: sessionsLegend}
}

// sessionsUnbound takes the keys the table doesn't bind: typing in the
// focused input; on the list, a key that types text moves to the question
// line and types there (a question typed from the list isn't lost).
func (m *rootModel) sessionsUnbound(msg tea.KeyPressMsg) tea.Cmd {
	s := &m.sessions
	switch {
	case s.filtering:
		s.filter.Update(msg)
		s.query = s.filter.Value()
		s.applyFilter()
	case s.focus == focusLine:
		s.line.Update(msg)
	case isText(msg):
		s.setFocus(focusLine)
		s.line.Update(msg)
	}
	return nil
}

func (m *rootModel) moveCursor(by int) {
	s := &m.sessions
	s.cursor = clamp(s.cursor+by, 0, max(len(s.view)-1, 0))
}

// askFromLine starts the question on the line with the current defaults
// (the form's last choice).
func (m *rootModel) askFromLine(tea.KeyPressMsg) tea.Cmd {
	q := strings.TrimSpace(m.sessions.line.Value())
	if q == "" {
		m.setNotice("type a question first — the sessions list is below (tab)", false)
		return nil
	}
	opt := m.cfg.Defaults
	opt.Question = q
	return m.start(opt, false)
}

// newResearchForm opens the form with what the line holds.
func (m *rootModel) newResearchForm(tea.KeyPressMsg) tea.Cmd {
	d, cmd := newNewRunDialog(m.st, m.cfg.Defaults, m.sessions.line.Value(), m.sourcesOff())
	m.sessions.line.SetValue("")
	if m.notice == pasteCutNotice {
		m.notice = ""
	}
	m.dialog = d
	return tea.Batch(cmd, loadCollectionsCmd(m.svc))
}

func (m *rootModel) deleteSelected(tea.KeyPressMsg) tea.Cmd {
	r := m.sessions.selected()
	if r == nil {
		return nil
	}
	if rs := m.runs[r.s.ID]; (rs != nil && rs.live()) || m.resuming[r.s.ID] {
		m.setNotice("that session is running; cancel it first (enter, then c)", true)
		return nil
	}
	m.dialog = newConfirmDialog("Delete session?", fmt.Sprintf("Delete “%s”? Its report and event log are removed; the sources it read stay in the knowledge base.", trunc(r.title, 60)), actDelete{id: r.s.ID}, m.now())
	return nil
}

// openSession opens the selected session where it makes sense: a live run
// on the run screen, a waiting review by resuming it (the run asks again),
// anything else as a report.
func (m *rootModel) openSession() tea.Cmd {
	r := m.sessions.selected()
	if r == nil {
		return nil
	}
	if rs := m.runs[r.s.ID]; rs != nil && !rs.closed {
		return m.showRun(rs.id)
	}
	if r.s.Status == store.StatusAwaitingReview || r.s.Status == store.StatusRunning {
		return m.resumeSelected()
	}
	return m.openReport(r.s.ID, r.title)
}

// resumeSelected resumes an interrupted, failed, cancelled or awaiting-review
// session; the run screen then shows it live.
func (m *rootModel) resumeSelected() tea.Cmd {
	r := m.sessions.selected()
	if r == nil {
		return nil
	}
	if rs := m.runs[r.s.ID]; rs != nil && !rs.closed {
		return m.showRun(rs.id)
	}
	if m.resuming[r.s.ID] {
		m.setNotice("resuming… (already asked)", false)
		return nil
	}
	switch r.s.Status {
	case store.StatusCompleted:
		m.setNotice("that session is completed; enter opens its report", false)
		return nil
	case store.StatusRunning:
		// Not this window's run: another researchtui runs it. Watch it.
		m.resuming[r.s.ID] = true
		m.setNotice("watching…", false)
		return watchRunCmd(m.ctx, m.svc, r.s)
	}
	if m.cfg.BackendErr != nil {
		if r.s.Status == store.StatusAwaitingReview {
			// Finalising the draft needs no model, so it can be done offline.
			m.dialog = newConfirmDialog("Finalise without revisions?",
				"The model backend is unreachable, so the reviewer's requests can't be carried out now. Finalise the draft as it is (y), or leave the review for later (n)?",
				actResume{s: r.s, d: &pipeline.Decision{Approve: false}}, m.now())
			return nil
		}
		m.setNotice("can't resume without the model backend — see the banner above", true)
		return nil
	}
	m.resuming[r.s.ID] = true
	m.setNotice("resuming…", false)
	return resumeRunCmd(m.ctx, m.svc, r.s, nil)
}

// showRun switches to a run's live view, reopening its pending review.
func (m *rootModel) showRun(id string) tea.Cmd {
	m.active = id
	m.goTo(screenRun)
	rs := m.runs[id]
	if rs != nil && rs.review != nil {
		m.openReview(rs)
	}
	return m.startTicking()
}

// listHeight is how many session rows fit.
func (m *rootModel) listHeight() int {
	w, h := m.bodySize()
	h -= m.questionRows(w, h)
	if m.width < 110 {
		h -= 7 // preview below the list
	}
	return max(h-2, 1)
}

// questionRows is the height of the question block: the line (up to
// maxLineRows when a long question wraps), what a start will use, and a
// blank line; on short screens the line alone.
func (m *rootModel) questionRows(w, h int) int {
	in := &m.sessions.line
	in.SetWidth(max(w-2, 10))
	n := min(in.rowsNeeded(), maxLineRows)
	if h < 14 {
		return n
	}
	return n + 2
}

// viewQuestion draws the question line and, below it, what enter starts.
func (m *rootModel) viewQuestion(w, h int) []string {
	s := &m.sessions
	st := m.st
	prompt := st.Subtle.Render("❯ ")
	s.line.placeholder = "tab here to ask a new research question"
	if s.focus == focusLine && !s.filtering {
		prompt = st.Accent.Render("❯ ")
		s.line.placeholder = "Type a research question and press enter"
	}
	n := m.questionRows(w, h)
	rows := s.line.ViewRows(min(s.line.rowsNeeded(), maxLineRows))
	var out []string
	for i, r := range rows {
		if i == 0 {
			out = append(out, prompt+r)
		} else {
			out = append(out, "  "+r)
		}
	}
	if n > len(rows) {
		d := m.cfg.Defaults
		srcs := "sources by topic"
		if !d.AutoSources && len(d.Sources) > 0 {
			srcs = strings.Join(d.Sources, ", ")
		}
		depth := d.Depth
		if depth == "" {
			depth = runopts.DepthStandard
		}
		parts := []string{sanitizeLine(d.Model), depth, srcs}
		// every setting a question from the line gets that is not the default
		if d.Kind != "" && d.Kind != runopts.KindStandard {
			parts = append(parts, d.Kind)
		}
		if d.ReviewPlan == runopts.ReviewAsk {
			parts = append(parts, "plan: ask")
		}
		if tag, err := runopts.NormalizeLanguage(d.Language); err == nil && tag != "" { // English is the default
			parts = append(parts, "in "+sanitizeLine(runopts.LanguageName(tag)))
		} else if err != nil {
			parts = append(parts, "in "+sanitizeLine(d.Language))
		}
		if len(d.Collections) > 0 {
			parts = append(parts, "library: "+sanitizeLine(strings.Join(d.Collections, ", ")))
		}
		hint, short := "  (ctrl+o changes these)", "  (ctrl+o)"
		switch {
		case s.filtering:
			hint, short = "", ""
		case s.focus != focusLine:
			hint, short = "  (n changes these)", "  (n)" // the list's key for the form
		}
		line := sanitizeLine("  " + strings.Join(parts, " · "))
		switch { // narrow: the settings first, then the key in a word, if room is left
		case ansi.StringWidth(line+hint) <= w:
		case ansi.StringWidth(line+short) <= w:
			hint = short
		default:
			hint = ""
		}
		out = append(out, st.Subtle.Render(trunc(line+hint, w)), "") // settings come from a config file
	}
	return out
}

// viewSessions draws the question line, then the list and a preview of
// the selected session: side by side when wide, stacked when narrow.
func (m *rootModel) viewSessions(w, h int) string {
	s := &m.sessions
	st := m.st
	question := m.viewQuestion(w, h)
	h = max(h-len(question), 3)
	var top []string
	switch {
	case s.filtering:
		top = append(top, st.Accent.Render("/ ")+s.filter.View())
	case s.query != "":
		top = append(top, st.Muted.Render(fmt.Sprintf("filter: %s · %d of %d · esc clears", sanitizeLine(s.query), len(s.view), len(s.rows))))
	default:
		head := st.Muted
		if s.focus == focusList {
			head = st.Heading
		}
		top = append(top, head.Render(fmt.Sprintf("Sessions (%d)", len(s.rows))))
	}
	listW, prevW, prevH := w, 0, 0
	if w >= 110 {
		listW = w * 3 / 5
		prevW = w - listW - 1
	} else {
		prevH = 7
	}
	rowsH := max(h-1-prevH, 1)
	if s.cursor < s.offset {
		s.offset = s.cursor
	}
	if s.cursor >= s.offset+rowsH {
		s.offset = s.cursor - rowsH + 1
	}
	s.offset = clamp(s.offset, 0, max(len(s.view)-rowsH, 0))
	var rows []string
	switch {
	case s.loading:
		rows = append(rows, st.Muted.Render("loading sessions…"))
	case len(s.rows) == 0:
		rows = append(rows, "", st.Text.Render("No research yet."), st.Muted.Render("Type a question on the line above and press enter."))
	case len(s.view) == 0:
		rows = append(rows, st.Muted.Render("No session matches the filter."))
	}
	for i := s.offset; i < len(s.view) && len(rows) < rowsH; i++ {
		rows = append(rows, m.sessionLine(&s.rows[s.view[i]], listW, i == s.cursor, s.focus == focusList || s.filtering))
	}
	list := padRight(strings.Join(top, " "), listW) + "\n" + fitLines(rows, listW, rowsH)
	sel := s.selected()
	q := strings.Join(question, "\n") + "\n"
	if prevW > 0 {
		prev := m.sessionPreview(sel, prevW-2, h)
		sep := strings.TrimRight(strings.Repeat(st.Subtle.Render("│")+"\n", h), "\n")
		return q + joinColumns(list, sep, " "+strings.ReplaceAll(prev, "\n", "\n "))
	}
	if sel == nil { // nothing to preview: no rule under an empty list
		return q + padRight(strings.Join(top, " "), listW) + "\n" + fitLines(rows, listW, h-1)
	}
	prev := m.sessionPreview(sel, w, prevH-1)
	return q + list + "\n" + st.Subtle.Render(strings.Repeat("─", w)) + "\n" + prev
}

// sessionLine is one list row: marker, badge, title, date, model, tokens,
// cost. Narrow screens drop model, then tokens.
func (m *rootModel) sessionLine(r *sessionRow, w int, sel, focused bool) string {
	st := m.st
	now := m.now()
	badge := st.Badge(r.s.Status).Render(padRight(statusLabel(r.s.Status), 15))
	tokens := fmtTokens(r.s.Usage.PromptTokens + r.s.Usage.CompletionTokens)
	meta := fmt.Sprintf("%10s", fmtDate(r.s.CreatedAt, now))
	if w >= 70 {
		meta += fmt.Sprintf(" %7s", tokens)
	}
	if w >= 90 {
		meta = fmt.Sprintf(" %-12s", trunc(r.model, 12)) + meta + fmt.Sprintf(" %7s", fmtCost(r.s.CostUSD))
	}
	titleW := max(w-2-17-1-1-len(meta), 4)
	marker := "  "
	// How it was asked follows the title, muted, where it is not the
	// default (two rows of one question may be a quick run and a review);
	// the title gives up its room first.
	asked := ""
	if r.asked != "" && titleW >= len(r.asked)+12 { // the title keeps 11 columns
		asked = " " + r.asked
	}
	title := padRight(trunc(livingMark(r.s)+r.title, titleW-len(asked)), titleW-len(asked))
	switch {
	case sel && focused:
		marker = st.Cursor.Render("▸ ")
		title = st.Selected.Render(title)
	case sel:
		marker = st.Subtle.Render("▸ ") // the selection, while the line has the keys
		title = st.Text.Render(title)
	default:
		title = st.Text.Render(title)
	}
	title += st.Muted.Render(asked)
	return marker + badge + " " + title + " " + st.Muted.Render(meta)
}

// joinColumns joins multi-line blocks side by side.
func joinColumns(cols ...string) string {
	split := make([][]string, len(cols))
	h := 0
	for i, c := range cols {
		split[i] = strings.Split(c, "\n")
		h = max(h, len(split[i]))
	}
	var b strings.Builder
	for y := 0; y < h; y++ {
		for i := range split {
			if y < len(split[i]) {
				b.WriteString(split[i][y])
			}
		}
		if y < h-1 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}
