package ui

import (
	"context"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/store"
)

// Messages. Every Cmd returns one of these; Update is the only place that
// changes the model.

type sessionsLoadedMsg struct {
	sessions []store.Session
	err      error
	seq      int // which load: an older one finishing late is dropped
}

type runStartedMsg struct {
	h        runHandle
	opt      runopts.Options
	sess     store.Session // for resumes: title, model, usage so far
	resumed  bool
	watched  bool // a run of another researchtui process, followed here
	err      error
	decision *pipeline.Decision
	past     []pipeline.Event // a resumed run's earlier log: what it found, read and analysed
}

// runEventsMsg carries every event that was waiting on a run's channel when
// the bridge woke up: a flood becomes one Update and one frame.
type runEventsMsg struct {
	id     string
	events []pipeline.Event
	closed bool
}

type reportLoadedMsg struct {
	id  string
	rep pipeline.Report
	err error
}

type reportRenderedMsg struct {
	key renderKey
	out string
	err error
}

type deletedMsg struct {
	id  string
	err error
}

type decidedMsg struct {
	id  string
	err error
}

type exportedMsg struct {
	path string
	err  error
}

type openedMsg struct {
	url string
	err error
}

type settingsSavedMsg struct{ err error }

// tickMsg refreshes elapsed times while a live run is on screen. gen guards
// against two tick chains running at once.
type tickMsg struct{ gen int }

// maxBatch bounds how many queued events one message carries, so a frame
// is drawn at least every maxBatch events even under a flood.
const maxBatch = 512

// waitEvents is the bridge from a run's channel to Bubble Tea: it blocks
// for one event, then takes whatever else is already queued, and returns
// them as one message. Update re-arms it after each message; a closed
// channel ends the chain.
func waitEvents(id string, ch <-chan pipeline.Event) tea.Cmd {
	return func() tea.Msg {
		ev, ok := <-ch
		if !ok {
			return runEventsMsg{id: id, closed: true}
		}
		batch := make([]pipeline.Event, 1, 16)
		batch[0] = ev
		for len(batch) < maxBatch {
			select {
			case ev, ok := <-ch:
				if !ok {
					return runEventsMsg{id: id, events: batch, closed: true}
				}
				batch = append(batch, ev)
			default:
				return runEventsMsg{id: id, events: batch}
			}
		}
		return runEventsMsg{id: id, events: batch}
	}
}

// loadSessions reads the session list. Loads run concurrently (every
// change to a session starts one), so each is numbered: a load that
// finishes after a newer one is stale and must not put back an older list.
func (m *rootModel) loadSessions() tea.Cmd {
	m.sessions.loads++
	return loadSessionsCmd(m.svc, m.sessions.loads)
}

func loadSessionsCmd(svc services, seq int) tea.Cmd {
	return func() tea.Msg {
		s, err := svc.ListSessions()
		return sessionsLoadedMsg{sessions: s, err: err, seq: seq}
	}
}

func startRunCmd(ctx context.Context, svc services, opt runopts.Options) tea.Cmd {
	return func() tea.Msg {
		h, err := svc.Start(ctx, opt)
		return runStartedMsg{h: h, opt: opt, err: err}
	}
}

func resumeRunCmd(ctx context.Context, svc services, sess store.Session, d *pipeline.Decision) tea.Cmd {
	return func() tea.Msg {
		past, _ := svc.Events(sess.ID) // read before the resumed run logs more; without it the screen starts empty
		h, err := svc.Resume(ctx, sess.ID, d)
		return runStartedMsg{h: h, sess: sess, resumed: true, err: err, decision: d, past: past}
	}
}

func askRunCmd(ctx context.Context, svc services, id, question string) tea.Cmd {
	return func() tea.Msg {
		h, err := svc.Ask(ctx, id, question)
		opt := runopts.Options{Question: "Follow-up: " + question}
		if sess, serr := svc.Session(id); serr == nil {
			opt.Model = sess.Model // a follow-up runs on its session's model
		}
		return runStartedMsg{h: h, opt: opt, err: err}
	}
}

// versionsLoadedMsg brings a session's report versions for the versions dialog.
type versionsLoadedMsg struct {
	versions []pipeline.Version
	err      error
}

func loadVersionsCmd(svc services, id string) tea.Cmd {
	return func() tea.Msg {
		vs, err := svc.Versions(id)
		return versionsLoadedMsg{versions: vs, err: err}
	}
}

func loadReportCmd(svc services, id string) tea.Cmd {
	return func() tea.Msg {
		rep, err := svc.LoadReport(id)
		return reportLoadedMsg{id: id, rep: rep, err: err}
	}
}

func deleteCmd(svc services, id string) tea.Cmd {
	return func() tea.Msg { return deletedMsg{id: id, err: svc.DeleteSession(id)} }
}

func decideCmd(h runHandle, d pipeline.Decision) tea.Cmd {
	return func() tea.Msg { return decidedMsg{id: h.ID(), err: h.Decide(d)} }
}

func writeNowCmd(h runHandle) tea.Cmd {
	return func() tea.Msg { h.WriteNow(); return nil }
}

func cancelCmd(h runHandle) tea.Cmd {
	return func() tea.Msg { h.Cancel(); return nil }
}

func exportCmd(svc services, dir string, rep pipeline.Report, format string) tea.Cmd {
	return func() tea.Msg {
		data, err := svc.Export(rep, format)
		if err != nil {
			return exportedMsg{err: err}
		}
		path, err := writeExport(dir, rep.SessionID, format, data)
		return exportedMsg{path: path, err: err}
	}
}

func openURLCmd(svc services, url string) tea.Cmd {
	return func() tea.Msg { return openedMsg{url: url, err: svc.OpenURL(url)} }
}

func saveSettingsCmd(svc services, s Settings) tea.Cmd {
	return func() tea.Msg { return settingsSavedMsg{err: svc.SaveSettings(s)} }
}

func tickCmd(gen int) tea.Cmd {
	return tea.Tick(time.Second, func(time.Time) tea.Msg { return tickMsg{gen: gen} })
}
