package ui

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/researchtui/researchtui/pipeline"
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
	runs     map[string]*runState
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
	starting    bool
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
		runs:     map[string]*runState{},
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
	if m.opts.darkBG == nil && (m.configured == "" || strings.EqualFold(m.configured, themes.Auto)) {
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

func (m *rootModel) setNotice(s string, isErr bool) {
	m.notice, m.noticeErr, m.noticeAt, m.noticeUpdate = sanitizeLine(s), isErr, m.now(), m.updates
}

// goTo switches screens. A notice belongs to the screen it was given on
// (a failed xdg-open on the report, "type a question first" on the list):
// it is cleared, unless the same keypress or message gave it on the way.
func (m *rootModel) goTo(s screen) {
	if s != m.screen && m.noticeUpdate != m.updates {
		m.notice = ""
	}
	m.screen = s
}

// noticeLife is how long news ("exported to …", "started in another
// researchtui") stays on the status line; errors stay until replaced.
// The line is drawn again on the next message after it, a key, a tick
// or a change in the store.
const noticeLife = 15 * time.Second

// shownNotice is the notice the status line shows now.
func (m *rootModel) shownNotice() string {
	if !m.noticeErr && !m.noticeAt.IsZero() && m.now().Sub(m.noticeAt) > noticeLife {
		return ""
	}
	return m.notice
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
		if m.configured == "" || strings.EqualFold(m.configured, themes.Auto) {
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
			if !m.sessions.filtering && before+utf8.RuneCountInString(sanitizeLine(pastedLine(msg.Content))) > pipeline.MaxQuestionBytes {
				m.setNotice("a question holds at most "+strconv.Itoa(pipeline.MaxQuestionBytes)+" characters: the rest of the paste was left out", false)
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

// cycleTheme shows the next theme and saves it to the config file.
func (m *rootModel) cycleTheme(tea.KeyPressMsg) tea.Cmd {
	m.applyTheme(themes.Next(m.themeName))
	m.configured = m.themeName
	m.setNotice("theme: "+m.themeName, false)
	return tea.Batch(m.relayout(), m.queueSave(Settings{Theme: m.themeName}))
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
	var live []*runState
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

// queueSave writes settings to the config file in a Cmd, one write at a
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

// onRunStarted registers a new or resumed run and arms its bridge.
func (m *rootModel) onRunStarted(msg runStartedMsg) tea.Cmd {
	if msg.resumed {
		delete(m.resuming, msg.sess.ID)
	} else {
		m.starting = false
	}
	if msg.err != nil {
		// Also how the engine refuses a second resume of a session that is
		// already running (in another window, say): a notice, nothing more.
		verb := "could not start: "
		switch {
		case msg.watched:
			verb = "could not watch: "
		case msg.resumed:
			verb = "could not resume: "
		}
		m.setNotice(verb+msg.err.Error(), true)
		return nil
	}
	id := msg.h.ID()
	title, model := msg.opt.Question, msg.opt.Model
	if msg.resumed {
		title, model = msg.sess.Title, msg.sess.Model
		if title == "" {
			title = msg.sess.Question
		}
	}
	rs := newRunState(id, title, model, msg.h, m.now())
	rs.restore(msg.past)
	if msg.resumed {
		rs.usage.PromptTokens = msg.sess.Usage.PromptTokens
		rs.usage.CompletionTokens = msg.sess.Usage.CompletionTokens
		rs.usage.EmbeddingTokens = msg.sess.Usage.EmbeddingTokens
		rs.usage.CostUSD = msg.sess.CostUSD
	}
	m.runs[id] = rs
	if !msg.resumed && strings.TrimSpace(m.sessions.line.Value()) == msg.opt.Question {
		m.sessions.line.SetValue("") // asked: the line is free for the next question
	}
	m.active = id
	m.goTo(screenRun)
	m.dialog = nil
	m.notice = ""
	if msg.watched {
		rs.watched = true
		m.setNotice("this run belongs to another researchtui: watching it here; leaving keeps it running", false)
	}
	return tea.Batch(waitEvents(id, msg.h.Events()), m.loadSessions(), m.startTicking())
}

// onRunEvents folds a batch of events into its run and re-arms the bridge.
// Consecutive token deltas of one agent are merged first, so a flood of
// tiny deltas costs one string append, not thousands.
func (m *rootModel) onRunEvents(msg runEventsMsg) tea.Cmd {
	rs := m.runs[msg.id]
	if rs == nil {
		return nil
	}
	var cmds []tea.Cmd
	evs := mergeDeltas(msg.events)
	statusChanged := false
	for _, ev := range evs {
		before := rs.status
		rs.apply(ev)
		if rs.status != before {
			statusChanged = true
		}
		if ev.Type == pipeline.ReviewRequested && rs.review != nil && m.screen == screenRun && m.active == rs.id {
			m.openReview(rs)
		}
		if m.reviewOpen() && ev.Type == pipeline.ReviewDecided && m.active == rs.id {
			// Decided elsewhere (another researchtui, or a replayed history).
			m.dialog = nil
		}
		if ev.Type == pipeline.ReviewRequested && rs.review != nil && !(m.screen == screenRun && m.active == rs.id) {
			m.setNotice("“"+trunc(rs.title, 40)+"” waits for your review — open it to decide", false)
		}
	}
	if msg.closed {
		rs.closed = true
		if rs.ended.IsZero() {
			rs.ended = m.now()
		}
		if m.reviewOpen() && m.active == rs.id {
			m.dialog = nil
		}
		statusChanged = true
		if rs.status == "completed" && m.screen == screenRun && m.active == rs.id {
			m.setNotice("", false) // "revising…" and the like are over
			cmds = append(cmds, m.openReport(rs.id, rs.title))
		}
	} else {
		cmds = append(cmds, waitEvents(msg.id, rs.h.Events()))
	}
	if statusChanged {
		cmds = append(cmds, m.loadSessions())
	}
	return tea.Batch(cmds...)
}

// mergeDeltas joins adjacent token deltas of the same agent.
func mergeDeltas(evs []pipeline.Event) []pipeline.Event {
	if len(evs) < 2 {
		return evs
	}
	out := evs[:0:0]
	var text, think strings.Builder
	flush := func() {
		last := &out[len(out)-1]
		last.Text, last.Thinking = text.String(), think.String()
	}
	open := false
	for _, ev := range evs {
		if ev.Type == pipeline.TokenDelta && open && out[len(out)-1].Agent == ev.Agent {
			text.WriteString(ev.Text)
			think.WriteString(ev.Thinking)
			out[len(out)-1].Seq, out[len(out)-1].Time = ev.Seq, ev.Time
			continue
		}
		if open {
			flush()
			open = false
		}
		out = append(out, ev)
		if ev.Type == pipeline.TokenDelta {
			text.Reset()
			think.Reset()
			text.WriteString(ev.Text)
			think.WriteString(ev.Thinking)
			open = true
		}
	}
	if open {
		flush()
	}
	return out
}

// reviewOpen: a review or plan dialog is open (a decision elsewhere or the
// run's end closes it).
func (m *rootModel) reviewOpen() bool {
	switch m.dialog.(type) {
	case *reviewDialog, *planDialog:
		return true
	}
	return false
}

func (m *rootModel) openReview(rs *runState) {
	if rs.review == nil || rs.h == nil {
		return
	}
	if rs.review.Plan != nil {
		m.dialog = newPlanDialog(rs.id, *rs.review.Plan, m.now(), m.st, m.sourcesOff())
		return
	}
	m.dialog = newReviewDialog(rs.id, *rs.review, m.now(), m.st)
}

// start starts a new run once (a second enter before it has started does
// nothing). A run started from the form remembers the form's model, depth
// and sources, for the next form and the next start, and in the config file.
func (m *rootModel) start(opt pipeline.Options, form bool) tea.Cmd {
	if m.starting {
		return nil
	}
	m.starting = true
	cmds := []tea.Cmd{startRunCmd(m.ctx, m.svc, opt)}
	if form {
		d := &m.cfg.Defaults
		d.Model, d.Depth, d.Kind, d.ReviewPlan, d.Language, d.Sources, d.AutoSources = opt.Model, opt.Depth, opt.Kind, opt.ReviewPlan, opt.Language, opt.Sources, opt.AutoSources
		choice := &FormChoice{Model: opt.Model, Depth: opt.Depth, Kind: opt.Kind, ReviewPlan: opt.ReviewPlan, Language: opt.Language, Sources: append([]string{}, opt.Sources...)}
		cmds = append(cmds, m.queueSave(Settings{Form: choice}))
	}
	return tea.Batch(cmds...)
}

// sourcesOff are the sources this researchtui cannot search, with what
// each needs (none without an engine: tests, browsing only).
func (m *rootModel) sourcesOff() map[string]string {
	if m.cfg.Engine == nil {
		return nil
	}
	return m.cfg.Engine.SourcesOff
}

// decidedNotice says what the run does next after a decision: a plan goes
// on to the searches, a review to the revision or the final report.
func decidedNotice(planReview bool, d pipeline.Decision) string {
	switch {
	case planReview && d.Plan != nil:
		return "running the plan as you edited it…"
	case planReview:
		return "running the plan…"
	case d.Approve:
		return "revising with the accepted requests…"
	}
	return "finalising the draft…"
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
