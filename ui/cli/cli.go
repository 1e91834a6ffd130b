// Package cli is researchtui's command line: the command tree, the
// configuration (file, environment, flags), the wiring of the store, the
// model backend, the sources and the engine, headless runs and their
// progress, doctor, and the faces it starts (the TUI in ui, the MCP server
// in ui/mcp). main calls Run; nothing else imports this package.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/textkit"
)

// version is set at build time with
// -ldflags "-X github.com/researchtui/researchtui/ui/cli.version=...".
var version = "0.1.0-dev"

// Exit codes (README: Commands).
const (
	exitOK        = 0
	exitFailed    = 1
	exitUsage     = 2
	exitBackend   = 3
	exitLocked    = 4
	exitCancelled = 130
)

var errUsage = errors.New("usage")

// Run executes one command line and returns its exit code (README: Commands).
func Run(ctx context.Context, args []string) int {
	serveDebug()
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	root := rootCommand()
	root.SetArgs(args)
	root.SetOut(&outputGone{w: os.Stdout, stop: stop})
	root.SetErr(&outputGone{w: os.Stderr, stop: stop})
	err := root.ExecuteContext(ctx)
	if err == nil || errors.Is(err, syscall.EPIPE) {
		return exitOK // `researchtui library list | head` read what it wanted
	}
	// An error may carry a server's or a model's words: never a terminal
	// control sequence.
	fmt.Fprintln(os.Stderr, "researchtui:", textkit.StripControls(err.Error()))
	return exitCode(ctx, err)
}

// flagError says what a flag's value should have been, in words, where
// pflag would quote Go's parser ("strconv.ParseInt: parsing \"abc\":
// invalid syntax").
func flagError(err error) string {
	var iv *pflag.InvalidValueError
	if !errors.As(err, &iv) {
		return err.Error()
	}
	want := "another value"
	switch iv.GetFlag().Value.Type() {
	case "int", "int64", "uint", "uint64":
		want = "a whole number, like 20000"
	case "float64":
		want = "a number, like 0.5"
	case "bool":
		want = "true or false"
	case "duration":
		want = "a duration, like 90s, 30m or 2h"
	}
	return fmt.Sprintf("--%s takes %s, not %q", iv.GetFlag().Name, want, iv.GetValue())
}

func exitCode(ctx context.Context, err error) int {
	var ee *exitError
	switch {
	case errors.As(err, &ee):
		return ee.code
	case errors.Is(err, errUsage), errors.Is(err, runopts.ErrBadInput), errors.Is(err, pipeline.ErrRunning):
		return exitUsage
	case errors.Is(err, store.ErrLocked):
		return exitLocked
	case llm.IsUnreachable(err), llm.IsModelMissing(err):
		return exitBackend
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		return exitCancelled
	}
	return exitFailed
}

// exitError carries an explicit exit code.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "researchtui [QUESTION]",
		Short: "A local-first research assistant: agents search, read and cite papers for you",
		Long: `researchtui plans a research question, searches arXiv, OpenAlex and other sources,
reads and indexes the papers, writes a Markdown report with real citations and has a
reviewer agent criticise it. Models run on Ollama by default; everything stays on disk.

With no command it opens the terminal UI; with a question it starts that research at once.`,
		Args: cobra.ArbitraryArgs,
		// notACommand suggests commands within this many edits.
		SuggestionsMinimumDistance: 2,
		SilenceUsage:               true,
		SilenceErrors:              true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := notACommand(cmd, args); err != nil {
				return err
			}
			return runTUI(cmd.Context(), joinArgs(args))
		},
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return fmt.Errorf("%w: %s", errUsage, flagError(err))
	})
	root.AddCommand(runCommand(), resumeCommand(), askCommand(), updateCommand(), followCommand(), evalCommand(), sessionsCommand(), searchCommand(), corpusCommand(), libraryCommand(), storeCommand(), mcpCommand(), doctorCommand(), dirsCommand(), versionCommand())
	for _, c := range root.Commands() {
		refuseUnknownSubcommands(c)
		argsAreUsage(c)
	}
	return root
}

