package cli

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/researchtui/researchtui/llm/ollamafake"
	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/history"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/store"
)

// sessions show says what was decided on each review round and the note
// typed with it (issue 36 #4).
func TestDecisionLineShowsTheNote(t *testing.T) {
	t.Parallel()
	d := history.SessionDetail{Reviews: []pipeline.ReviewRequest{{Requests: make([]pipeline.RevisionRequest, 3)}}}
	got := decisionLine(d, 0, pipeline.Decision{Approve: true, Accepted: []string{"a", "b"}, Note: "cut the\nbackground"})
	if got != `2 of 3 requests accepted; note: "cut the background"` {
		t.Errorf("decision line %q", got)
	}
	if got := decisionLine(d, 1, pipeline.Decision{}); got != "revisions rejected" {
		t.Errorf("rejected: %q", got)
	}
}

// A run asked to search sources this researchtui cannot search says what
// each needs (as doctor does), not that the build lacks them (issue 36 #6).
func TestRunSaysWhatOffSourcesNeed(t *testing.T) {
	t.Parallel()
	_, c, _ := fakeWorld(t, ollamafake.Options{})
	_, stderr, code, _ := c.run("run", "--depth", "quick", "--sources", "arxiv,materials,web", "How is software testing studied?")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"not searched: materials: needs MP_API_KEY", "web: no engine: set RESEARCHTUI_SEARXNG_URL"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "this build") {
		t.Errorf("stderr blames the build:\n%s", stderr)
	}
}

// Every flag's help reads as written: cobra takes a `quoted` word of a
// flag's usage as its value's placeholder ("--collection corpus add"), and
// --sources names every source (issue 36 #18, #22).
func TestFlagHelpReadsAsWritten(t *testing.T) {
	t.Parallel()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if strings.Contains(f.Usage, "`") {
				t.Errorf("%s --%s: a backquote in its help becomes the placeholder: %q", c.CommandPath(), f.Name, f.Usage)
			}
			if f.Name == "sources" {
				for _, s := range runopts.KnownSources {
					if !strings.Contains(f.Usage, s) {
						t.Errorf("%s --sources does not name %s: %q", c.CommandPath(), s, f.Usage)
					}
				}
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(rootCommand())
}

// A command given the wrong arguments is a usage error like a wrong flag:
// exit 2 with its usage line (issue 36 #19: library import with no file
// exited 1 with cobra's bare message).
func TestWrongArgumentsAreUsageErrors(t *testing.T) {
	t.Parallel()
	c := newCLI(t, "http://127.0.0.1:1", nil)
	for _, args := range [][]string{{"library", "import"}, {"sessions", "show"}, {"dirs", "extra"}} {
		_, stderr, code, _ := c.run(args...)
		if code != 2 || !strings.Contains(stderr, "usage: researchtui "+args[0]) || strings.Contains(stderr, "arg(s)") {
			t.Errorf("researchtui %s: exit %d, %q; want 2 and the usage line", strings.Join(args, " "), code, stderr)
		}
	}
}

// library import reads only a regular file, through a cap: a FIFO or a
// device is refused at once with exit 2 (issue 39 #4: a FIFO blocked,
// /dev/zero grew without bound).
func TestLibraryImportRefusesWhatIsNotAFile(t *testing.T) {
	t.Parallel()
	c := newCLI(t, "http://127.0.0.1:1", nil)
	fifo := filepath.Join(t.TempDir(), "refs.bib")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{fifo: "named pipe", "/dev/zero": "not a regular file", t.TempDir(): "a folder, not a reference file"} {
		_, stderr, code, took := c.run("library", "import", path)
		if code != 2 || !strings.Contains(stderr, want) || took > 30*time.Second {
			t.Errorf("library import %s: exit %d after %v, %q; want 2 and %q", path, code, took, stderr, want)
		}
	}
}

// sessions list and show name the stage a session stopped in, as the
// TUI's list does (user trial: both said only "interrupted").
func TestStatusNamesTheStage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		s    store.Session
		want string
	}{
		{store.Session{Status: store.StatusInterrupted, Stage: "write"}, "interrupted (at write)"},
		{store.Session{Status: store.StatusCompleted, Stage: "finalise"}, "completed"},
		{store.Session{Status: store.StatusCancelled}, "cancelled"},
	} {
		if got := statusAt(c.s); got != c.want {
			t.Errorf("%+v: %q, want %q", c.s, got, c.want)
		}
	}
}

// `sessions list` says how each session was asked where it is not a
// standard run in English, so two runs of one question differ (trial).
func TestSessionsListSaysHowEachWasAsked(t *testing.T) {
	t.Parallel()
	_, c, _ := fakeWorld(t, ollamafake.Options{})
	q := "How is software testing studied?"
	for _, args := range [][]string{{"--depth", "quick", "--kind", "brief"}, {"--depth", "quick"}} {
		if _, stderr, code, _ := c.run(append(append([]string{"run", "--sources", "arxiv"}, args...), q)...); code != 0 {
			t.Fatalf("run %v: exit %d\n%s", args, code, stderr)
		}
	}
	out, _, code, _ := c.run("sessions", "list")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 || !strings.Contains(out, " quick brief  ") || !strings.Contains(out, " quick        ") {
		t.Errorf("exit %d; the list does not say how each run was asked:\n%s", code, out)
	}
}
