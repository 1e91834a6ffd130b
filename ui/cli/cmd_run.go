package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/textkit"
)

// runFlags are the flags of run, resume and ask (README: Commands): the
// run options' (one per entry of runopts.RunOptions that has a flag name)
// and the invocation's own.
type runFlags struct {
	review, out string
	json        bool
	// opts are the run options' flags by name, as cobra fills them: a
	// *string (strings, durations, comma-separated lists), *[]string
	// (repeatable lists), *int or *bool.
	opts map[string]any
}

func (f *runFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	f.opts = map[string]any{}
	for _, s := range runopts.RunOptions {
		if s.Name == "" {
			continue
		}
		switch s.Type {
		case runopts.OptionBool:
			def, _ := s.Default.(bool)
			f.opts[s.Name] = fl.Bool(s.Name, def, s.Help)
		case runopts.OptionInt:
			def, _ := s.Default.(int)
			f.opts[s.Name] = fl.Int(s.Name, def, s.Help)
		case runopts.OptionList:
			if s.Repeat {
				f.opts[s.Name] = fl.StringArray(s.Name, nil, s.Help)
			} else {
				f.opts[s.Name] = fl.String(s.Name, "", s.Help)
			}
		default:
			// A string's flag starts empty: only one given counts, and
			// Normalize fills in the default.
			f.opts[s.Name] = fl.String(s.Name, "", s.Help)
		}
	}
	fl.StringVar(&f.review, "review", runopts.ReviewApprove, "what to do with reviewer requests: approve|reject|ask")
	fl.StringVar(&f.out, "out", "", "write the report to FILE (default: stdout)")
	fl.BoolVar(&f.json, "json", false, "print progress as NDJSON events on stdout")
}

// apply puts flags over config values (flags > env > config > defaults).
// Only flags given on the command line count, so a bad value (say
// --max-revisions -3) reaches validation instead of being taken as unset.
func (f *runFlags) apply(cfg *Config, changed func(string) bool) error {
	for _, s := range runopts.RunOptions {
		p, ok := f.opts[s.Name]
		if !ok || !changed(s.Name) {
			continue
		}
		var raw any
		switch p := p.(type) {
		case *string:
			raw = *p
		case *[]string:
			raw = *p
		case *int:
			raw = *p
		case *bool:
			raw = *p
		}
		v, err := s.Parse(raw)
		if err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		if s.KeepIfEmpty && s.IsEmpty(v) {
			continue
		}
		s.Set(&cfg.Options, v)
	}
	return nil
}

// config checks the flags and returns the config with them applied.
func (f *runFlags) config(cmd *cobra.Command) (*Config, error) {
	switch f.review {
	case runopts.ReviewApprove, runopts.ReviewReject, runopts.ReviewAsk:
	default:
		return nil, fmt.Errorf("%w: --review must be approve, reject or ask", errUsage)
	}
	cfg, err := loadConfig()
	if err != nil {
		return nil, err
	}
	if err := f.apply(cfg, cmd.Flags().Changed); err != nil {
		return nil, err
	}
	return cfg, nil
}

