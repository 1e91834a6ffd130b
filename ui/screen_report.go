package ui

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/textkit"
)

const (
	paneReport = iota
	paneSources
)

// reportModel is the report screen: the rendered report in a viewport and
// the cited sources beside it (or behind tab on narrow screens).
type reportModel struct {
	id, title string
	rep       pipeline.Report // sanitized once, when loaded
	loaded    bool
	err       string

	vp          scroller
	want        renderKey // the rendering the layout needs
	have        renderKey // the rendering in the viewport
	plain       []string  // the rendering without ANSI, for find
	focus       int
	srcCursor   int
	srcOffset   int
	finding     bool
	find        lineInput
	query       string
	matches     []int
	matchIdx    int
	paneW       int
	wide        bool // w: the report over the whole width, the sources pane hidden
	paneH       int
	sourcesW    int
	sourcesOnly bool // narrow screen showing the sources pane

	// Citation selection: a number key or ]/[ selects a source (srcCursor)
	// and the report marks its citations.
	citeSel bool
	citeIdx int        // the citation ]/[ stands on (index into marks), -1: none
	citeBuf string     // digits typed so far, for numbers above 9
	marks   []citeMark // the citations of the rendering, found lazily

	// jumpTo, when set, is the text of a line the first rendering opens
	// at, the last line that holds it: a follow-up's answer, which is
	// added at the end of the report.
	jumpTo string
}

func newReportModel(id, title string) reportModel {
	return reportModel{id: id, title: sanitizeLine(title), citeIdx: -1}
}

// sanitizeReport cleans every untrusted field once, at load, so drawing
// never has to.
func sanitizeReport(rep pipeline.Report) pipeline.Report {
	rep.Title = sanitizeLine(rep.Title)
	rep.Question = sanitizeLine(rep.Question)
	rep.Markdown = sanitize(rep.Markdown)
	rep.Flow = sanitizeFlow(rep.Flow)
	srcs := make([]report.CitedSource, len(rep.Sources))
	for i, s := range rep.Sources {
		s.Title = sanitizeLine(s.Title)
		if len(s.Authors) > 0 {
			// A copy: the caller's report must not change under it.
			authors := make([]string, len(s.Authors))
			for j, a := range s.Authors {
				authors[j] = sanitizeLine(a)
			}
			s.Authors = authors
		}
		s.Venue = sanitizeLine(s.Venue)
		s.DOI = sanitizeLine(s.DOI)
		s.ArxivID = sanitizeLine(s.ArxivID)
		s.URL = sanitizeLine(s.URL)
		s.PDFURL = sanitizeLine(s.PDFURL)
		s.Source = sanitizeLine(s.Source)
		s.Quote = sanitizeLine(s.Quote)
		s.Reference = sanitizeLine(s.Reference)
		srcs[i] = s
	}
	rep.Sources = srcs
	sup := make([]pipeline.CitationSupport, len(rep.Support))
	for i, s := range rep.Support {
		s.Sentence = sanitizeLine(s.Sentence)
		s.Passage = sanitizeLine(s.Passage)
		sup[i] = s
	}
	rep.Support = sup
	return rep
}

// openReport switches to the report screen and loads the report.
func (m *rootModel) openReport(id, title string) tea.Cmd {
	m.report = newReportModel(id, title)
	m.goTo(screenReport)
	cmds := []tea.Cmd{loadReportCmd(m.svc, id), m.relayout()}
	if s, ok := m.listed(id); ok && s.Living != nil && s.Living.Unread > 0 {
		cmds = append(cmds, markReadCmd(m.svc, id))
	}
	return tea.Batch(cmds...)
}

func (m *rootModel) onReportLoaded(msg reportLoadedMsg) tea.Cmd {
	if msg.id != m.report.id {
		return nil
	}
	if msg.err != nil {
		m.report.err = sanitizeLine(msg.err.Error())
		return nil
	}
	m.report.rep = sanitizeReport(msg.rep)
	m.report.loaded = true
	if m.report.rep.Title != "" {
		m.report.title = m.report.rep.Title
	}
	return m.relayout()
}

func (r *reportModel) onRendered(msg reportRenderedMsg) {
	if msg.key != r.want {
		return // a stale rendering (resized or themed since)
	}
	if msg.err != nil {
		r.err = "rendering the report: " + sanitizeLine(msg.err.Error())
		return
	}
	r.setRendered(msg.key, msg.out)
}

