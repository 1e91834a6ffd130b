package ui

// Runs of other researchtui processes on the same data dir: the session
// list follows the store's change feed, and such a run is watched, not
// resumed (pipeline.Watched behind the runHandle interface).

import (
	"context"

	tea "charm.land/bubbletea/v2"

	"github.com/researchtui/researchtui/store"
)

// sessionsChangedMsg says some process changed the sessions.
type sessionsChangedMsg struct{}

// waitChangesCmd waits for the next change to the sessions.
func waitChangesCmd(ch <-chan struct{}) tea.Cmd {
	return func() tea.Msg {
		if _, ok := <-ch; !ok {
			return nil
		}
		return sessionsChangedMsg{}
	}
}

// watchRunCmd follows a session that another researchtui process runs.
func watchRunCmd(ctx context.Context, svc services, sess store.Session) tea.Cmd {
	return func() tea.Msg {
		h, err := svc.Watch(ctx, sess.ID)
		return runStartedMsg{h: h, sess: sess, resumed: true, watched: true, err: err}
	}
}

// noticeRunsElsewhere says when a run started by another researchtui on
// the data dir (an agent through `researchtui mcp`, a `run` in another
// terminal) appears in the list, so the person knows it can be watched.
func (m *rootModel) noticeRunsElsewhere(list []store.Session) {
	if !m.sessions.listed {
		m.sessions.listed = true // the first load: nothing is new
		return
	}
	known := make(map[string]bool, len(m.sessions.rows))
	for _, r := range m.sessions.rows {
		known[r.s.ID] = true
	}
	for _, sess := range list {
		if sess.Status == store.StatusRunning && !known[sess.ID] && m.runs[sess.ID] == nil {
			m.setNotice("“"+trunc(sanitizeLine(sess.Title), 40)+"” started in another researchtui — select it and press enter to watch", false)
			return
		}
	}
}
