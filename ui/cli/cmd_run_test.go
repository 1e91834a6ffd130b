package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/runopts"
)

// The headless review prompt prints the reviewer model's words: escape
// sequences in them never reach the terminal, and the person's answer is
// read as before (here: accept request 2 only).
func TestReviewPromptStripsControlSequences(t *testing.T) {
	t.Parallel()
	rv := &pipeline.ReviewRequest{Round: 1, Summary: "fine\x1b]0;pwned\x07 summary\x1b[2J", Requests: []pipeline.RevisionRequest{
		{ID: "r1", Kind: "clarity", Section: "Intro\x1b[31m", Text: "one\nline\x9b2J"},
		{ID: "r2", Kind: "structure", Section: "Gaps", Text: "tie them"},
	}}
	answers := stdinLines(strings.NewReader("2\n"))
	var out bytes.Buffer
	d, err := decide(context.Background(), runopts.ReviewAsk, rv, answers, &out)
	if err != nil || !d.Approve || len(d.Accepted) != 1 || d.Accepted[0] != "r2" {
		t.Fatalf("decision %+v %v", d, err)
	}
	if s := out.String(); strings.ContainsAny(s, "\x1b\x07\u009b") || strings.Contains(s, "\x9b") || !strings.Contains(s, "fine summary") || !strings.Contains(s, "1. [clarity] Intro: one line\n") {
		t.Errorf("the prompt:\n%q", s)
	}
}

// TestReviewPromptSaysWhatEnterDoes (issue 47): the prompt says that a
// bare Enter accepts every request, and an answer that is not one (a
// typo, a number out of range) is asked again, not taken as "reject and
// finalise".
func TestReviewPromptSaysWhatEnterDoes(t *testing.T) {
	t.Parallel()
	rv := &pipeline.ReviewRequest{Round: 1, Summary: "s", Requests: []pipeline.RevisionRequest{{ID: "r1", Text: "a"}, {ID: "r2", Text: "b"}}}
	var out bytes.Buffer
	d, err := decide(context.Background(), runopts.ReviewAsk, rv, stdinLines(strings.NewReader("2x\n7\n\n")), &out)
	if err != nil || !d.Approve || len(d.Accepted) != 0 {
		t.Fatalf("decision %+v %v; want all accepted by the Enter after two bad answers", d, err)
	}
	s := out.String()
	if !strings.Contains(s, "Accept all (a, or Enter)") || strings.Count(s, "is not an answer: type a, r, or numbers from 1 to 2") != 2 {
		t.Errorf("the prompt:\n%s", s)
	}
}

// TestScreenConfigAndFlag: the config key `screen` reaches the run's
// options, and --screen given on the command line wins over it.
func TestScreenConfigAndFlag(t *testing.T) {
	t.Parallel()
	cfg := Config{Options: runopts.DefaultOptions()}
	if err := decodeConfig([]byte(`screen = "off"`), &cfg); err != nil {
		t.Fatal(err)
	}
	if o := cfg.defaultOptions(); o.Screen != runopts.ScreenOff {
		t.Errorf("config screen = off gave options screen %q", o.Screen)
	}
	f := &runFlags{}
	cmd := &cobra.Command{}
	f.register(cmd)
	if err := cmd.Flags().Parse([]string{"--screen", "on"}); err != nil {
		t.Fatal(err)
	}
	if err := f.apply(&cfg, cmd.Flags().Changed); err != nil {
		t.Fatal(err)
	}
	if o := cfg.defaultOptions(); o.Screen != runopts.ScreenOn {
		t.Errorf("--screen on over config off gave %q", o.Screen)
	}
	unset := &runFlags{}
	unset.register(&cobra.Command{})
	cfg.Screen = runopts.ScreenOff
	if err := unset.apply(&cfg, func(string) bool { return false }); err != nil {
		t.Fatal(err)
	}
	if cfg.Screen != runopts.ScreenOff {
		t.Errorf("an unset flag changed the config's screen to %q", cfg.Screen)
	}
}

// TestMistypedCommandIsRefused: a first argument of one or two words
// without a question's shape is a mistyped command, not research: it is
// refused with exit 2 (naming the command meant, when one is close), and
// no TUI opens and no session is made (issue 36 item 3).
func TestMistypedCommandIsRefused(t *testing.T) {
	t.Parallel()
	c := newCLI(t, "http://127.0.0.1:1", nil)
	for args, want := range map[string]string{
		"sesions list": `did you mean "sessions"?`,
		"doctr":        `did you mean "doctor"?`,
		"transformers": `"transformers" is not a command`,
	} {
		_, stderr, code, _ := c.run(strings.Fields(args)...)
		if code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("researchtui %s: exit %d, %q; want 2 and %q", args, code, stderr, want)
		}
	}
	// A typo under a command that groups others is refused too, not
	// answered with the group's help and exit 0.
	for args, want := range map[string]string{
		"sessions lst": `unknown command "lst" for "researchtui sessions"; did you mean "list"?`,
		"store stat":   `unknown command "stat" for "researchtui store"`,
	} {
		_, stderr, code, _ := c.run(strings.Fields(args)...)
		if code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("researchtui %s: exit %d, %q; want 2 and %q", args, code, stderr, want)
		}
	}
	if _, _, code, _ := c.run("sessions"); code != 0 {
		t.Errorf("researchtui sessions (its help) exits %d", code)
	}
	if stdout, _, _, _ := c.run("sessions", "list"); strings.Contains(stdout, "sesions") {
		t.Errorf("a refused typo made a session: %s", stdout)
	}
	for _, q := range [][]string{{"how do transformers handle long context?"}, {"attention", "in", "transformers"}, {"why?"}} {
		if err := notACommand(rootCommand(), q); err != nil {
			t.Errorf("%q refused as a command: %v", q, err)
		}
	}
}