func (r *reportModel) setRendered(k renderKey, out string) {
	off, before := r.vp.YOffset(), len(r.vp.lines)
	rewrapped := r.have.width != 0 && r.have.width != k.width
	r.have = k
	r.vp.SetContent(out)
	if rewrapped && before > 0 {
		// Wrapped to another width, the text has another number of lines:
		// keep the reader at the same place in it, not at the same line.
		off = off * len(r.vp.lines) / before
	}
	r.vp.SetYOffset(off)
	r.plain = nil // stripped lazily: only find and citations need it
	r.marks, r.citeIdx = nil, -1
	if r.jumpTo != "" && before == 0 {
		r.ensurePlain()
		for i := len(r.plain) - 1; i >= 0; i-- {
			if strings.Contains(r.plain[i], r.jumpTo) {
				r.vp.SetYOffset(i)
				break
			}
		}
		r.jumpTo = ""
	}
	r.recomputeMatches()
}

// ensurePlain strips the rendering's ANSI once.
func (r *reportModel) ensurePlain() {
	if r.plain == nil {
		r.plain = make([]string, len(r.vp.lines))
		for i, l := range r.vp.lines {
			r.plain[i] = ansi.Strip(l)
		}
	}
}

// layoutReport sizes the panes and asks for a rendering at the new width;
// a cached rendering is used at once, anything else renders in a Cmd.
func (m *rootModel) layoutReport(w, h int) tea.Cmd {
	r := &m.report
	paneH := h - 2 // header, find/match line
	if w >= 110 && !r.wide {
		r.sourcesW = w * 36 / 100
		r.paneW = w - r.sourcesW - 1
	} else {
		r.sourcesW, r.paneW = w, w
	}
	r.paneH = max(paneH, 1)
	m.fitReportPane()
	if !r.loaded {
		return nil
	}
	// Keyed by the text too: a follow-up or another version of the same
	// session must never be shown from the old text's rendering.
	r.want = renderKey{id: r.id + "#" + textSig(r.rep.Markdown), width: max(r.paneW-2, 20), theme: m.themeKey()}
	if r.have == r.want {
		return nil
	}
	if out, ok := m.md.cached(r.want); ok {
		r.setRendered(r.want, out)
		return nil
	}
	rep, width := r.rep, r.want.width
	return renderCmd(m.md, r.want, func() string { return displayMarkdown(rep, width) }, m.st.Markdown)
}

// stripHeight is the height of the selected-source strip under the report
// on screens too narrow for the sources pane beside it.
const stripHeight = 5

// showStrip reports whether the report pane carries the selected-source
// strip.
func (m *rootModel) showStrip() bool {
	r := &m.report
	return r.citeSel && m.width < 110 && !r.sourcesOnly && r.paneH > stripHeight+3
}

// fitReportPane gives the viewport the pane's height less the strip.
func (m *rootModel) fitReportPane() {
	r := &m.report
	h := r.paneH
	if m.showStrip() {
		h -= stripHeight
	}
	r.vp.SetHeight(max(h, 1))
}

