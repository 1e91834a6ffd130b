package ui

import (
	"context"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/themes"
)

type screen int

const (
	screenSessions screen = iota
	screenRun
	screenReport
)

// options are test seams: a fixed clock and colour choice make goldens
// deterministic.
type options struct {
	now     func() time.Time
	noColor bool
	darkBG  *bool // nil: ask the terminal
	tmux    bool  // inside tmux: copying needs its set-clipboard on
}

// rootModel is the root and only tea.Model. Screens and dialogs are plain
// structs it owns and calls; it routes keys (dialog first, then the help
// overlay, then the screen), owns layout, and turns dialog actions into Cmds.
type rootModel struct {
	ctx  context.Context
	svc  services
	cfg  Config
	now  func() time.Time
	opts options

	width, height int
	themeName     string // what is shown: a palette name
	configured    string // what config asked for ("auto" allowed)
	darkBG        bool
	noColor       bool
	st            *themes.Styles
	help          help.Model
	showHelp      bool
	rawOutput     bool // J: the run screen's output pane shows the raw stream

	screen   screen
	sessions sessionsModel
	runs     map[string]*runView
	active   string // the run shown on the run screen
	// resuming are sessions whose resume Cmd is out and whose runStartedMsg
	// hasn't arrived: further resumes (R R, enter then R) are refused.
	resuming map[string]bool
	report   reportModel
	dialog   dialog
	md       *mdRenderer

	notice    string // one-line feedback (exported to…, errors)
	noticeErr bool
	noticeAt  time.Time // when the notice was set: news fades (noticeLife)
	// updates counts messages; noticeUpdate is the one that set the notice.
	updates, noticeUpdate int
	tickGen               int
	ticking               bool
	changes               <-chan struct{} // sessions changed somewhere (nil: nobody tells)
	startedQ              bool            // the Config.Question was started
	pull                  pullState
	quitting              bool
	// starting: a start Cmd is out and its runStartedMsg hasn't arrived, so
	// a second enter doesn't start the same question twice.
	starting bool
	// fromForm is the form's choice of the start in flight (nil: started
	// from the question line): remembered once the run has started, so a
	// choice that cannot start one (a model not installed) is not.
	fromForm    FormChoice
	saving      bool      // a settings write is under way
	pendingSave *Settings // settings to write after it
}

func newModel(ctx context.Context, cfg Config, svc services, o options) *rootModel {
	if o.now == nil {
		o.now = time.Now
	}
	m := &rootModel{
		ctx: ctx, svc: svc, cfg: cfg, now: o.now, opts: o,
		configured: cfg.Theme, noColor: o.noColor, darkBG: true,
		runs:     map[string]*runView{},
		resuming: map[string]bool{},
		md:       newMDRenderer(),
		help:     help.New(),
		width:    80, height: 24,
	}
	if o.darkBG != nil {
		m.darkBG = *o.darkBG
	}
	m.applyTheme(themes.Resolve(cfg.Theme, m.darkBG).Name)
	m.sessions = newSessionsModel(m.st)
	m.sessions.loading = true
	if cfg.Notice != "" {
		m.setNotice(cfg.Notice, true)
	}
	if cfg.BackendErr != nil {
		// No new research without the backend: browsing is what works, and
		// the banner's advice p (download the models) is a key of the list.
		// Otherwise the question line has the keys.
		m.sessions.setFocus(focusList)
	}
	return m
}

// applyTheme rebuilds every style from the palette; rendered reports are
// keyed by theme, so the report re-renders in the new colours.
func (m *rootModel) applyTheme(name string) {
	p, ok := themes.Lookup(name)
	if !ok {
		p = themes.Resolve(name, m.darkBG)
	}
	m.themeName = p.Name
	m.st = themes.Build(p, m.noColor)
	m.sessions.line.restyle(m.st)
	m.help.Styles = help.Styles{
		Ellipsis: m.st.HelpSep, ShortKey: m.st.HelpKey, ShortDesc: m.st.HelpDesc, ShortSeparator: m.st.HelpSep,
		FullKey: m.st.HelpKey, FullDesc: m.st.HelpDesc, FullSeparator: m.st.HelpSep,
	}
}

func (m *rootModel) themeKey() string {
	if m.noColor {
		return m.themeName + "/nocolor"
	}
	return m.themeName
}

