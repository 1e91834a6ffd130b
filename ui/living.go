package ui

import (
	"context"
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/textkit"
)

// Living reviews in the TUI (pipeline/update.go): u on a report checks it
// for new work now, F follows or unfollows it (weekly by default;
// `researchtui update --due` from cron does the updating), the sessions
// list marks followed sessions and a version an update wrote until it is
// opened.

// followEvery is how often F follows a session; `researchtui follow ID
// --every` sets any other interval.
const followEvery = 7 * 24 * time.Hour

// updateTitle begins an update's run title on the run screen.
const updateTitle = "Update: "

func updateRunCmd(ctx context.Context, svc services, id, title string) tea.Cmd {
	return func() tea.Msg {
		h, err := svc.Update(ctx, id)
		opt := runopts.Options{Question: updateTitle + title}
		if sess, serr := svc.Session(id); serr == nil {
			opt.Model = sess.Model // an update runs on its session's model
		}
		return runStartedMsg{h: h, opt: opt, err: err}
	}
}

// followedMsg is the outcome of F.
type followedMsg struct {
	sess store.Session
	err  error
}

func followCmd(svc services, id string, every time.Duration) tea.Cmd {
	return func() tea.Msg {
		sess, err := svc.Follow(id, every)
		return followedMsg{sess: sess, err: err}
	}
}

// toggleFollow follows a session that is not followed, and unfollows one
// that is.
func (m *rootModel) toggleFollow(s store.Session) tea.Cmd {
	if s.Status != "" && s.Status != store.StatusCompleted {
		m.setNotice("only a finished report can be kept up to date; this session is "+statusLabel(s.Status), true)
		return nil
	}
	every := followEvery
	if s.Living != nil && s.Living.Every > 0 {
		every = 0
	}
	return followCmd(m.svc, s.ID, every)
}

func (m *rootModel) onFollowed(msg followedMsg) tea.Cmd {
	if msg.err != nil {
		m.setNotice("follow: "+sanitizeLine(msg.err.Error()), true)
		return nil
	}
	if l := msg.sess.Living; l != nil && l.Every > 0 {
		m.setNotice(fmt.Sprintf("following every %s: `researchtui update --due` (cron) updates it", store.EveryText(l.Every)), false)
	} else {
		m.setNotice("no longer followed", false)
	}
	return m.loadSessions()
}

// listed is a session as the sessions list last loaded it.
func (m *rootModel) listed(id string) (store.Session, bool) {
	for _, r := range m.sessions.rows {
		if r.s.ID == id {
			return r.s, true
		}
	}
	return store.Session{}, false
}

func markReadCmd(svc services, id string) tea.Cmd {
	return func() tea.Msg {
		_ = svc.MarkRead(id) // a mark left on is harmless; the next open clears it
		return nil
	}
}

// livingMark is the sessions list's mark before a title: ● a version an
// update wrote and nobody opened, ↻ followed (both: ●↻).
func livingMark(s store.Session) string {
	l := s.Living
	switch {
	case l == nil:
		return ""
	case l.Unread > 0 && l.Every > 0:
		return "●↻ " // both: an unread version of a followed session
	case l.Unread > 0:
		return "● "
	case l.Every > 0:
		return "↻ "
	}
	return ""
}

// livingLines are the preview's lines for a living review, none for
// others.
func livingLines(s store.Session, now time.Time) []string {
	l := s.Living
	if l == nil {
		return nil
	}
	var parts []string
	if l.Every > 0 {
		every := "every " + store.EveryText(l.Every)
		if !l.LastChecked.IsZero() { // any check starts the interval again
			every += " · next " + fmtDate(l.LastChecked.Add(l.Every), now)
		}
		parts = append(parts, every)
	}
	if !l.LastChecked.IsZero() {
		parts = append(parts, fmt.Sprintf("checked %s: %s", fmtDate(l.LastChecked, now), textkit.Plural(l.LastNew, "new source", "new sources")))
	}
	if l.Unread > 0 {
		parts = append(parts, fmt.Sprintf("version %d unread", l.Unread))
	}
	return parts
}

// sessionsLegend explains the sessions list's marks in its help.
const sessionsLegend = "Marks before a question: ↻ followed (updated on its schedule by `researchtui update --due`), ● an update wrote a new version you have not opened yet."