// reportKeys is the report screen's key table for its focus: the report
// pane scrolls, the sources pane moves the selection; citation keys work
// in both.
func (m *rootModel) reportKeys() keyTable {
	r := &m.report
	if r.finding {
		return keyTable{title: "Report · find", groups: [][]command{
			{
				do(pKeys.FindDone, func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd {
					r := &m.report
					r.finding = false
					r.query = r.find.Value()
					r.matchIdx = 0
					r.recomputeMatches()
					r.jumpToMatch()
					r.focus = paneReport
					r.sourcesOnly = false
					return nil
				}).footer(),
				do(pKeys.FindCancel, func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd { m.report.finding = false; return nil }).footer(),
			},
			editHelp(),
			typingGroup(),
		}}
	}
	srcs := len(r.rep.Sources) > 0
	sel := srcs && (r.citeSel || r.focus == paneSources)
	var moves []command
	title := "Report · report pane"
	if r.focus == paneSources {
		title = "Report · sources pane"
		move := func(by func(r *reportModel) int) func(*rootModel, tea.KeyPressMsg) tea.Cmd {
			return func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd {
				r := &m.report
				r.srcCursor = clamp(by(r), 0, max(len(r.rep.Sources)-1, 0))
				return nil
			}
		}
		moves = []command{
			do(nav.Up, move(func(r *reportModel) int { return r.srcCursor - 1 })),
			do(nav.Down, move(func(r *reportModel) int { return r.srcCursor + 1 })),
			do(nav.Top, move(func(*reportModel) int { return 0 })),
			do(nav.Bottom, move(func(r *reportModel) int { return len(r.rep.Sources) })),
		}
	} else {
		scroll := func(f func(v *scroller)) func(*rootModel, tea.KeyPressMsg) tea.Cmd {
			return func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd { f(&m.report.vp); return nil }
		}
		moves = []command{
			do(nav.Up, scroll(func(v *scroller) { v.ScrollUp(1) })),
			do(nav.Down, scroll(func(v *scroller) { v.ScrollDown(1) })),
			do(nav.Top, scroll((*scroller).GotoTop)),
			do(nav.Bottom, scroll((*scroller).GotoBottom)),
			do(nav.PageUp, scroll((*scroller).PageUp)),
			do(nav.PageDown, scroll((*scroller).PageDown)),
		}
	}
	detail := pKeys.Detail
	if r.focus == paneReport && !r.citeSel {
		detail.SetHelp("enter", "sources pane")
	}
	back := pKeys.Back
	switch {
	case r.query != "":
		back.SetHelp("esc", "clear find")
	case r.citeSel:
		back.SetHelp("esc", "clear selection")
	default:
		back.SetHelp("esc", "sessions")
	}
	return keyTable{title: title, groups: [][]command{
		moves,
		{
			do(pKeys.Cite, (*rootModel).citeKey).footerAs("source").when(srcs),
			do(pKeys.NextCite, func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd { m.stepCitation(1); return nil }).footerAs("next").when(srcs),
			do(pKeys.PrevCite, func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd { m.stepCitation(-1); return nil }).when(srcs),
			do(pKeys.CopyRef, (*rootModel).copyReference).footerAs("copy").whenOr(sel, "a source selected"),
			do(pKeys.CopyDOI, (*rootModel).copyDOI).whenOr(sel, "a source selected"),
			do(pKeys.Open, (*rootModel).openSource).whenOr(sel, "a source selected"),
			do(detail, (*rootModel).sourceDetail).when(srcs),
		},
		{
			do(pKeys.FollowUp, func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd {
				m.dialog = newFollowUpDialog(m.st, m.report.id, m.report.title)
				return nil
			}).footerAs("follow-up").when(r.loaded),
			// export next to follow-up: when a narrow footer drops hints from
			// its end, what a person does with a report stays (issue 36 #22)
			do(pKeys.Export, func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd { m.dialog = &exportDialog{}; return nil }).footer().when(r.loaded),
			do(pKeys.Versions, func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd { return loadVersionsCmd(m.svc, m.report.id) }).when(r.loaded),
			do(pKeys.Update, func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd {
				return updateRunCmd(m.ctx, m.svc, m.report.id, m.report.title)
			}).when(r.loaded),
			do(pKeys.Follow, func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd {
				s, ok := m.listed(m.report.id)
				if !ok {
					s = store.Session{ID: m.report.id}
				}
				return m.toggleFollow(s)
			}).when(r.loaded),
			do(pKeys.Timeline, func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd {
				return loadTimelineCmd(m.svc, m.report.id, m.report.title)
			}).when(r.id != ""),
			do(pKeys.Candidates, func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd {
				return loadCandidatesCmd(m.svc, m.report.id, m.report.title)
			}).when(r.id != ""),
		},
		{
			do(pKeys.Wide, func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd {
				m.report.wide = !m.report.wide
				if m.report.wide {
					m.report.focus = paneReport // the sources pane is hidden
				}
				return m.relayout()
			}).when(r.loaded && m.width >= 110),
			do(pKeys.Tab, func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd {
				r := &m.report
				r.focus = 1 - r.focus
				r.sourcesOnly = m.width < 110 && r.focus == paneSources
				m.fitReportPane()
				return nil
			}).footerAs("pane").when(srcs),
			do(pKeys.Find, func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd {
				r := &m.report
				r.finding = true
				r.find = newInput(m.st, "find in report", 40)
				r.find.SetValue(r.query)
				return r.find.Focus()
			}).footer(),
			do(pKeys.Next, func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd { m.report.stepMatch(1); return nil }).whenOr(len(r.matches) > 0, "after a find"),
			do(pKeys.Prev, func(m *rootModel, _ tea.KeyPressMsg) tea.Cmd { m.report.stepMatch(-1); return nil }).whenOr(len(r.matches) > 0, "after a find"),
			do(back, (*rootModel).reportBack).footerAs("back"),
		},
		m.globalGroup(m.width >= 100),
	}}
}