// Init loads the session list and, if asked, starts the question at once.
func (m *rootModel) Init() tea.Cmd {
	cmds := []tea.Cmd{m.loadSessions()}
	if m.changes = m.svc.Changes(m.ctx); m.changes != nil {
		cmds = append(cmds, waitChangesCmd(m.changes))
	}
	if m.opts.darkBG == nil && m.followsBackground() {
		cmds = append(cmds, tea.RequestBackgroundColor)
	}
	if q := strings.TrimSpace(m.cfg.Question); q != "" && !m.startedQ {
		m.startedQ = true
		opt := m.cfg.Defaults
		opt.Question = q
		cmds = append(cmds, startRunCmd(m.ctx, m.svc, opt))
	}
	return tea.Batch(cmds...)
}

// liveHandles are the runs still going, for shutdown.
func (m *rootModel) liveHandles() []runHandle {
	var out []runHandle
	for _, rs := range m.runs {
		if rs.h != nil && !rs.closed {
			out = append(out, rs.h)
		}
	}
	return out
}

// Update routes one message. Async results are handled first (they may
// arrive on any screen), then keys go to the open dialog, the help overlay
// or the current screen.
func (m *rootModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	m.updates++
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		return m, m.relayout()
	case tea.BackgroundColorMsg:
		m.darkBG = msg.IsDark()
		if m.followsBackground() {
			m.applyTheme(themes.Resolve(themes.Auto, m.darkBG).Name)
			return m, m.relayout()
		}
		return m, nil
	case sessionsChangedMsg:
		// A run here or in another researchtui changed a session.
		return m, tea.Batch(m.loadSessions(), waitChangesCmd(m.changes))
	case sessionsLoadedMsg:
		if msg.seq < m.sessions.shown {
			return m, nil // a newer list is already on screen
		}
		m.sessions.shown = msg.seq
		m.sessions.loading = false
		if msg.err != nil {
			m.setNotice("reading sessions: "+msg.err.Error(), true)
			return m, nil
		}
		m.noticeRunsElsewhere(msg.sessions)
		m.sessions.setSessions(msg.sessions)
		if len(msg.sessions) == 0 && len(m.cfg.MissingModels) == 0 {
			m.sessions.setFocus(focusLine) // nothing to browse
		}
		return m, nil
	case versionsLoadedMsg:
		if msg.err != nil {
			m.setNotice("versions: "+msg.err.Error(), true)
			return m, nil
		}
		m.dialog = newVersionsDialog(msg.versions)
		return m, nil
	case timelineLoadedMsg:
		if msg.err != nil {
			m.setNotice("timeline: "+msg.err.Error(), true)
			return m, nil
		}
		m.showHelp = false
		m.dialog = newTimelineDialog(msg.title, msg.tl)
		return m, nil
	case candidatesLoadedMsg:
		return m, m.onCandidatesLoaded(msg)
	case collectionsLoadedMsg:
		if d, ok := m.dialog.(*newRunDialog); ok {
			d.setCollections(msg)
		}
		return m, nil
	case runStartedMsg:
		return m, m.onRunStarted(msg)
	case runEventsMsg:
		return m, m.onRunEvents(msg)
	case reportLoadedMsg:
		return m, m.onReportLoaded(msg)
	case reportRenderedMsg:
		m.report.onRendered(msg)
		return m, nil
	case followedMsg:
		return m, m.onFollowed(msg)
	case deletedMsg:
		if msg.err != nil {
			m.setNotice("delete failed: "+msg.err.Error(), true)
		} else {
			m.setNotice("session deleted", false)
		}
		return m, m.loadSessions()
	case decidedMsg:
		if msg.err != nil {
			m.setNotice("review decision: "+msg.err.Error(), true)
		}
		return m, nil
	case exportedMsg:
		if msg.err != nil {
			m.setNotice("export failed: "+msg.err.Error(), true)
		} else {
			m.setNotice("exported to "+msg.path, false)
		}
		return m, nil
	case openedMsg:
		if msg.err != nil {
			m.setNotice("could not open "+sanitizeLine(msg.url)+" ("+msg.err.Error()+") — y copies the reference, Y the DOI", true)
		} else {
			m.setNotice("opened "+sanitizeLine(msg.url)+" in the browser", false)
		}
		return m, nil
	case tickMsg:
		if msg.gen != m.tickGen {
			return m, nil
		}
		if rs := m.runs[m.active]; m.screen == screenRun && rs != nil && rs.live() {
			return m, tickCmd(m.tickGen)
		}
		m.ticking = false
		return m, nil
	case pullProgressMsg:
		return m, m.onPullProgress(msg)
	case pullDoneMsg:
		m.onPullDone(msg)
		return m, nil
	case settingsSavedMsg:
		m.saving = false
		if msg.err != nil {
			m.setNotice("could not save settings: "+msg.err.Error(), true)
		}
		return m, m.flushSave()
	case tea.KeyPressMsg:
		return m, m.onKey(msg)
	case tea.PasteMsg:
		if m.dialog != nil {
			return m, m.dialog.paste(msg.Content)
		}
		switch m.screen {
		case screenSessions:
			before := utf8.RuneCountInString(m.sessions.line.Value())
			m.sessions.paste(msg.Content)
			switch {
			case !m.sessions.filtering && before+utf8.RuneCountInString(sanitizeLine(pastedLine(msg.Content))) > runopts.MaxQuestionChars:
				m.setNotice(pasteCutNotice, false)
			case m.notice == pasteCutNotice: // an earlier paste's, not this one's
				m.notice = ""
			}
		case screenReport:
			if m.report.finding {
				m.report.find.Insert(pastedLine(msg.Content))
			}
		}
	}
	return m, nil
}

