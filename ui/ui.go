// Package ui is researchtui's terminal interface (Bubble Tea v2): one root
// model that routes keys by screen and focus, the screens (sessions, run,
// report) and dialogs (review, new research, confirm, export, source, help)
// each in their own file, and the bridge from the pipeline's event channel.
//
// Rules the code keeps (see README.md): no IO in Update — store reads,
// glamour rendering, exports and run control happen in Cmds; Cmds never
// touch the model; every untrusted string is sanitized before it is drawn;
// token deltas are batched so a flood costs one frame, not thousands.
package ui

import (
	"context"
	"errors"
	"os"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/store"
)

// Config is what the command line (ui/cli) hands the UI.
type Config struct {
	Engine     *pipeline.Engine
	Store      store.DB
	Defaults   runopts.Options // model, embed model, sources, depth for new runs
	BackendErr error           // non-nil: show a banner with the fix; browsing keeps working
	// MissingModels are models the backend lacks; `p` pulls them with a
	// progress bar (BackendErr then says they are missing).
	MissingModels []string
	Theme         string // "auto", "dark", "light", ... from config
	// Notice is shown on the first screen, as a problem (what the TUI
	// could not use of what it remembered, say); "" none.
	Notice   string
	Question string // non-empty: start this research at once
	DataDir  string // where exports are written by default
	// SaveSettings writes what the TUI remembers (the theme, the form's
	// last choice) where the next session finds it; nil: nothing is saved.
	SaveSettings func(Settings) error
	// Collections lists the collections of the person's library and
	// corpus, for the form's Library row; nil: none.
	Collections func() ([]LibraryCollection, error)
	// CheckBackend, when set, is asked before a run is started whether the
	// model backend answers and has the models (as headless runs check).
	CheckBackend func(ctx context.Context, models ...string) error
}

// Run shows the TUI until the person quits or ctx is cancelled. Live runs
// are cancelled on the way out and given a moment to save, so a run stopped
// at the review gate stays awaiting review.
func Run(ctx context.Context, cfg Config) error {
	svc := liveServices{eng: cfg.Engine, st: cfg.Store, save: cfg.SaveSettings, collections: cfg.Collections, check: cfg.CheckBackend}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	m := newModel(runCtx, cfg, svc, options{noColor: os.Getenv("NO_COLOR") != "", tmux: os.Getenv("TMUX") != ""})
	p := tea.NewProgram(m, tea.WithContext(ctx))
	_, err := p.Run()
	// m is the model the program ran (a pointer), so its runs are current.
	shutdownRuns(m.liveHandles(), 5*time.Second)
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}