// reportUnbound types into the find input.
func (m *rootModel) reportUnbound(msg tea.KeyPressMsg) {
	if m.report.finding {
		m.report.find.Update(msg)
	}
}

// reportBack is esc: it clears the find, then the citation selection, then
// goes back to the sessions.
func (m *rootModel) reportBack(tea.KeyPressMsg) tea.Cmd {
	r := &m.report
	switch {
	case r.query != "":
		r.query, r.matches = "", nil
	case r.citeSel:
		r.citeSel, r.citeIdx = false, -1
		m.fitReportPane()
	default:
		m.goTo(screenSessions)
		// The cursor stays on the session just left, even one the list
		// has not held yet (a run started from the question line).
		m.sessions.pick = r.id
		m.sessions.setSessions(m.sessions.sessionsListed())
		m.sessions.setFocus(focusList) // enter opens it again, as the pane says
		return m.loadSessions()
	}
	return nil
}

// sourceDetail is enter: the selected source in full, or (from the report
// with nothing selected) the sources pane.
func (m *rootModel) sourceDetail(tea.KeyPressMsg) tea.Cmd {
	r := &m.report
	if r.focus == paneReport && !r.citeSel {
		r.focus = paneSources
		r.sourcesOnly = m.width < 110
		return nil
	}
	if s := r.selectedSource(); s != nil {
		m.dialog = &sourceDialog{src: *s}
	}
	return nil
}

func (m *rootModel) openSource(tea.KeyPressMsg) tea.Cmd {
	if s := m.report.selectedSource(); s != nil {
		if u := sourceURL(*s); u != "" {
			return openURLCmd(m.svc, u)
		}
		m.setNotice("this source has no web address", true)
	}
	return nil
}

func (r *reportModel) selectedSource() *report.CitedSource {
	if r.srcCursor < 0 || r.srcCursor >= len(r.rep.Sources) {
		return nil
	}
	return &r.rep.Sources[r.srcCursor]
}

// viewReport draws the report screen.
func (m *rootModel) viewReport(w, h int) string {
	st := m.st
	r := &m.report
	info := ""
	if r.loaded {
		info = textkit.Plural(len(r.rep.Sources), "source", "sources") + " · " + textkit.Plural(r.rep.Metrics.Citations, "citation", "citations")
		if n := len(r.rep.Updates); n > 0 { // a living review: its last update
			u := r.rep.Updates[n-1]
			if w < 100 { // narrow: the update matters more than the citation count
				info = fmt.Sprintf("%d sources", len(r.rep.Sources))
			}
			info = fmt.Sprintf("updated %s: %d new · ", fmtDate(u.At, m.now()), u.New) + info
		}
	}
	head := st.Title.Render(trunc(r.title, max(w-len(info)-2, 10)))
	header := head + strings.Repeat(" ", max(w-ansi.StringWidth(head)-len(info), 1)) + st.Muted.Render(info)

	var body string
	switch {
	case r.err != "":
		body = fitLines([]string{"", st.Error.Render(trunc(r.err, w)), st.Muted.Render("esc goes back; R on the sessions screen resumes unfinished sessions")}, w, r.paneH)
	case !r.loaded:
		body = fitLines([]string{"", st.Muted.Render("loading the report…")}, w, r.paneH)
	default:
		report := m.reportPane(r.paneW, r.paneH)
		switch {
		case w >= 110 && !r.wide:
			sep := strings.TrimRight(strings.Repeat(st.Subtle.Render("│")+"\n", r.paneH), "\n")
			body = joinColumns(report, sep, m.sourcesPane(r.sourcesW, r.paneH))
		case r.sourcesOnly:
			body = m.sourcesPane(w, r.paneH)
		default:
			body = report
		}
	}
	var foot string
	switch {
	case r.finding:
		foot = st.Accent.Render("find: ") + r.find.View()
	case r.query != "" && len(r.matches) == 0:
		foot = st.Warning.Render(fmt.Sprintf("no match for “%s”", sanitizeLine(r.query)))
	case r.query != "":
		foot = st.Muted.Render(fmt.Sprintf("“%s” match %d/%d · n next · N previous · esc clears", sanitizeLine(r.query), r.matchIdx+1, len(r.matches)))
	case r.loaded:
		pane := "report"
		if r.focus == paneSources {
			pane = "sources"
		}
		foot = st.Subtle.Render(fmt.Sprintf("%3.0f%% · focus: %s · tab switches", r.vp.ScrollPercent()*100, pane))
	}
	return header + "\n" + body + "\n" + padRight(foot, w)
}

