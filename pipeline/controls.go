package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/researchtui/researchtui/store"
)

// Controls let a researchtui process steer a run that another one on the
// same data dir executes: the TUI deciding the review of a run started by
// `researchtui mcp`, say. They travel through the store's change feed
// (store/README.md); the process that claimed the session applies them.

const (
	controlDecide   = "decide"
	controlCancel   = "cancel"
	controlWriteNow = "write_now"
)

// followControls starts applying controls to this process's runs while it
// has any (liveMu is held; release stops it with the last run).
func (e *Engine) followControls() {
	ctx, cancel := context.WithCancel(context.Background())
	e.controls = cancel
	go store.Follow(ctx, e.Store, func(c store.Change) {
		if c.Control != nil {
			e.applyControl(c.Session, *c.Control)
		}
	}, nil)
}

func (e *Engine) applyControl(id string, c store.Control) {
	e.liveMu.Lock()
	l := e.live[id]
	e.liveMu.Unlock()
	if l == nil || l.run == nil {
		return // not ours
	}
	switch c.Kind {
	case controlDecide:
		var d Decision
		if json.Unmarshal(c.Decision, &d) == nil {
			_ = l.run.Decide(d)
		}
	case controlCancel:
		l.run.Cancel()
	case controlWriteNow:
		l.run.WriteNow()
	}
}

// ErrNotRunningHere says a session runs in no researchtui process: open it
// or resume it instead of watching it.
var ErrNotRunningHere = errors.New("that session is not running in any researchtui")

// sendControl sends a control to whichever process runs the session.
func (e *Engine) sendControl(id string, c store.Control) error {
	err := e.Store.SendControl(id, c)
	if errors.Is(err, store.ErrNotRunning) {
		return ErrNotRunningHere
	}
	return err
}

// DecideElsewhere answers the pending review of a session that another
// researchtui process runs.
func (e *Engine) DecideElsewhere(id string, d Decision) error {
	raw, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("encoding the decision: %w", err)
	}
	return e.sendControl(id, store.Control{Kind: controlDecide, Decision: raw})
}
