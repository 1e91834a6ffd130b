package cli

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/researchtui/researchtui/ui"
)

// stateConfig is a config whose file holds config (a model, sources and
// a theme of its own) and whose data dir is a fresh folder.
func stateConfig(t *testing.T, config string) *Config {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("RESEARCHTUI_CONFIG", path)
	t.Setenv("RESEARCHTUI_DATA_DIR", filepath.Join(dir, "data"))
	cfg, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

const myConfig = "# mine\nmodel = \"qwen3:8b\" # the big one\nsources = [\"arxiv\"]\ntheme = \"nord\"\n"

// The form's last choice is kept in the data dir and starts the next
// form, over the config's values; the config file is never written.
func TestTheFormsChoiceIsRememberedOutsideTheConfig(t *testing.T) {
	cfg := stateConfig(t, myConfig)
	chosen := cfg.defaultOptions()
	chosen.Model, chosen.Depth, chosen.Kind, chosen.Language, chosen.Sources = "llama3.1:8b", "deep", "review", "de", []string{"openalex", "pubmed"}
	if err := saveTUIState(cfg.tuiStatePath(), ui.Settings{Form: ui.RememberedChoice(chosen)}, cfg.Theme); err != nil {
		t.Fatal(err)
	}
	if err := saveTUIState(cfg.tuiStatePath(), ui.Settings{Theme: "gruvbox"}, cfg.Theme); err != nil {
		t.Fatal(err)
	}
	if raw, _ := os.ReadFile(cfg.configPath); string(raw) != myConfig {
		t.Errorf("the config file changed:\n%s", raw)
	}
	state, err := loadTUIState(cfg.tuiStatePath())
	if err != nil {
		t.Fatal(err)
	}
	o := cfg.tuiOptions(state)
	if o.Model != "llama3.1:8b" || o.Depth != "deep" || o.Kind != "review" || o.Language != "de" ||
		!reflect.DeepEqual(o.Sources, []string{"openalex", "pubmed"}) || o.AutoSources {
		t.Errorf("the next form starts from %q %q %q %q %v (auto %v), not the last choice", o.Model, o.Depth, o.Kind, o.Language, o.Sources, o.AutoSources)
	}
	if got := state.theme(cfg.Theme); got != "gruvbox" {
		t.Errorf("theme %q, want the one chosen with t", got)
	}
	// Saving the theme kept the form's choice, and `run` is unchanged.
	if o := cfg.defaultOptions(); o.Model != "qwen3:8b" || !reflect.DeepEqual(o.Sources, []string{"arxiv"}) {
		t.Errorf("run's options changed: %q %v", o.Model, o.Sources)
	}
	// An empty source list is "chosen by the question's topic".
	chosen.Sources = nil
	if err := saveTUIState(cfg.tuiStatePath(), ui.Settings{Form: ui.RememberedChoice(chosen)}, cfg.Theme); err != nil {
		t.Fatal(err)
	}
	state, _ = loadTUIState(cfg.tuiStatePath())
	if o := cfg.tuiOptions(state); len(o.Sources) != 0 || !o.AutoSources || o.Model != "llama3.1:8b" {
		t.Errorf("sources %v auto %v model %q: want by topic, the model kept", o.Sources, o.AutoSources, o.Model)
	}
}

// Once the person edits the config's theme, the config's wins over the
// one chosen with t before.
func TestAnEditedConfigThemeWins(t *testing.T) {
	cfg := stateConfig(t, myConfig)
	if err := saveTUIState(cfg.tuiStatePath(), ui.Settings{Theme: "light"}, "nord"); err != nil {
		t.Fatal(err)
	}
	state, _ := loadTUIState(cfg.tuiStatePath())
	if got := state.theme("nord"); got != "light" {
		t.Errorf("theme %q, want light (chosen with t over nord)", got)
	}
	if got := state.theme("solarized-light"); got != "solarized-light" {
		t.Errorf("theme %q, want the config's, edited since", got)
	}
	// Seen edited once, the choice is forgotten: setting the config back
	// to nord does not bring light back.
	if err := forgetStaleTheme(cfg.tuiStatePath(), state, "solarized-light"); err != nil {
		t.Fatal(err)
	}
	state, _ = loadTUIState(cfg.tuiStatePath())
	if got := state.theme("nord"); got != "nord" {
		t.Errorf("theme %q after the config went back to nord, want nord", got)
	}
}

// Remembered values a run would refuse (a hand edit, an option's value
// since removed) are dropped, each on its own: the form starts from the
// config's value instead of failing every start.
func TestRememberedValuesARunRefusesAreDropped(t *testing.T) {
	cfg := stateConfig(t, myConfig+"depth = \"quick\"\n")
	state := tuiState{Form: map[string]any{"model": "llama3.1:8b", "depth": "ultra", "sources": []any{"arxiv", "bogus"},
		"kind": "essay", "language": "xx-invalid!!", "review_plan": "ask"}}
	o := cfg.tuiOptions(state)
	if o.Model != "llama3.1:8b" || o.ReviewPlan != "ask" {
		t.Errorf("valid choices lost: model %q review_plan %q", o.Model, o.ReviewPlan)
	}
	if o.Depth != "quick" || !reflect.DeepEqual(o.Sources, []string{"arxiv"}) || o.Kind != "" || o.Language != "" {
		t.Errorf("refused values kept: depth %q sources %v kind %q language %q", o.Depth, o.Sources, o.Kind, o.Language)
	}
	o.Question = "why?"
	if err := o.Normalize(); err != nil {
		t.Errorf("the form's options do not start a run: %v", err)
	}
}

// The [tui] table earlier versions wrote into the config is still read,
// below the state file; values of the wrong type and keys that are no
// remembered option are left out.
func TestTheLegacyTUITableIsReadBelowTheState(t *testing.T) {
	cfg := stateConfig(t, myConfig+"\n[tui]\ndepth = \"quick\"\nkind = 3\nverify = \"off\"\nsources = []\n")
	o := cfg.tuiOptions(tuiState{})
	if o.Depth != "quick" || o.Kind != "" || o.Verify == "off" || !o.AutoSources {
		t.Errorf("from [tui]: depth %q kind %q verify %q auto %v", o.Depth, o.Kind, o.Verify, o.AutoSources)
	}
	o = cfg.tuiOptions(tuiState{Form: map[string]any{"depth": "deep"}})
	if o.Depth != "deep" {
		t.Errorf("depth %q, want the state's over [tui]", o.Depth)
	}
}

// A state file that is not one (broken JSON, a folder) is reported with
// what to do, the TUI starts from the config, and the next save replaces
// a broken file.
func TestABrokenStateFileIsReplaced(t *testing.T) {
	cfg := stateConfig(t, myConfig)
	path := cfg.tuiStatePath()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(`{"theme": "nord", "form": {`), 0o600); err != nil {
		t.Fatal(err)
	}
	state, err := loadTUIState(path)
	if err == nil || !reflect.DeepEqual(state, tuiState{}) {
		t.Fatalf("a broken file read as %+v, %v", state, err)
	}
	if err := saveTUIState(path, ui.Settings{Theme: "light"}, "nord"); err != nil {
		t.Fatal(err)
	}
	if state, err := loadTUIState(path); err != nil || state.theme("nord") != "light" {
		t.Errorf("after a save: %+v, %v", state, err)
	}
	dir := filepath.Join(t.TempDir(), tuiStateFile)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := loadTUIState(dir); err == nil {
		t.Error("a folder read as a state file")
	}
}

// A named pipe where the state file should be does not block the TUI's
// start: it is refused as not a state file.
func TestAStateFileThatIsAPipeDoesNotBlock(t *testing.T) {
	path := filepath.Join(t.TempDir(), tuiStateFile)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	done := make(chan error, 1)
	go func() { _, err := loadTUIState(path); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "named pipe") {
			t.Errorf("a FIFO read as a state file: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reading a FIFO as the state file blocked")
	}
}