func (m *rootModel) reportPane(w, h int) string {
	r := &m.report
	if r.have != r.want || r.have.width == 0 {
		return fitLines([]string{"", m.st.Muted.Render("rendering…")}, w, h)
	}
	lines := r.vp.visible()
	if len(r.matches) > 0 && r.matchIdx < len(r.matches) && r.plain != nil {
		cur := r.matches[r.matchIdx]
		if i := cur - r.vp.YOffset(); i >= 0 && i < len(lines) && cur < len(r.plain) {
			lines = append([]string(nil), lines...)
			lines[i] = highlightMatch(m.st.Selected, r.plain[cur], strings.TrimSpace(r.query))
		}
	}
	if r.citeSel {
		lines = m.markCitations(lines)
	}
	if m.showStrip() {
		return fitLines(lines, w, h-stripHeight) + "\n" + m.sourceStrip(w)
	}
	return fitLines(lines, w, h)
}

func orUntitled(title string) string {
	if title == "" {
		return "(untitled)"
	}
	return title
}

func (m *rootModel) sourcesPane(w, h int) string {
	st := m.st
	r := &m.report
	title := fmt.Sprintf("Sources (%d)", len(r.rep.Sources))
	if f := r.rep.Funnel; f.Found > 0 {
		// How the run narrowed what it found down to what it cites.
		title = fmt.Sprintf("Sources (%d cited · read %d of %d found)", len(r.rep.Sources), f.Read, f.Found)
	}
	hs := st.Muted
	if r.focus == paneSources {
		hs = st.Heading
	}
	lines := []string{hs.Render(title)}
	if len(r.rep.Sources) == 0 {
		lines = append(lines, st.Subtle.Render("no cited sources"))
		return fitLines(lines, w, h)
	}
	// Blocks per source; scroll by whole blocks to keep the cursor in view.
	// The selected source (by the cursor or a citation) is marked and
	// shown with its whole quote.
	selected := r.focus == paneSources || r.citeSel
	blocks := make([][]string, len(r.rep.Sources))
	for i := range r.rep.Sources {
		sel := selected && i == r.srcCursor
		shown, label := r.shownSource(i)
		b := sourceLines(st, shown, w-2, false, sel, label)
		for j := range b {
			switch {
			case sel && j == 0:
				b[j] = st.Cursor.Render("▸ ") + b[j]
			case sel:
				b[j] = st.Cursor.Render("┃ ") + b[j]
			default:
				b[j] = "  " + b[j]
			}
		}
		blocks[i] = append(b, "")
	}
	if r.srcCursor < r.srcOffset {
		r.srcOffset = r.srcCursor
	}
	for {
		used := 0
		for i := r.srcOffset; i <= r.srcCursor && i < len(blocks); i++ {
			used += len(blocks[i])
		}
		if used <= h-1 || r.srcOffset >= r.srcCursor {
			break
		}
		r.srcOffset++
	}
	for i := r.srcOffset; i < len(blocks) && len(lines) < h; i++ {
		lines = append(lines, blocks[i]...)
	}
	return fitLines(lines, w, h)
}

// textSig is a short fingerprint of a report's text, for the render cache.
func textSig(md string) string {
	h := fnv.New64a()
	h.Write([]byte(md))
	return strconv.FormatUint(h.Sum64(), 36)
}
