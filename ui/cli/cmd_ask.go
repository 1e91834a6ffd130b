package cli

import (
	"fmt"

	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/spf13/cobra"
)

// askCommand is `researchtui ask ID QUESTION`: a follow-up question on a
// finished session. It researches only what the session lacks and adds a
// new version of the report.
func askCommand() *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "ask [flags] ID QUESTION",
		Short: "Ask a finished session a follow-up question; its report grows a new version",
		Example: `  researchtui ask 01a2070751d2bnanbp "which of these methods need labelled data?"
  researchtui ask --json --out v2.md 01a2070751d2bnanbp "make it shorter"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return fmt.Errorf("%w: ask needs a session ID and a question, e.g. researchtui ask ID \"which of these need labelled data?\"", errUsage)
			}
			cfg, a, err := f.openSession(cmd, args[0])
			if err != nil {
				return err
			}
			defer a.Close()
			if err := refuseFixed(cmd, "a follow-up keeps session "+args[0]+"'s options but its depth, sources and screen", joinArgs(args[1:]), askChanges); err != nil {
				return err
			}
			changed := cmd.Flags().Changed
			r, err := a.engine.Ask(cmd.Context(), args[0], joinArgs(args[1:]), func(o *runopts.Options) {
				if changed("depth") {
					o.Depth = cfg.Depth
				}
				if changed("sources") {
					o.Sources, o.AutoSources = cfg.Sources, false
				}
				if changed("screen") {
					o.Screen = cfg.Screen
				}
			})
			if err != nil {
				return err
			}
			return headless(cmd, a, r, f)
		},
	}
	f.register(cmd)
	hideFixed(cmd, askChanges)
	return cmd
}

// askChanges says which run options a follow-up can change.
func askChanges(s runopts.OptionSpec) bool { return s.FollowUp || s.Resumable }