// onKey routes a key: ctrl+c first (it works everywhere), then the open
// dialog, the help overlay, and the current screen's key table; a key the
// table doesn't bind goes to the focused text input, if any.
func (m *rootModel) onKey(msg tea.KeyPressMsg) tea.Cmd {
	if key.Matches(msg, gKeys.QuitNow) {
		return m.ctrlC()
	}
	if m.dialog != nil {
		act, keep, cmd := m.dialog.handle(msg, m.now())
		if !keep {
			m.dialog = nil
		}
		return tea.Batch(cmd, m.do(act))
	}
	if m.showHelp {
		if key.Matches(msg, gKeys.Help, gKeys.Quit, keyEsc) {
			m.showHelp = false
		}
		return nil
	}
	if m.screen == screenReport && !key.Matches(msg, pKeys.Cite) {
		m.report.citeBuf = "" // a number is typed in one go
	}
	if cmd, ok := m.keys().dispatch(m, msg); ok {
		return cmd
	}
	switch m.screen {
	case screenSessions:
		return m.sessionsUnbound(msg)
	case screenReport:
		m.reportUnbound(msg)
	}
	return nil
}

// keys is the key table of the current screen and focus: what Update
// dispatches and what the footer and the help overlay show.
func (m *rootModel) keys() keyTable {
	switch m.screen {
	case screenRun:
		return m.runKeys()
	case screenReport:
		return m.reportKeys()
	}
	return m.sessionsKeys()
}

func (m *rootModel) openHelp(tea.KeyPressMsg) tea.Cmd {
	m.showHelp = true
	return nil
}

func (m *rootModel) canPull() bool {
	return m.screen == screenSessions && len(m.cfg.MissingModels) > 0 && !m.pull.active
}

func (m *rootModel) pullKey(tea.KeyPressMsg) tea.Cmd { return m.startPull() }

// cycleTheme shows the next theme and remembers it for the next session.
// After the last theme comes auto (the theme follows the terminal's
// background again), so no choice is a dead end.
func (m *rootModel) cycleTheme(tea.KeyPressMsg) tea.Cmd {
	next, notice := themes.Names()[0], ""
	if !m.followsBackground() {
		if n := themes.Next(m.themeName); n != next {
			next = n
		} else {
			next = themes.Auto
		}
	}
	if next == themes.Auto {
		m.applyTheme(themes.Resolve(themes.Auto, m.darkBG).Name)
		notice = "theme: auto (" + m.themeName + ", as the terminal's background)"
	} else {
		m.applyTheme(next)
		notice = "theme: " + m.themeName
	}
	m.configured = next
	m.setNotice(notice, false)
	return tea.Batch(m.relayout(), m.queueSave(Settings{Theme: next}))
}

// followsBackground says whether the theme follows the terminal's
// background (the configured theme is auto or unset).
func (m *rootModel) followsBackground() bool {
	return m.configured == "" || strings.EqualFold(m.configured, themes.Auto)
}

