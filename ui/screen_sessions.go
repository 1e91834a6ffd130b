package ui

import (
	"fmt"
	"strings"
	"unicode"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/researchtui/researchtui/pipeline"
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
	hay      string
}

// sessionsModel is the home screen's state: all sessions newest first, the
// filtered view of them and the selection.
type sessionsModel struct {
	rows      []sessionRow
	view      []int // indexes into rows that pass the filter
	cursor    int   // index into view
	offset    int   // first visible row
	filter    lineInput
	filtering bool
	query     string
	loading   bool
}

func newSessionsModel() sessionsModel {
	return sessionsModel{}
}

func (s *sessionsModel) setSessions(list []store.Session) {
	var selID string
	if sel := s.selected(); sel != nil {
		selID = sel.s.ID
	}
	s.rows = make([]sessionRow, len(list))
	for i, sess := range list {
		r := sessionRow{s: sess, title: sanitizeLine(sess.Title), question: sanitizeLine(sess.Question), model: sanitizeLine(sess.Model)}
		if r.title == "" {
			r.title = r.question
		}
		if r.title == "" {
			r.title = "(untitled)"
		}
		r.hay = strings.ToLower(r.title + "\x00" + r.question + "\x00" + r.model + "\x00" + statusLabel(sess.Status) + "\x00" + sess.ID)
		s.rows[i] = r
	}
	s.applyFilter()
	if selID != "" {
		for i, idx := range s.view {
			if s.rows[idx].s.ID == selID {
				s.cursor = i
			}
		}
	}
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

func (s *sessionsModel) paste(m *rootModel, text string) tea.Cmd {
	if s.filtering {
		s.filter.SetValue(s.filter.Value() + sanitizeLine(text))
		s.query = s.filter.Value()
		s.applyFilter()
		return nil
	}
	d, cmd := newNewRunDialog(m.st, m.cfg.Defaults, sanitizeLine(text))
	m.dialog = d
	return cmd
}

// sessionsKey handles keys on the home screen.
func (m *rootModel) sessionsKey(msg tea.KeyPressMsg) tea.Cmd {
	s := &m.sessions
	if s.filtering {
		switch msg.String() {
		case "esc":
			s.filtering, s.query = false, ""
			s.filter.SetValue("")
			s.applyFilter()
			return nil
		case "enter":
			s.filtering = false
			s.filter.Blur()
			return nil
		case "up", "down":
			// fall through to navigation below
		default:
			s.filter.Update(msg)
			s.query = s.filter.Value()
			s.applyFilter()
			return nil
		}
	}
	switch {
	case key.Matches(msg, gKeys.Quit):
		return m.quit()
	case key.Matches(msg, nav.Up):
		s.cursor = max(s.cursor-1, 0)
	case key.Matches(msg, nav.Down):
		s.cursor = min(s.cursor+1, max(len(s.view)-1, 0))
	case key.Matches(msg, nav.Top):
		s.cursor = 0
	case key.Matches(msg, nav.Bottom):
		s.cursor = max(len(s.view)-1, 0)
	case msg.String() == "pgdown" || msg.String() == "ctrl+d":
		s.cursor = min(s.cursor+m.listHeight(), max(len(s.view)-1, 0))
	case msg.String() == "pgup" || msg.String() == "ctrl+u":
		s.cursor = max(s.cursor-m.listHeight(), 0)
	case key.Matches(msg, sKeys.Filter):
		s.filtering = true
		s.filter = newInput(m.st, "filter by title, question, model, status", 40)
		s.filter.SetValue(s.query)
		s.filter.CursorEnd()
		return s.filter.Focus()
	case key.Matches(msg, sKeys.Back):
		if s.query != "" {
			s.query = ""
			s.applyFilter()
		}
	case key.Matches(msg, sKeys.New):
		d, cmd := newNewRunDialog(m.st, m.cfg.Defaults, "")
		m.dialog = d
		return cmd
	case key.Matches(msg, sKeys.Open):
		return m.openSession()
	case key.Matches(msg, sKeys.Delete):
		if r := s.selected(); r != nil {
			if rs := m.runs[r.s.ID]; (rs != nil && rs.live()) || m.resuming[r.s.ID] {
				m.setNotice("that session is running; cancel it first (enter, then c)", true)
				return nil
			}
			m.dialog = newConfirmDialog("Delete session?", fmt.Sprintf("Delete “%s”? Its report and event log are removed; the sources it read stay in the knowledge base.", trunc(r.title, 60)), actDelete{id: r.s.ID}, m.now())
		}
	case key.Matches(msg, sKeys.Resume):
		return m.resumeSelected()
	default:
		// Just typing starts a new research with what was typed.
		if t := msg.Text; t != "" && msg.Mod&^tea.ModShift == 0 && isPrintable(t) {
			d, cmd := newNewRunDialog(m.st, m.cfg.Defaults, t)
			m.dialog = d
			return cmd
		}
	}
	return nil
}

func isPrintable(s string) bool {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
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
	if r.s.Status == store.StatusAwaitingReview {
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
		m.setNotice("that session is marked running by another process", true)
		return nil
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
	m.screen = screenRun
	rs := m.runs[id]
	if rs != nil && rs.review != nil {
		m.openReview(rs)
	}
	return m.startTicking()
}

// listHeight is how many session rows fit.
func (m *rootModel) listHeight() int {
	_, h := m.bodySize()
	if m.width < 110 {
		h -= 7 // preview below the list
	}
	return max(h-2, 1)
}

// viewSessions draws the list and a preview of the selected session: side
// by side when wide, stacked when narrow.
func (m *rootModel) viewSessions(w, h int) string {
	s := &m.sessions
	st := m.st
	var top []string
	switch {
	case s.filtering:
		top = append(top, st.Accent.Render("/ ")+s.filter.View())
	case s.query != "":
		top = append(top, st.Muted.Render(fmt.Sprintf("filter: %s · %d of %d · esc clears", sanitizeLine(s.query), len(s.view), len(s.rows))))
	default:
		top = append(top, st.Heading.Render(fmt.Sprintf("Sessions (%d)", len(s.rows)))+st.Subtle.Render("  n new · type a question · / filter"))
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
		rows = append(rows, "", st.Text.Render("No research yet."), st.Muted.Render("Type a question (or press n) to start one."))
	case len(s.view) == 0:
		rows = append(rows, st.Muted.Render("No session matches the filter."))
	}
	for i := s.offset; i < len(s.view) && len(rows) < rowsH; i++ {
		rows = append(rows, m.sessionLine(&s.rows[s.view[i]], listW, i == s.cursor))
	}
	list := padRight(strings.Join(top, " "), listW) + "\n" + fitLines(rows, listW, rowsH)
	sel := s.selected()
	if prevW > 0 {
		prev := m.sessionPreview(sel, prevW-2, h)
		sep := strings.TrimRight(strings.Repeat(st.Subtle.Render("│")+"\n", h), "\n")
		return joinColumns(list, sep, " "+strings.ReplaceAll(prev, "\n", "\n "))
	}
	prev := m.sessionPreview(sel, w, prevH-1)
	return list + "\n" + st.Subtle.Render(strings.Repeat("─", w)) + "\n" + prev
}

// sessionLine is one list row: marker, badge, title, date, model, tokens,
// cost. Narrow screens drop model, then tokens.
func (m *rootModel) sessionLine(r *sessionRow, w int, sel bool) string {
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
	titleW := w - 2 - 17 - 1 - 1 - len(meta)
	marker := "  "
	title := padRight(r.title, max(titleW, 4))
	if sel {
		marker = st.Cursor.Render("▸ ")
		title = st.Selected.Render(title)
	} else {
		title = st.Text.Render(title)
	}
	return marker + badge + " " + title + " " + st.Muted.Render(meta)
}

// sessionPreview summarises the selected session (from the list data only:
// drawing must not read the store).
func (m *rootModel) sessionPreview(r *sessionRow, w, h int) string {
	st := m.st
	if r == nil || h <= 0 {
		return fitLines(nil, w, h)
	}
	s := r.s
	var lines []string
	for _, l := range strings.Split(wrapText(r.question, w), "\n") {
		lines = append(lines, st.Title.Render(l))
	}
	lines = append(lines, "")
	kv := func(k, v string) string { return st.Muted.Render(padRight(k, 10)) + st.Text.Render(v) }
	lines = append(lines, kv("status", statusLabel(s.Status))+stageNote(st, s))
	lines = append(lines, kv("created", s.CreatedAt.In(m.now().Location()).Format("2006-01-02 15:04")))
	lines = append(lines, kv("model", r.model+st.Subtle.Render(" · embed "+sanitizeLine(s.EmbedModel))))
	lines = append(lines, kv("tokens", fmt.Sprintf("%s prompt · %s completion · %s embed", fmtTokens(s.Usage.PromptTokens), fmtTokens(s.Usage.CompletionTokens), fmtTokens(s.Usage.EmbeddingTokens))))
	lines = append(lines, kv("cost", fmtCost(s.CostUSD)))
	if s.Warnings > 0 {
		lines = append(lines, kv("warnings", fmt.Sprint(s.Warnings)))
	}
	if e := sanitizeLine(s.Error); e != "" {
		lines = append(lines, st.Error.Render(trunc("error: "+e, w)))
	}
	lines = append(lines, "", st.Subtle.Render(actionHint(s.Status)))
	if w < 100 && h < 10 { // stacked preview: compact
		lines = []string{
			st.Title.Render(trunc(r.question, w)),
			kv("status", statusLabel(s.Status)) + stageNote(st, s) + st.Muted.Render(" · "+r.model+" · "+fmtCost(s.CostUSD)),
			kv("tokens", fmt.Sprintf("%s prompt · %s completion", fmtTokens(s.Usage.PromptTokens), fmtTokens(s.Usage.CompletionTokens))),
		}
		if e := sanitizeLine(s.Error); e != "" {
			lines = append(lines, st.Error.Render(trunc("error: "+e, w)))
		}
		lines = append(lines, st.Subtle.Render(actionHint(s.Status)))
	}
	return fitLines(lines, w, h)
}

func stageNote(st *themes.Styles, s store.Session) string {
	if s.Stage == "" || s.Status == store.StatusCompleted {
		return ""
	}
	return st.Subtle.Render(" (at " + sanitizeLine(s.Stage) + ")")
}

func actionHint(status string) string {
	switch status {
	case store.StatusCompleted:
		return "enter: read the report"
	case store.StatusAwaitingReview:
		return "enter or R: decide the review"
	case store.StatusInterrupted, store.StatusFailed, store.StatusCancelled:
		return "R: resume from the last checkpoint · enter: read what exists"
	case store.StatusRunning:
		return "running — in this window it shows live; elsewhere it belongs to another process"
	}
	return ""
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
