package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/spf13/cobra"
)

// addToneOption appends a run option to runopts.RunOptions for the
// test's length, as a new option's one entry would be: the command line
// and the config file must take it without a change to their code (issue
// 37, point 1). Its value lives in *tone.
func addToneOption(t *testing.T) *string {
	t.Helper()
	tone := new(string)
	old := runopts.RunOptions
	t.Cleanup(func() { runopts.RunOptions = old })
	runopts.RunOptions = append(old[:len(old):len(old)], runopts.OptionSpec{
		Name: "tone", Key: "tone", Type: runopts.OptionString,
		Default: "plain", Choices: []string{"plain", "formal"},
		Help: "the report's tone: plain (default) or formal",
		Form: "Tone", MCP: "the report's tone: plain or formal",
		Access: runopts.Access{
			Get: func(*runopts.Options) any { return *tone },
			Set: func(_ *runopts.Options, v any) { *tone = v.(string) },
		},
	})
	return tone
}

// runRoot runs a command line in this process (the table a test changed
// is not in a child's), returning its output and error.
func runRoot(args ...string) (string, error) {
	root := rootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

func TestTableAddedOptionOnTheCommandLineAndInTheConfig(t *testing.T) {
	tone := addToneOption(t)
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "config.toml")
	t.Setenv("RESEARCHTUI_CONFIG", cfgPath)
	t.Setenv("RESEARCHTUI_DATA_DIR", filepath.Join(dir, "data"))

	// run --help lists it, with its help.
	help, err := runRoot("run", "--help")
	if err != nil || !strings.Contains(help, "--tone string") || !strings.Contains(help, "the report's tone: plain (default) or formal") {
		t.Fatalf("run --help (%v) does not offer --tone:\n%s", err, help)
	}

	// The config file's key reaches the run options...
	if err := os.WriteFile(cfgPath, []byte("tone = \"formal\"\ndepth = \"quick\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	o := cfg.defaultOptions()
	if *tone != "formal" || o.Depth != "quick" {
		t.Errorf("config tone = formal gave tone %q (depth %q)", *tone, o.Depth)
	}
	// ... and the flag wins over it.
	f := &runFlags{}
	cmd := &cobra.Command{}
	f.register(cmd)
	if err := cmd.Flags().Parse([]string{"--tone", "plain"}); err != nil {
		t.Fatal(err)
	}
	if err := f.apply(cfg, cmd.Flags().Changed); err != nil || *tone != "plain" {
		t.Errorf("--tone plain over the config: %v, tone %q", err, *tone)
	}

	// A value off its choices is refused by Normalize before anything
	// is opened, as bad input (exit 2).
	_, err = runRoot("run", "--tone", "shouty", "why is the sky blue?")
	if !errors.Is(err, runopts.ErrBadInput) || !strings.Contains(err.Error(), `unknown --tone "shouty" (use plain or formal)`) {
		t.Errorf("run --tone shouty: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); err == nil {
		t.Error("a refused run opened the data dir")
	}
}

// The config file's run options come from the table: each type read, and
// a value of the wrong type named.
func TestConfigRunOptionKeys(t *testing.T) {
	t.Parallel()
	cfg := Config{Options: runopts.DefaultOptions()}
	raw := "model = \"m\"\nsources = [\"arxiv\"]\nmax_revisions = 0\nrounds = 2\nthink = true\ndeadline = \"90s\"\nstraggler_grace = \"5s\"\ncollections = [\"Books\"]\n"
	if err := decodeConfig([]byte(raw), &cfg); err != nil {
		t.Fatal(err)
	}
	o := cfg.defaultOptions()
	if o.Model != "m" || len(o.Sources) != 1 || o.AutoSources || o.MaxRevisions != 0 || o.Rounds == nil || *o.Rounds != 2 || !o.Think ||
		o.Deadline.String() != "1m30s" || o.Grace.String() != "5s" || len(o.Collections) != 1 {
		t.Errorf("options from the config: %+v", o)
	}
	if d := (&Config{Options: runopts.DefaultOptions()}).defaultOptions(); d.MaxRevisions != 2 || d.Rounds != nil {
		t.Errorf("defaults: max revisions %d rounds %v", d.MaxRevisions, d.Rounds)
	}
	for _, bad := range []string{`depth = 3`, `deadline = "soon"`, `max_revisions = "two"`, `sources = [1]`} {
		c := Config{Options: runopts.DefaultOptions()}
		if err := decodeConfig([]byte(bad), &c); err == nil {
			t.Errorf("%s was read without complaint", bad)
		}
	}
}
