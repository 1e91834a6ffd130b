package cli

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/researchtui/researchtui/search"
)

// TestConfigFileIsReadWithBounds: a config that is a FIFO, a device, huge,
// or a flood of tables is refused at once with a message that names the
// problem, instead of blocking, reading forever, or decoding for minutes
// (issue 39 #8: 100,000 tables took 19.5 s).
func TestConfigFileIsReadWithBounds(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.toml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.toml")
	if err := os.WriteFile(big, []byte(strings.Repeat("# comment\n", 20000)), 0o600); err != nil {
		t.Fatal(err)
	}
	var tables strings.Builder
	for i := 0; tables.Len() < 60<<10; i++ {
		fmt.Fprintf(&tables, "[t%d]\n", i)
	}
	flood := filepath.Join(dir, "tables.toml")
	if err := os.WriteFile(flood, []byte(tables.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.toml")
	if err := os.WriteFile(good, []byte("model = \"qwen3:8b\"\n[extra]\nx = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		fifo:        "not a regular file: a named pipe (FIFO)",
		"/dev/zero": "not a regular file: a character device",
		dir:         "not a regular file: a folder",
		big:         "at most 65536",
		flood:       "reads at most 1000",
	} {
		done := make(chan error, 1)
		go func() { _, err := readConfigFile(path); done <- err }()
		select {
		case err := <-done:
			if err == nil || !errors.Is(err, errUsage) || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v; want a usage error saying %q", filepath.Base(path), err, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: reading the config file hangs", filepath.Base(path))
		}
	}
	if raw, err := readConfigFile(good); err != nil || !strings.Contains(string(raw), "qwen3:8b") {
		t.Errorf("a plain config: %q, %v", raw, err)
	}
	if _, err := readConfigFile(filepath.Join(dir, "none.toml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing config: %v; want not-exist (which is fine)", err)
	}
}

// TestDoctorPrintsConfiguredNamesInert: a model name from the config with
// escape sequences and a bidi override reaches doctor's output cleaned
// (issue 39 #9).
func TestDoctorPrintsConfiguredNamesInert(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	d := &doctor{w: &b}
	name := "qwen\x1b[2J\u202e3:8b"
	d.ok("chat model", name+" is served")
	d.info("models", name)
	d.bad("embedding model", name+" is not served", "ollama pull "+name)
	if out := b.String(); strings.ContainsAny(out, "\x1b\u202e") || !strings.Contains(out, "qwen3:8b is not served") {
		t.Errorf("doctor printed %q", out)
	}
}

// doctorSources runs doctor's check of the sources under a config file
// holding config, with every source's address a closed port (no test
// reaches the network) and no keys, then the variables of set ("NAME",
// "value", …); it returns the problems and the lines.
func doctorSources(t *testing.T, config string, set ...string) (int, string) {
	t.Helper()
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("RESEARCHTUI_CONFIG", cfgPath)
	t.Setenv("RESEARCHTUI_DATA_DIR", filepath.Join(dir, "data"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	for _, d := range search.Descriptors {
		if d.URLEnv != "" {
			t.Setenv(d.URLEnv, "http://127.0.0.1:1")
		}
		if d.KeyEnv != "" && !strings.Contains(d.KeyEnv, " ") {
			t.Setenv(d.KeyEnv, "")
		}
	}
	for _, env := range []string{"RESEARCHTUI_SEARXNG_URL", "BRAVE_API_KEY", "TAVILY_API_KEY"} {
		t.Setenv(env, "") // the web source: off without an engine
	}
	for i := 0; i+1 < len(set); i += 2 {
		t.Setenv(set[i], set[i+1])
	}
	cfg, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	d := &doctor{w: &b}
	d.checkSources(t.Context(), cfg)
	return d.problems, b.String()
}

// doctor reports a source that does not answer, but counts it a problem
// only when the config's sources include it (issue 36 #12: exit 1 for
// pubmed and crossref that the person never searches).
func TestDoctorFailsOnlyOnSourcesInUse(t *testing.T) {
	problems, out := doctorSources(t, "sources = [\"arxiv\"]\n")
	if problems != 1 || !strings.Contains(out, "✗ arxiv") || !strings.Contains(out, "pubmed") || !strings.Contains(out, "not in your config's sources") {
		t.Errorf("%d problems (want 1: arxiv, the one in use):\n%s", problems, out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "✗ arxiv") && strings.Count(line, "arxiv") > 1 {
			t.Errorf("the source's name said twice: %q", line)
		}
	}
}

// A config whose sources cannot all run is a problem doctor names: a name
// that is no source (run refuses it), and a source named there that is off
// (every run goes without it). Off sources the config does not name stay
// notes.
func TestDoctorNamesConfiguredSourcesThatCannotRun(t *testing.T) {
	problems, out := doctorSources(t, "sources = [\"web\", \"bogus\"]\n")
	if problems != 2 || !strings.Contains(out, `✗ sources`) || !strings.Contains(out, `"bogus", which is no source`) ||
		!strings.Contains(out, "✗ web") || !strings.Contains(out, "· materials") {
		t.Errorf("%d problems (want 2: bogus, and web which is off):\n%s", problems, out)
	}
}

// A source that answers with an error says its status, not an address
// cut off in its query string (a trial saw "unreachable: GET
// http://…/search?fields=title%2Cabstract%2…").
func TestDoctorSaysTheStatusASourceAnswers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "no such route", http.StatusNotFound)
	}))
	t.Cleanup(srv.Close)
	problems, out := doctorSources(t, "sources = [\"semanticscholar\"]\n", "RESEARCHTUI_SEMANTICSCHOLAR_URL", srv.URL+"/wrong")
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "semanticscholar") {
			line = l
		}
	}
	if problems != 1 || !strings.Contains(line, "answers HTTP 404 Not Found at "+srv.URL+"/wrong/graph/v1/paper/search (") || strings.Contains(line, "fields=") {
		t.Errorf("%d problems; the line: %q\n%s", problems, line, out)
	}
	if !strings.Contains(out, "RESEARCHTUI_SEMANTICSCHOLAR_URL") {
		t.Errorf("the fix names no variable:\n%s", out)
	}
}

// A source whose address is no URL says so, not "unreachable … check the
// network" (trial: RESEARCHTUI_CROSSREF_URL=notaurl).
func TestDoctorSaysAnAddressIsNoURL(t *testing.T) {
	_, out := doctorSources(t, "sources = [\"crossref\"]\n", "RESEARCHTUI_CROSSREF_URL", "notaurl")
	if !strings.Contains(out, `its address is not an http(s) URL: "notaurl"`) || !strings.Contains(out, "set RESEARCHTUI_CROSSREF_URL") || strings.Contains(out, "check the network") {
		t.Errorf("doctor on a bad address:\n%s", out)
	}
}
