package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/safefile"
	"github.com/researchtui/researchtui/ui"
)

// What the TUI remembers between sessions (the theme chosen with t, and
// the new-research form's last choice of each option the table marks
// Remember) lives in tui-state.json in the data dir. The TUI never writes
// the person's config file: the config says what they set, the state what
// they last chose. The state's choices start the next form over the
// config's values and don't change what `researchtui run` does. The
// [tui] table that earlier versions wrote into the config is still read,
// below the state.

// tuiStateFile is the state file's name in the data dir.
const tuiStateFile = "tui-state.json"

// maxTUIStateBytes bounds what is read of the state file: it holds a
// theme and a few choices.
const maxTUIStateBytes = 64 << 10

// tuiState is the state file: the theme and the form's choices by option
// key, each decoded by its option's type when read.
type tuiState struct {
	Theme string `json:"theme,omitempty"`
	// ThemeOver is the config's theme when Theme was chosen: once the
	// person edits the config's theme, the config's wins again.
	ThemeOver string         `json:"theme_over,omitempty"`
	Form      map[string]any `json:"form,omitempty"`
}

// theme is the theme the TUI opens with: the one last chosen with t,
// unless the config's has changed since.
func (s tuiState) theme(configured string) string {
	if s.Theme != "" && s.ThemeOver == configured {
		return s.Theme
	}
	return configured
}

// forgetStaleTheme drops from the state file at path a theme chosen with t
// over a config theme that has been edited since: the edit wins from then
// on, also once the config's theme is set back to what it was.
func forgetStaleTheme(path string, s tuiState, configured string) error {
	if s.Theme == "" || s.ThemeOver == configured {
		return nil
	}
	s.Theme, s.ThemeOver = "", ""
	return writeTUIState(path, s)
}

func (c *Config) tuiStatePath() string { return filepath.Join(c.dataDir, tuiStateFile) }

// loadTUIState reads the state file; a missing one is an empty state.
func loadTUIState(path string) (tuiState, error) {
	var s tuiState
	// O_NONBLOCK: a named pipe in its place must not block the start.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() > maxTUIStateBytes {
		return s, fmt.Errorf("%s is not a state file the TUI wrote (%s); delete it to start afresh", path, describeStateFile(fi, err))
	}
	if err := json.NewDecoder(io.LimitReader(f, maxTUIStateBytes)).Decode(&s); err != nil { // bounded: it may grow after the Stat
		return tuiState{}, fmt.Errorf("%s cannot be read (%v); the next theme or form choice replaces it", path, err)
	}
	return s, nil
}

func describeStateFile(fi fs.FileInfo, err error) string {
	switch {
	case err != nil:
		return err.Error()
	case !fi.Mode().IsRegular():
		return safefile.Kind(fi.Mode())
	}
	return fmt.Sprintf("%d bytes", fi.Size())
}

// choice is the state's form choice, each value read as its option's
// type; a value that is not one is left out.
func (s tuiState) choice() ui.FormChoice { return formChoice(s.Form) }

// formChoice reads a table of remembered choices (the state's, or the
// config's legacy [tui]) by option key, each value as its option's type
// (OptionSpec.Parse, as the config's keys are read); what is not an
// option the TUI remembers, not of its type, or not a value a run takes
// (a depth or source no longer known, a hand edit) is left out, so the
// form starts from the config's value instead of failing every start.
func formChoice(table map[string]any) ui.FormChoice {
	c := ui.FormChoice{}
	for _, spec := range runopts.RunOptions {
		raw, ok := table[spec.Key]
		if !spec.Remember || !ok {
			continue
		}
		if v, err := spec.Parse(raw); err == nil && spec.Accepts(v) {
			c[spec.Key] = v
		}
	}
	return c
}

// saveTUIState merges set into the state file at path: a theme (chosen
// over the config's configTheme) or form choice set replaces the state's,
// what is not set stays. A state file that cannot be read is replaced.
func saveTUIState(path string, set ui.Settings, configTheme string) error {
	s, err := loadTUIState(path)
	if err != nil {
		s = tuiState{}
	}
	if set.Theme != "" {
		s.Theme, s.ThemeOver = set.Theme, configTheme
	}
	if set.Form != nil {
		s.Form = map[string]any{}
		for k, v := range set.Form {
			s.Form[k] = v
		}
	}
	return writeTUIState(path, s)
}

func writeTUIState(path string, s tuiState) error {
	out, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return safefile.WriteAtomic(path, append(out, '\n'), 0o600)
}