// argsAreUsage makes every command's wrong arguments ("library import"
// with no file) a usage error like a wrong flag: exit 2, with the command's
// usage line, instead of cobra's bare message and exit 1.
func argsAreUsage(c *cobra.Command) {
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			err := check(cmd, args)
			if err == nil || errors.Is(err, errUsage) {
				return err
			}
			// In the command's words, not cobra's ("requires at least 1
			// arg(s), only received 0").
			what := strings.TrimSpace(strings.TrimPrefix(cmd.Use, cmd.Name()))
			switch {
			case len(args) == 0 && what != "":
				err = fmt.Errorf("%s needs %s", cmd.CommandPath(), what)
			case what == "":
				err = fmt.Errorf("%s takes no arguments (got %q)", cmd.CommandPath(), strings.Join(args, " "))
			default:
				err = fmt.Errorf("%s takes %s (got %s)", cmd.CommandPath(), what, textkit.Plural(len(args), "argument", "arguments"))
			}
			return fmt.Errorf("%w: %v (usage: %s)", errUsage, err, cmd.UseLine())
		}
	}
	for _, sub := range c.Commands() {
		argsAreUsage(sub)
	}
}

// refuseUnknownSubcommands makes a command that only groups others
// ("sessions", "store", ...) refuse an unknown one with exit 2 and the
// names meant: cobra would print the group's help and exit 0, so
// `researchtui sessions lst` in a script would seem to succeed.
func refuseUnknownSubcommands(c *cobra.Command) {
	if !c.HasSubCommands() || c.Run != nil || c.RunE != nil {
		return
	}
	c.SuggestionsMinimumDistance = 2
	c.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		msg := fmt.Sprintf("unknown command %q for %q", textkit.CleanLine(args[0]), cmd.CommandPath())
		if hint := cmd.SuggestionsFor(args[0]); len(hint) > 0 {
			msg += "; did you mean " + strings.Join(quoteAll(hint), " or ") + "?"
		}
		return fmt.Errorf("%w: %s (see %s --help)", errUsage, msg, cmd.CommandPath())
	}
	c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
}

// notACommand refuses a first argument that looks like a mistyped command
// rather than a question: one or two words without a question mark
// ("sesions list", "doctr"), so a typo does not open the TUI and spend a
// run on it. A question ("why …?", or three words and more) passes.
func notACommand(root *cobra.Command, args []string) error {
	words := strings.Fields(joinArgs(args))
	if len(words) == 0 || len(words) > 2 || strings.Contains(joinArgs(args), "?") {
		return nil
	}
	first := words[0]
	if hint := root.SuggestionsFor(first); len(hint) > 0 {
		return fmt.Errorf("%w: unknown command %q; did you mean %s? (to research it, ask a question: researchtui \"what is …?\")", errUsage, textkit.CleanLine(first), strings.Join(quoteAll(hint), " or "))
	}
	return fmt.Errorf("%w: %q is not a command (see researchtui --help); to research it, ask a question in quotes, e.g. researchtui \"what is known about %s?\"", errUsage, textkit.CleanLine(joinArgs(args)), textkit.CleanLine(joinArgs(args)))
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

func versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), "researchtui", version)
		},
	}
}

func dirsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "dirs",
		Short: "Print the config, data and log paths in use",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig()
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "config    %s\n", cfg.configPath)
			fmt.Fprintf(out, "data      %s\n", cfg.dataDir)
			fmt.Fprintf(out, "database  %s\n", cfg.dbPath())
			fmt.Fprintf(out, "cache     %s\n", cfg.cacheDir())
			fmt.Fprintf(out, "logs      %s\n", cfg.logDir())
			return nil
		},
	}
}

// outputGone stops the command when its reader has gone (`researchtui run
// … | head`: the write fails with EPIPE, main ignoring SIGPIPE): a run
// then ends as on ctrl+c, recorded as cancelled and resumable, instead of
// going on unseen or dying mid-write.
type outputGone struct {
	w    io.Writer
	stop context.CancelFunc
}

func (o *outputGone) Write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	if errors.Is(err, syscall.EPIPE) {
		o.stop()
	}
	return n, err
}
