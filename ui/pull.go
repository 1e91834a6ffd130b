package ui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/progress"
	tea "charm.land/bubbletea/v2"

	"github.com/researchtui/researchtui/pipeline"
)

// pullState is a model download started from the banner with `p`: the
// first thing a new user with a fresh Ollama needs.
type pullState struct {
	active bool
	model  string
	status string
	pct    float64 // of the current layer, 0..1
	ch     chan tea.Msg
	bar    progress.Model
}

type (
	pullProgressMsg struct {
		model string
		p     pipeline.PullProgress
	}
	pullDoneMsg struct{ err error }
)

// startPull downloads every missing model in a goroutine; its progress
// reaches Update through a channel bridged by a re-arming Cmd, like a run's
// events. Progress may be dropped when the UI is behind; the end never is.
func (m *rootModel) startPull() tea.Cmd {
	models := append([]string(nil), m.cfg.MissingModels...)
	ch := make(chan tea.Msg, 16)
	m.pull = pullState{active: true, model: models[0], status: "starting", ch: ch,
		bar: progress.New(progress.WithWidth(24), progress.WithoutPercentage(), progress.WithFillCharacters('█', '░'))}
	ctx, svc := m.ctx, m.svc
	go func() {
		var err error
		for _, model := range models {
			err = svc.PullModel(ctx, model, func(p pipeline.PullProgress) {
				select {
				case ch <- pullProgressMsg{model: model, p: p}:
				default:
				}
			})
			if err != nil {
				break
			}
		}
		ch <- pullDoneMsg{err: err}
		close(ch)
	}()
	return waitPull(ch)
}

func waitPull(ch chan tea.Msg) tea.Cmd {
	return func() tea.Msg {
		msg, ok := <-ch
		if !ok {
			return nil
		}
		return msg
	}
}

func (m *rootModel) onPullProgress(msg pullProgressMsg) tea.Cmd {
	m.pull.model, m.pull.status = msg.model, sanitizeLine(msg.p.Status)
	if msg.p.Total > 0 {
		m.pull.pct = float64(msg.p.Completed) / float64(msg.p.Total)
	} else {
		m.pull.pct = 0
	}
	return waitPull(m.pull.ch)
}

func (m *rootModel) onPullDone(msg pullDoneMsg) {
	m.pull.active = false
	if msg.err != nil {
		m.setNotice("pull failed: "+msg.err.Error(), true)
		return
	}
	// The only problem was missing models, and they are here now.
	m.cfg.MissingModels = nil
	m.cfg.BackendErr = nil
	if len(m.sessions.rows) == 0 {
		m.sessions.setFocus(focusLine) // nothing to browse: ask
	}
	m.setNotice("models ready — type a question on the line and press enter", false)
}

// pullLine is the banner's second line while models are missing: the key
// that pulls them, or the download's progress.
func (m *rootModel) pullLine() string {
	if len(m.cfg.MissingModels) == 0 {
		return ""
	}
	if !m.pull.active {
		return m.st.Warning.Render(trunc(fmt.Sprintf("Press p to download %s now (or run `ollama pull` yourself)", strings.Join(m.cfg.MissingModels, " and ")), m.width))
	}
	line := fmt.Sprintf("Pulling %s %s %3.0f%%  %s", m.pull.model, m.pull.bar.ViewAs(m.pull.pct), 100*m.pull.pct, m.pull.status)
	return m.st.Warning.Render(trunc(line, m.width))
}