// quitKey is q: with runs going, it asks first.
func (m *rootModel) quitKey(tea.KeyPressMsg) tea.Cmd { return m.requestQuit() }

// ctrlC quits at once when nothing is running or when the quit question
// is already open (ctrl+c twice); with runs going it asks first.
func (m *rootModel) ctrlC() tea.Cmd {
	if _, ok := m.dialog.(*quitDialog); ok {
		return m.quit()
	}
	return m.requestQuit()
}

func (m *rootModel) requestQuit() tea.Cmd {
	var live []*runView
	for _, rs := range m.runs {
		if rs.live() {
			live = append(live, rs)
		}
	}
	if len(live) == 0 {
		return m.quit()
	}
	sort.Slice(live, func(i, j int) bool { return live[i].started.Before(live[j].started) })
	m.showHelp = false
	m.dialog = newQuitDialog(live, m.dialog, m.now())
	return nil
}

func (m *rootModel) quit() tea.Cmd {
	m.quitting = true
	return tea.Quit
}

// queueSave writes what the TUI remembers (Settings) in a Cmd, one write at a
// time: what changes while a write is under way is merged and written
// after it, so the file ends with the last choice.
func (m *rootModel) queueSave(s Settings) tea.Cmd {
	if m.cfg.SaveSettings == nil {
		return nil
	}
	if m.pendingSave == nil {
		m.pendingSave = &Settings{}
	}
	if s.Theme != "" {
		m.pendingSave.Theme = s.Theme
	}
	if s.Form != nil {
		m.pendingSave.Form = s.Form
	}
	if m.saving {
		return nil
	}
	return m.flushSave()
}

func (m *rootModel) flushSave() tea.Cmd {
	if m.pendingSave == nil {
		return nil
	}
	s := *m.pendingSave
	m.pendingSave, m.saving = nil, true
	return saveSettingsCmd(m.svc, s)
}

// startTicking keeps elapsed times moving while a live run is shown.
func (m *rootModel) startTicking() tea.Cmd {
	if m.ticking {
		return nil
	}
	m.ticking = true
	m.tickGen++
	return tickCmd(m.tickGen)
}

// do turns a dialog's action into Cmds.
func (m *rootModel) do(a action) tea.Cmd {
	switch a := a.(type) {
	case nil:
		return nil
	case actDecide:
		rs := m.runs[a.id]
		if rs == nil || rs.h == nil {
			m.setNotice("that run is no longer live; resume it from the sessions list", true)
			return nil
		}
		planReview := rs.review != nil && rs.review.Plan != nil
		rs.review = nil
		m.setNotice(decidedNotice(planReview, a.d), false)
		return decideCmd(rs.h, a.d)
	case actLater:
		m.setNotice("review left for later — the session waits as awaiting review", false)
		return nil
	case actStart:
		return m.start(a.opt, a.form)
	case actFormClosed:
		if strings.TrimSpace(a.question) != "" && strings.TrimSpace(m.sessions.line.Value()) == "" {
			m.sessions.line.SetValue(a.question) // nothing typed is lost
			m.sessions.setFocus(focusLine)
		}
		return nil
	case actRestore:
		m.dialog = a.d
		return nil
	case actQuit:
		return m.quit()
	case actDelete:
		return deleteCmd(m.svc, a.id)
	case actResume:
		if m.resuming[a.s.ID] {
			return nil
		}
		m.resuming[a.s.ID] = true
		m.setNotice("finalising the draft…", false)
		return resumeRunCmd(m.ctx, m.svc, a.s, a.d)
	case actCancelRun:
		if rs := m.runs[a.id]; rs != nil && rs.h != nil {
			m.setNotice("cancelling — finished stages are kept", false)
			return cancelCmd(rs.h)
		}
	case actExport:
		m.setNotice("exporting "+a.format+"…", false)
		return exportCmd(m.svc, m.cfg.DataDir, m.report.rep, a.format)
	case actOpenURL:
		return openURLCmd(m.svc, a.url)
	case actAsk:
		m.setNotice("asking the follow-up…", false)
		return askRunCmd(m.ctx, m.svc, a.id, a.question)
	case actCopy:
		if a.text == "" {
			m.setNotice(a.what, true) // what is missing
			return nil
		}
		return m.copy(a.text, a.what)
	}
	return nil
}