func runCommand() *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "run [flags] QUESTION",
		Short: "Research a question headless; exits 0 when a report was produced",
		Example: `  researchtui run "what limits the context length of transformers?"
  researchtui run --json --depth quick --out report.md "CRISPR off-target detection methods"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := f.config(cmd)
			if err != nil {
				return err
			}
			opt := cfg.defaultOptions()
			opt.Question = joinArgs(args)
			if err := opt.Normalize(); err != nil { // bad input fails before anything is opened
				return err
			}
			if err := checkCollections(cfg, opt.Collections); err != nil {
				return err
			}
			a, err := openResearch(cmd.Context(), cfg, "", opt.Model, opt.EmbedModel)
			if err != nil {
				return err
			}
			defer a.Close()
			r, err := a.engine.Start(cmd.Context(), opt)
			if err != nil {
				return err
			}
			warnUnavailable(cmd, f, r.ID(), a.engine.SourcesNotSearched(opt.Sources))
			return headless(cmd, a, r, f)
		},
	}
	f.register(cmd)
	return cmd
}

func resumeCommand() *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "resume [flags] ID",
		Short: "Resume an interrupted or awaiting-review session headless",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, a, err := f.openSession(cmd, args[0])
			if err != nil {
				return err
			}
			defer a.Close()
			if err := refuseFixed(cmd, "resume continues session "+args[0]+" with the options it started with", a.question(args[0]), resumeChanges); err != nil {
				return err
			}
			r, err := a.engine.Resume(cmd.Context(), args[0], nil)
			if err != nil {
				return err
			}
			return headless(cmd, a, r, f)
		},
	}
	f.register(cmd)
	hideFixed(cmd, resumeChanges)
	return cmd
}

// resumeChanges says which run options resume can change.
func resumeChanges(s runopts.OptionSpec) bool { return s.Resumable }

// hideFixed keeps out of cmd's help the run options it cannot change
// (keep says which it can): they are still parsed, so that refuseFixed
// can say why one given is refused instead of "unknown flag".
func hideFixed(cmd *cobra.Command, keep func(runopts.OptionSpec) bool) {
	for _, s := range runopts.RunOptions {
		if s.Name != "" && !keep(s) {
			_ = cmd.Flags().MarkHidden(s.Name) // registered by runFlags.register: it exists
		}
	}
}

// refuseFixed refuses the run options given on cmd's line that a command
// continuing session id cannot honour (keep says which it can), so that
// `resume --depth deep` does not quietly do nothing. what says what the
// command keeps ("resume continues session X with the options it started
// with").
func refuseFixed(cmd *cobra.Command, what, question string, keep func(runopts.OptionSpec) bool) error {
	var fixed, given []string
	for _, s := range runopts.RunOptions {
		if s.Name == "" || keep(s) || !cmd.Flags().Changed(s.Name) {
			continue
		}
		fixed = append(fixed, "--"+s.Name)
		given = append(given, "--"+s.Name+" "+flagValue(cmd, s.Name))
	}
	if len(fixed) == 0 {
		return nil
	}
	those := "that option"
	if len(fixed) > 1 {
		those = "those options"
	}
	q := `"QUESTION"`
	if question != "" {
		q = shellQuote(textkit.Clip(textkit.CleanLine(question), 200))
	}
	return fmt.Errorf("%w: %s, so %s cannot change it; to research with %s, start a new run: researchtui run %s %s",
		errUsage, what, strings.Join(fixed, ", "), those, strings.Join(given, " "), q)
}

// shellQuote quotes s for a POSIX shell: in single quotes, each single
// quote inside closed, escaped with a backslash and reopened.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// question is session id's question, "" when it cannot be read.
func (a *app) question(id string) string {
	sess, err := a.store.Session(id)
	if err != nil {
		return ""
	}
	return sess.Question
}

// flagValue is a flag's value as it would be typed again.
func flagValue(cmd *cobra.Command, name string) string {
	fl := cmd.Flags().Lookup(name)
	if sv, ok := fl.Value.(interface{ GetSlice() []string }); ok {
		return strings.Join(sv.GetSlice(), ",")
	}
	return fl.Value.String()
}

// openResearch is the preamble of the commands that run research (run,
// resume, ask): everything a run needs opened, and the backend checked for
// the models the run will use, so a run fails at once with the fix rather
// than minutes in. Those are the models of the session continued (its ID
// given: resume, ask), else models (run).
func openResearch(ctx context.Context, cfg *Config, sessionID string, models ...string) (*app, error) {
	a, err := openApp(cfg)
	if err != nil {
		return nil, err
	}
	if sessionID != "" {
		sess, err := a.store.Session(sessionID)
		if err != nil {
			a.Close()
			return nil, fmt.Errorf("%w: no session %q (see `researchtui sessions list`)", runopts.ErrBadInput, sessionID)
		}
		models = []string{sess.Model, sess.EmbedModel}
	}
	if err := checkBackend(ctx, a.backend, models...); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// openSession is openResearch for a session's ID (resume, ask), with the
// config the flags give.
func (f *runFlags) openSession(cmd *cobra.Command, id string) (*Config, *app, error) {
	cfg, err := f.config(cmd)
	if err != nil {
		return nil, nil, err
	}
	a, err := openResearch(cmd.Context(), cfg, id)
	return cfg, a, err
}

func warnUnavailable(cmd *cobra.Command, f *runFlags, id string, names []string) {
	if len(names) == 0 || f.json {
		return
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "note: not searched: %s; searching the others\n", strings.Join(names, "; "))
}

// headless consumes a run's events: NDJSON on stdout with --json, short
// progress lines on stderr otherwise; reviewer requests are decided by the
// --review policy. The report goes to --out or stdout.
func headless(cmd *cobra.Command, a *app, r *pipeline.Run, f *runFlags) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	enc := json.NewEncoder(stdout)
	p := &progress{w: stderr}
	var encErr error
	answers := stdinLines(cmd.InOrStdin())
	sess, report, err := pipeline.Drive(cmd.Context(), r, func(ev pipeline.Event) {
		if !f.json {
			p.show(ev)
		} else if encErr == nil {
			encErr = enc.Encode(ev)
		}
	}, func(ctx context.Context, rv *pipeline.ReviewRequest) (pipeline.Decision, error) {
		return decide(ctx, f.review, rv, answers, stderr)
	})
	if encErr != nil && err == nil {
		return encErr
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return &exitError{exitCancelled, fmt.Errorf("session %s was cancelled; `researchtui resume %s` continues it", sess.ID, sess.ID)}
		}
		return &exitError{exitFailed, fmt.Errorf("session %s failed: %w", sess.ID, err)}
	}
	if sess.Status != "completed" {
		fmt.Fprintf(stderr, "session %s is %s; `researchtui resume %s` continues it\n", sess.ID, strings.ReplaceAll(sess.Status, "_", " "), sess.ID)
		return &exitError{exitFailed, fmt.Errorf("no report was produced")}
	}
	if f.out != "" {
		if err := os.WriteFile(f.out, []byte(report), 0o644); err != nil {
			return err
		}
		if !f.json {
			fmt.Fprintf(stderr, "report written to %s\n", f.out)
		}
	} else if !f.json {
		fmt.Fprint(stdout, textkit.StripControls(report)) // clean already; a terminal gets no chances
	}
	if !f.json {
		fmt.Fprintf(stderr, "session %s: %d prompt + %d completion tokens, %d embedding tokens\n",
			sess.ID, sess.Usage.PromptTokens, sess.Usage.CompletionTokens, sess.Usage.EmbeddingTokens)
	}
	return nil
}

// stdinLines reads the terminal's lines for the review prompts, once it is
// first asked for one: a prompt abandoned (the review was decided in another
// researchtui) must not leave a reader behind that eats the next answer.
func stdinLines(in io.Reader) func() <-chan string {
	var once sync.Once
	lines := make(chan string)
	return func() <-chan string {
		once.Do(func() {
			go func() {
				defer close(lines)
				r := bufio.NewReader(in)
				for {
					line, err := readBoundedLine(r, maxAnswerBytes)
					if line != "" || err == nil {
						lines <- line
					}
					if err != nil {
						return
					}
				}
			}()
		})
		return lines
	}
}

// maxAnswerBytes bounds one typed answer: a sub-question or a decision
// fits in far less, and a line of any length would be held whole.
const maxAnswerBytes = 4096

// readBoundedLine reads one line (with its newline) and keeps at most max
// bytes of it; the rest of an overlong line is read and dropped.
func readBoundedLine(r *bufio.Reader, max int) (string, error) {
	var b []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if room := max - len(b); room > 0 {
			b = append(b, chunk[:min(len(chunk), room)]...)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return string(b), err
		}
	}
}

// readAnswer is the person's next line, unless the question is settled
// elsewhere first (ctx ends).
func readAnswer(ctx context.Context, answers func() <-chan string, out io.Writer) (string, error) {
	select {
	case l, ok := <-answers():
		if !ok {
			return "", errors.New("no answer on stdin")
		}
		return l, nil
	case <-ctx.Done():
		if errors.Is(context.Cause(ctx), pipeline.ErrDecidedElsewhere) {
			fmt.Fprintln(out, "\n  (decided in another researchtui)")
		}
		return "", ctx.Err()
	}
}

// decide applies the --review policy; "ask" reads the answer from the
// terminal, unless the review is decided elsewhere first (ctx ends).
func decide(ctx context.Context, policy string, rv *pipeline.ReviewRequest, answers func() <-chan string, out io.Writer) (pipeline.Decision, error) {
	if rv.Plan != nil { // asked for by --review-plan ask, whatever --review says
		return decidePlan(ctx, rv.Plan, answers, out)
	}
	if d, ok := pipeline.PolicyDecision(policy); ok {
		return d, nil
	}
	// The requests are the model's words: stripped before the terminal.
	fmt.Fprintf(out, "\nThe reviewer asks for %d revisions (round %d): %s\n", len(rv.Requests), rv.Round, textkit.CleanLine(rv.Summary))
	for i, q := range rv.Requests {
		fmt.Fprintf(out, "  %d. [%s] %s: %s\n", i+1, textkit.CleanLine(q.Kind), textkit.CleanLine(q.Section), textkit.CleanLine(q.Text))
	}
	for {
		fmt.Fprint(out, "Accept all (a, or Enter), reject and finalise (r), or list the numbers to accept (e.g. 1 3): ")
		line, err := readAnswer(ctx, answers, out)
		if err != nil {
			return pipeline.Decision{}, err
		}
		if d, ok := reviewAnswer(line, rv.Requests); ok {
			return d, nil
		}
		fmt.Fprintf(out, "%q is not an answer: type a, r, or numbers from 1 to %d.\n", textkit.Clip(textkit.CleanLine(line), 40), len(rv.Requests))
	}
}

// reviewAnswer reads a typed answer to the reviewer's requests; ok is
// false for one that says nothing clear (a typo is asked again, never
// taken as a rejection).
func reviewAnswer(line string, requests []pipeline.RevisionRequest) (pipeline.Decision, bool) {
	line = strings.TrimSpace(strings.ToLower(line))
	switch line {
	case "a", "accept", "y", "yes", "":
		return pipeline.Decision{Approve: true}, true
	case "r", "reject", "n", "no":
		return pipeline.Decision{Approve: false}, true
	}
	var ids []string
	for _, f := range strings.Fields(strings.ReplaceAll(line, ",", " ")) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > len(requests) {
			return pipeline.Decision{}, false
		}
		ids = append(ids, requests[n-1].ID)
	}
	return pipeline.Decision{Approve: true, Accepted: ids}, true
}
