package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/textkit"
)

// updateCommand is `researchtui update ID` and `update --due`: a living
// review's check for new work (pipeline/update.go).
func updateCommand() *cobra.Command {
	var due, asJSON bool
	cmd := &cobra.Command{
		Use:   "update [--due] [ID]",
		Short: "Search a finished session again; new work that passes screening becomes a new version",
		Long: `update runs a finished session's searches again (its plan, every round's
queries, the citations of its cited sources), reads only works it never met,
and, when some pass screening, writes a new version whose "What's new since"
section says what they add. Earlier citation numbers stay; nothing read
before is read again. With nothing new, no version is written and the check
is recorded (sessions show).

--due updates every followed session whose time has come (researchtui follow
ID --every 7d), one at a time: run it from cron or a systemd timer. It is safe
while the TUI is open on the same data.`,
		Example: `  researchtui update 01a2070751d2bnanbp
  researchtui update --due            # from cron: 0 7 * * * researchtui update --due`,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case due && len(args) > 0:
				return fmt.Errorf("%w: give a session ID or --due, not both", errUsage)
			case !due && len(args) != 1:
				return fmt.Errorf("%w: update needs a session ID (see `researchtui sessions list`), or --due", errUsage)
			}
			cfg, err := loadConfig()
			if err != nil {
				return err
			}
			ids := args
			if due {
				if ids, err = dueSessions(cmd.ErrOrStderr(), cfg); err != nil || len(ids) == 0 {
					return err
				}
			}
			var failed []string
			for _, id := range ids {
				if err := updateOne(cmd, cfg, id, asJSON); err != nil {
					if !due || errors.Is(err, context.Canceled) {
						return err
					}
					fmt.Fprintf(cmd.ErrOrStderr(), "%s: %v\n", id, err)
					failed = append(failed, id)
				}
			}
			if len(failed) > 0 {
				return &exitError{exitFailed, fmt.Errorf("%d of %d due sessions could not be updated: %s", len(failed), len(ids), strings.Join(failed, ", "))}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&due, "due", false, "update every followed session whose time has come")
	cmd.Flags().BoolVar(&asJSON, "json", false, "one JSON object per session checked (the check: works seen, new, kept, version, tokens)")
	return cmd
}

// dueSessions lists the due sessions' IDs, or says why there are none.
func dueSessions(stderr io.Writer, cfg *Config) ([]string, error) {
	st, err := openStore(cfg, reach)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	now := time.Now()
	due, err := pipeline.Due(st, now)
	if err != nil || len(due) > 0 {
		ids := make([]string, len(due))
		for i, s := range due {
			ids[i] = s.ID
		}
		return ids, err
	}
	all, err := st.ListSessions()
	if err != nil {
		return nil, err
	}
	followed, next, nextID := 0, time.Time{}, ""
	for _, s := range all {
		if s.Living == nil || s.Living.Every <= 0 {
			continue
		}
		followed++
		if at := pipeline.LastChecked(st, s).Add(s.Living.Every); next.IsZero() || at.Before(next) {
			next, nextID = at, s.ID
		}
	}
	if followed == 0 {
		fmt.Fprintln(stderr, "no session is followed; follow one with `researchtui follow ID --every 7d`")
	} else {
		fmt.Fprintf(stderr, "nothing is due: %s followed; the next, %s, is due %s\n", textkit.Plural(followed, "session", "sessions"), nextID, next.Local().Format("2006-01-02 15:04"))
	}
	return nil, nil
}

// updateOne updates one session, progress on stderr, the outcome on stdout.
func updateOne(cmd *cobra.Command, cfg *Config, id string, asJSON bool) error {
	a, err := openResearch(cmd.Context(), cfg, id)
	if err != nil {
		return err
	}
	defer a.Close()
	r, err := a.engine.Update(cmd.Context(), id)
	if err != nil {
		return err
	}
	p := &progress{w: cmd.ErrOrStderr()}
	// An update has no review gate; were one asked, the draft stands.
	approve := func(context.Context, *pipeline.ReviewRequest) (pipeline.Decision, error) {
		return pipeline.Decision{Approve: true}, nil
	}
	sess, _, err := pipeline.Drive(cmd.Context(), r, p.show, approve)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return &exitError{exitCancelled, fmt.Errorf("the update of %s was cancelled; `researchtui update %s` continues it", id, id)}
		}
		return &exitError{exitFailed, fmt.Errorf("updating %s failed: %w", id, err)}
	}
	if sess.Status != store.StatusCompleted {
		return &exitError{exitFailed, fmt.Errorf("session %s is %s after its update; `researchtui update %s` continues it", id, sess.Status, id)}
	}
	checks, err := pipeline.LoadUpdateChecks(a.store, id)
	if err != nil || len(checks) == 0 {
		return fmt.Errorf("session %s recorded no check: %v", id, err)
	}
	c := checks[len(checks)-1]
	out := cmd.OutOrStdout()
	if asJSON {
		return json.NewEncoder(out).Encode(struct {
			Session string `json:"session"`
			pipeline.UpdateCheck
		}{id, c})
	}
	fmt.Fprintf(out, "%s  %s  %s\n", id, checkLine(c), textkit.StripControls(textkit.Clip(sess.Title, 60)))
	return nil
}

