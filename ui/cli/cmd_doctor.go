package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/textkit"
)

func doctorCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check the backend, models, context sizes, sources and store; print fixes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig()
			if err != nil {
				return err
			}
			d := &doctor{w: cmd.OutOrStdout()}
			d.run(cmd.Context(), cfg)
			if d.problems > 0 {
				return &exitError{exitFailed, fmt.Errorf("%d problem(s) found; the fixes are listed above", d.problems)}
			}
			fmt.Fprintln(d.w, "\nall good")
			return nil
		},
	}
}

type doctor struct {
	w        io.Writer
	problems int
}

// ok, info and bad print one finding each. Details carry configured
// names (models, hosts, paths) and servers' answers, so every line is
// cleaned of escape sequences and bidi overrides here, once for all.
func (d *doctor) ok(what, detail string) {
	fmt.Fprintf(d.w, "  ✓ %-22s %s\n", textkit.CleanLine(what), textkit.CleanLine(detail))
}
func (d *doctor) info(what, detail string) {
	fmt.Fprintf(d.w, "  · %-22s %s\n", textkit.CleanLine(what), textkit.CleanLine(detail))
}
func (d *doctor) bad(what, detail, fix string) {
	d.problems++
	fmt.Fprintf(d.w, "  ✗ %-22s %s\n    fix: %s\n", textkit.CleanLine(what), textkit.CleanLine(detail), textkit.CleanLine(fix))
}

func (d *doctor) run(ctx context.Context, cfg *Config) {
	fmt.Fprintf(d.w, "researchtui %s\n\nfiles\n", version)
	d.info("config", cfg.configPath)
	d.info("data", cfg.dataDir)
	d.checkStore(cfg)

	fmt.Fprintf(d.w, "\nmodel backend (%s)\n", textkit.CleanLine(cfg.Backend))
	b, err := newBackend(cfg)
	if err != nil {
		d.bad("backend", err.Error(), "set what the message names (config file or environment), or use backend = \"ollama\"")
	} else {
		d.checkBackend(ctx, b, cfg)
	}

	fmt.Fprintf(d.w, "\nsources\n")
	d.checkSources(ctx, cfg)

	fmt.Fprintf(d.w, "\nother agents (MCP)\n")
	d.checkMCP(ctx)
}

func (d *doctor) checkStore(cfg *Config) {
	db, err := openStore(cfg, own)
	if errors.Is(err, store.ErrLocked) {
		// Another researchtui owns the data dir: fine if it answers.
		c, derr := store.Dial(store.SocketPath(cfg.dbPath()))
		if derr != nil {
			d.bad("store", err.Error()+"; "+derr.Error(), "close the other researchtui (or use the same build for both), or check the permissions of "+cfg.dataDir)
			return
		}
		defer c.Close()
		sessions, lerr := c.ListSessions()
		if lerr != nil {
			d.bad("store", lerr.Error(), "restart the researchtui with pid "+strconv.Itoa(c.Owner()))
			return
		}
		d.ok("store", fmt.Sprintf("%s (%d sessions), owned by researchtui pid %d, reached through its socket", cfg.dbPath(), len(sessions), c.Owner()))
		return
	}
	if err != nil {
		d.bad("store", err.Error(), "close the other researchtui, or check the permissions of "+cfg.dataDir)
		return
	}
	st := db.(*store.Store)
	defer st.Close()
	sessions, err := st.ListSessions()
	if err != nil {
		d.bad("store", err.Error(), "the database may be damaged; move "+cfg.dbPath()+" aside to start afresh")
		return
	}
	d.ok("store", fmt.Sprintf("%s (%d sessions)", cfg.dbPath(), len(sessions)))
}
