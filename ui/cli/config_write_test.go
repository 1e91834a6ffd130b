package cli

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"

	"github.com/researchtui/researchtui/ui"
)

// TestGoTOMLDropsComments records why the config is edited as text: a
// decode/encode round trip through go-toml/v2 loses the person's comments.
// If a go-toml release keeps them one day, this fails and the text editing
// can be reconsidered.
func TestGoTOMLDropsComments(t *testing.T) {
	src := "# my settings\nmodel = \"qwen3:8b\" # the one that fits my GPU\n"
	var m map[string]any
	if err := toml.Unmarshal([]byte(src), &m); err != nil {
		t.Fatal(err)
	}
	out, err := toml.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "#") {
		t.Fatalf("go-toml kept comments on a round trip:\n%s", out)
	}
}

func TestEditTOML(t *testing.T) {
	theme := func(v string) []tomlEdit { return []tomlEdit{{key: "theme", value: v}} }
	form := func(depth string, srcs ...string) []tomlEdit {
		if srcs == nil {
			srcs = []string{}
		}
		return []tomlEdit{{table: "tui", key: "depth", value: depth}, {table: "tui", key: "sources", value: srcs}}
	}
	cases := []struct {
		name, src string
		edits     []tomlEdit
		want      string
	}{
		{"replace keeps comments", "# mine\nmodel = \"qwen3:8b\" # fits my GPU\ntheme = \"dark\"   # for now\n\n[other]\nx = 1\n",
			theme("nord"),
			"# mine\nmodel = \"qwen3:8b\" # fits my GPU\ntheme = \"nord\"   # for now\n\n[other]\nx = 1\n"},
		{"literal string replaced", "theme = 'dark'\n", theme("light"), "theme = \"light\"\n"},
		{"insert after the last top-level key", "# mine\nmodel = \"m\"\n\n# sources I trust\n[search]\nx = 1\n",
			theme("nord"),
			"# mine\nmodel = \"m\"\ntheme = \"nord\"\n\n# sources I trust\n[search]\nx = 1\n"},
		{"insert above the first table and its comment", "# header comment\n\n# about search\n[search]\nx = 1\n",
			theme("nord"),
			"# header comment\n\ntheme = \"nord\"\n\n# about search\n[search]\nx = 1\n"},
		{"empty file", "", theme("nord"), "theme = \"nord\"\n"},
		{"no trailing newline", "model = \"m\"", theme("nord"), "model = \"m\"\ntheme = \"nord\"\n"},
		{"new table appended", "model = \"m\" # mine\n", form("deep", "arxiv", "pubmed"),
			"model = \"m\" # mine\n\n[tui]\ndepth = \"deep\"\nsources = [\"arxiv\", \"pubmed\"]\n"},
		{"table kept, key replaced, key added", "[tui]\n# last used\ndepth = \"quick\" # quick is enough\n\n[more]\ny = 2\n", form("standard"),
			"[tui]\n# last used\ndepth = \"standard\" # quick is enough\nsources = []\n\n[more]\ny = 2\n"},
		{"multi-line array replaced", "[tui]\nsources = [\n  \"arxiv\", # physics\n  \"openalex\",\n]\ndepth = \"deep\"\n", form("deep", "crossref"),
			"[tui]\nsources = [\"crossref\"]\ndepth = \"deep\"\n"},
		{"dotted keys stay dotted", "model = \"m\"\ntui.depth = \"quick\"\n", form("deep", "arxiv"),
			"model = \"m\"\ntui.depth = \"deep\"\ntui.sources = [\"arxiv\"]\n"},
		{"CRLF kept", "model = \"m\"\r\n", theme("nord"), "model = \"m\"\r\ntheme = \"nord\"\r\n"},
		{"same key in another table untouched", "[other]\ntheme = \"x\"\n", theme("nord"),
			"theme = \"nord\"\n\n[other]\ntheme = \"x\"\n"},
		{"quotes escaped", "", theme(`a"b\c`), "theme = \"a\\\"b\\\\c\"\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := editTOML([]byte(c.src), c.edits)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}

// Files it cannot edit safely are left alone with an error, never mangled.
func TestEditTOMLRefuses(t *testing.T) {
	for name, src := range map[string]string{
		"invalid":      "model = \n",
		"inline table": "tui = { depth = \"quick\" }\n",
	} {
		t.Run(name, func(t *testing.T) {
			if out, err := editTOML([]byte(src), []tomlEdit{{table: "tui", key: "sources", value: []string{"arxiv"}}}); err == nil {
				t.Fatalf("edited %q into %q", src, out)
			}
		})
	}
}

// TestSettingsSurviveRestart: the theme and the form's last choice written
// by the TUI are what the next start reads; the person's comments and keys
// stay; a missing file and directory are created.
func TestSettingsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "nested", "researchtui", "config.toml")
	t.Setenv("RESEARCHTUI_CONFIG", path)
	t.Setenv("RESEARCHTUI_DATA_DIR", filepath.Join(dir, "data"))
	if err := saveSettings(path, ui.Settings{Theme: "nord"}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("a new config file is %v, want 0600 (it may hold an API key)", fi.Mode().Perm())
	}
	cfg, err := loadConfig()
	if err != nil || cfg.Theme != "nord" {
		t.Fatalf("after a restart: theme %q, %v", cfg.Theme, err)
	}

	// The person's file: comments and other keys stay byte for byte.
	mine := "# my researchtui\nmodel = \"llama3.1:8b\" # fits my GPU\ndepth = \"quick\"   # for scripts\ntheme = \"nord\"\n\n# polite pool\ncontact_email = \"me@example.org\"\n"
	if err := os.WriteFile(path, []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil { // whatever the umask
		t.Fatal(err)
	}
	if err := saveSettings(path, ui.Settings{Theme: "gruvbox", Form: &ui.FormChoice{Model: "qwen3:14b", Depth: "deep", Kind: "review", Language: "de", Sources: []string{"pubmed"}}}); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	want := strings.Replace(mine, `theme = "nord"`, `theme = "gruvbox"`, 1) + "\n[tui]\nmodel = \"qwen3:14b\"\nkind = \"review\"\nlanguage = \"de\"\ndepth = \"deep\"\nsources = [\"pubmed\"]\n"
	if string(raw) != want {
		t.Fatalf("config after saving:\n%s\nwant:\n%s", raw, want)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("the file's mode changed to %v", fi.Mode().Perm())
	}
	cfg, err = loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	o := cfg.tuiOptions()
	if cfg.Theme != "gruvbox" || o.Model != "qwen3:14b" || o.Depth != "deep" || o.Kind != "review" || o.Language != "de" || !reflect.DeepEqual(o.Sources, []string{"pubmed"}) || o.AutoSources {
		t.Errorf("after a restart: theme %q, form depth %q sources %v auto %v", cfg.Theme, o.Depth, o.Sources, o.AutoSources)
	}
	if d := cfg.defaultOptions(); d.Depth != "quick" || d.Model != "llama3.1:8b" || d.Kind != "" {
		t.Errorf("the form's choice changed what `run` does: depth %q model %q, want the configured quick and llama3.1:8b", d.Depth, d.Model)
	}

	// No sources ticked is remembered as "by topic".
	if err := saveSettings(path, ui.Settings{Form: &ui.FormChoice{Depth: "standard"}}); err != nil {
		t.Fatal(err)
	}
	cfg, _ = loadConfig()
	if o := cfg.tuiOptions(); !o.AutoSources || len(o.Sources) != 0 {
		t.Errorf("no sources ticked: %v auto %v", o.Sources, o.AutoSources)
	}
}

// A config file that is a link (a dotfiles repository) stays a link.
func TestSaveSettingsFollowsLink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "dotfiles", "researchtui.toml")
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(target, []byte("model = \"m\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "config.toml")
	if err := os.Symlink(target, link); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if err := saveSettings(link, ui.Settings{Theme: "light"}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced by a file")
	}
	if raw, _ := os.ReadFile(target); string(raw) != "model = \"m\"\ntheme = \"light\"\n" {
		t.Errorf("target:\n%s", raw)
	}
}

// An invalid file is not touched.
func TestSaveSettingsLeavesBrokenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	bad := "model = \"m\nthis is not toml\n"
	if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := saveSettings(path, ui.Settings{Theme: "light"}); err == nil {
		t.Fatal("saving into an invalid file did not fail")
	}
	if raw, _ := os.ReadFile(path); string(raw) != bad {
		t.Errorf("the invalid file was changed:\n%s", raw)
	}
}
