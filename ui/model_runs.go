package ui

import (
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/runopts"
)

// The runs the model follows: a run started or resumed, its events as they
// arrive, its review dialog, and starting one from the line or the form.

// onRunStarted registers a new or resumed run and arms its bridge.
func (m *rootModel) onRunStarted(msg runStartedMsg) tea.Cmd {
	var remember tea.Cmd
	if msg.resumed {
		delete(m.resuming, msg.sess.ID)
	} else {
		m.starting = false
		choice := m.fromForm
		m.fromForm = nil
		switch {
		case choice != nil && msg.err == nil:
			choice.Apply(&m.cfg.Defaults)
			remember = m.queueSave(Settings{Form: choice})
		case choice != nil && strings.TrimSpace(m.sessions.line.Value()) == "":
			// The form is closed: its question waits on the line, to
			// send again once the cause is fixed.
			m.sessions.line.SetValue(msg.opt.Question)
		}
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
		return remember
	}
	id := msg.h.ID()
	title, model := msg.opt.Question, msg.opt.Model
	if msg.resumed {
		title, model = msg.sess.Title, msg.sess.Model
		if title == "" {
			title = msg.sess.Question
		}
	}
	rs := newRunView(id, title, model, msg.h, m.now())
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
	return tea.Batch(waitEvents(id, msg.h.Events()), m.loadSessions(), m.startTicking(), remember)
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
			if strings.HasSuffix(m.notice, "…") && !m.noticeErr {
				m.setNotice("", false) // "revising…" is over: the next round asks
			}
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
		if d, ok := m.dialog.(*confirmDialog); ok {
			if c, ok := d.onYes.(actCancelRun); ok && c.id == rs.id {
				m.dialog = nil // the run it would cancel has ended
			}
		}
		statusChanged = true
		if rs.status == "cancelled" && m.active == rs.id && strings.HasPrefix(m.notice, "cancelling") {
			m.setNotice("cancelled — finished stages are kept; R on the sessions screen resumes it", false)
		}
		if rs.status == "completed" && m.screen == screenRun && m.active == rs.id {
			m.setNotice("", false) // "revising…" and the like are over
			cmds = append(cmds, m.openReport(rs.id, rs.title))
			if rs.followUp {
				// The answer is added at the end: open there, and say so.
				m.report.jumpTo = "Follow-up: "
				m.setNotice("the follow-up's answer is in view: its section, after the report's own (g for the top)", false)
			}
			if rs.unchanged {
				m.setNotice(rs.endMsg, false) // an update that wrote no version: the report is as it was
			}
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

func (m *rootModel) openReview(rs *runView) {
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
// and sources, for the next form and the next start, and in what the TUI remembers.
func (m *rootModel) start(opt runopts.Options, form bool) tea.Cmd {
	if m.starting {
		return nil
	}
	if err := runopts.CheckQuestion(runopts.NormalizeQuestion(opt.Question)); err != nil {
		// Checked before anything starts: two letters typed where a key
		// was meant stay on the line, with the reason.
		m.setNotice("could not start: "+strings.TrimPrefix(err.Error(), runopts.ErrBadInput.Error()+": "), true)
		return nil
	}
	m.starting = true
	m.fromForm = nil
	if form {
		m.fromForm = RememberedChoice(opt)
	}
	return startRunCmd(m.ctx, m.svc, opt)
}