// checkLine says what one check found, in a line. Its reason can quote a
// source's failure (an API's error text): it is cleaned for the terminal.
func checkLine(c pipeline.UpdateCheck) string {
	return textkit.CleanLine(checkText(c))
}

func checkText(c pipeline.UpdateCheck) string {
	seen := fmt.Sprintf("%s seen, %d new", textkit.Plural(c.Seen, "work", "works"), c.New)
	if c.Version == 0 {
		return "no new version: " + c.Reason + " (" + textkit.Plural(c.Seen, "work", "works") + " seen)"
	}
	s := fmt.Sprintf("version %d: %s (%s)", c.Version, textkit.Plural(c.Kept, "new source", "new sources"), seen)
	if len(c.Merged) > 0 {
		s += fmt.Sprintf("; %s now published", textkit.Plural(len(c.Merged), "cited preprint", "cited preprints"))
	}
	return s
}

// followCommand is `researchtui follow ID --every 7d` (and --off).
func followCommand() *cobra.Command {
	var every string
	var off bool
	cmd := &cobra.Command{
		Use:   "follow ID --every 7d | follow ID --off",
		Short: "Keep a finished session up to date: `update --due` updates it at this interval",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case off && every != "":
				return fmt.Errorf("%w: give --every INTERVAL or --off, not both", errUsage)
			case !off && every == "":
				return fmt.Errorf("%w: give --every INTERVAL (e.g. 7d, 2w, 12h) or --off", errUsage)
			}
			d := time.Duration(0)
			if !off {
				var err error
				if d, err = parseEvery(every); err != nil {
					return fmt.Errorf("%w: %v", errUsage, err)
				}
			}
			return withStore(reach, func(_ *Config, st store.DB) error {
				sess, err := pipeline.Follow(st, args[0], d)
				if err != nil {
					return err
				}
				if off {
					fmt.Fprintf(cmd.OutOrStdout(), "%s is no longer followed\n", sess.ID)
					return nil
				}
				next := pipeline.LastChecked(st, sess).Add(d)
				fmt.Fprintf(cmd.OutOrStdout(), "%s is followed every %s; next due %s (run `researchtui update --due` from cron or a timer)\n",
					sess.ID, store.EveryText(d), next.Local().Format("2006-01-02 15:04"))
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&every, "every", "", "interval: 7d, 2w, 12h")
	cmd.Flags().BoolVar(&off, "off", false, "stop following the session")
	return cmd
}

// parseEvery reads an interval: Go's durations (12h) and days or weeks
// (7d, 2w), which Go's parser lacks.
func parseEvery(s string) (time.Duration, error) {
	s = strings.TrimSpace(strings.ToLower(s))
	if strings.HasPrefix(s, "-") || strings.Trim(s, "0dwhms.") == "" {
		return 0, fmt.Errorf("the interval must be positive (got %q; write e.g. 7d, 2w or 12h)", s)
	}
	unit := map[byte]time.Duration{'d': 24 * time.Hour, 'w': 7 * 24 * time.Hour}
	if n := len(s); n > 1 && unit[s[n-1]] > 0 {
		v, err := strconv.ParseFloat(s[:n-1], 64)
		if err != nil || v <= 0 || v > 3650 {
			return 0, fmt.Errorf("cannot read the interval %q (write e.g. 7d, 2w or 12h)", s)
		}
		return time.Duration(v * float64(unit[s[n-1]])), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("cannot read the interval %q (write e.g. 7d, 2w or 12h)", s)
	}
	return d, nil
}

// livingNote is what the sessions list adds for a living review: the
// interval, the last check and what it found, an unread new version.
func livingNote(s store.Session) string {
	l := s.Living
	if l == nil {
		return ""
	}
	var parts []string
	if l.Every > 0 {
		parts = append(parts, "follows "+store.EveryText(l.Every))
	}
	if !l.LastChecked.IsZero() {
		parts = append(parts, fmt.Sprintf("checked %s: %d new", l.LastChecked.Local().Format("2006-01-02"), l.LastNew))
	}
	if l.Unread > 0 {
		parts = append(parts, fmt.Sprintf("version %d unread", l.Unread))
	}
	if len(parts) == 0 {
		return ""
	}
	return "  [" + strings.Join(parts, "; ") + "]"
}
