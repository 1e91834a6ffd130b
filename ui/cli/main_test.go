package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/researchtui/researchtui/llm/ollamafake"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/search/sourcefake"
	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/testkit"
)

// The test binary doubles as the researchtui binary: with
// RESEARCHTUI_TEST_MAIN=1 it runs the command line and exits, so tests see
// real exit codes and real separate processes (for the store lock). It
// stops on an interrupt as main.go does: gracefully, and also when it was
// started with SIGINT ignored (a test run in the background of a shell).
func TestMain(m *testing.M) {
	if os.Getenv("RESEARCHTUI_TEST_MAIN") == "1" {
		signal.Ignore(syscall.SIGPIPE)
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := Run(ctx, os.Args[1:])
		stop()
		os.Exit(code)
	}
	// Its tests wait on child processes: about 1.1 cores busy at 2 at
	// a time, 232 s; 151 s at 4 (-race, 2 cores).
	testkit.WaitingTestsInParallel(8)
	os.Exit(m.Run())
}

// sharedFixture is the path of a file under ../shared/fixtures, beside the
// module root (the directory holding go.mod), wherever the test runs from.
func sharedFixture(rel string) string {
	dir, _ := os.Getwd()
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, "..", "shared", "fixtures", filepath.FromSlash(rel))
		}
		if filepath.Dir(d) == d {
			return filepath.Join(dir, "..", "shared", "fixtures", filepath.FromSlash(rel))
		}
	}
}

type cli struct {
	t   *testing.T
	env []string
	dir string
}

// newCLI sets up a data dir and config with full-text downloads off (the
// recorded responses link to the real internet).
// modelCLI is a cli whose model server is an ollamafake of opt, closed
// when the test ends, and which searches nothing.
func modelCLI(t *testing.T, opt ollamafake.Options) (*cli, *ollamafake.Server) {
	oll := ollamafake.New(opt)
	t.Cleanup(oll.Close)
	return newCLI(t, oll.URL, nil), oll
}

// scriptedCLI is a cli whose model answers by script and whose sources
// are sourcefake's recordings; both close when the test ends.
func scriptedCLI(t *testing.T, script *pipelinetest.Script) (*cli, *ollamafake.Server, *sourcefake.Server) {
	oll := ollamafake.New(ollamafake.Options{Responder: script.Responder()})
	t.Cleanup(oll.Close)
	src := sourcefake.New()
	t.Cleanup(src.Close)
	return newCLI(t, oll.URL, src), oll, src
}

func newCLI(t *testing.T, ollamaURL string, src *sourcefake.Server) *cli {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte("full_text = false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"RESEARCHTUI_TEST_MAIN=1",
		"HOME=" + dir,
		"PATH=" + os.Getenv("PATH"),
		"RESEARCHTUI_DATA_DIR=" + filepath.Join(dir, "data"),
		"RESEARCHTUI_CONFIG=" + cfg,
		"OLLAMA_HOST=" + ollamaURL,
		// No test reaches the internet: sources without a fake are refused.
		"RESEARCHTUI_ARXIV_URL=http://127.0.0.1:1", "RESEARCHTUI_OPENALEX_URL=http://127.0.0.1:1",
		"RESEARCHTUI_PUBMED_URL=http://127.0.0.1:1", "RESEARCHTUI_SEMANTICSCHOLAR_URL=http://127.0.0.1:1",
		"RESEARCHTUI_CROSSREF_URL=http://127.0.0.1:1",
	}
	if src != nil {
		env = append(env, "RESEARCHTUI_ARXIV_URL="+src.ArxivURL(), "RESEARCHTUI_OPENALEX_URL="+src.OpenAlexURL())
	}
	return &cli{t: t, env: env, dir: dir}
}

// command is the command line as a child process: this test binary,
// which TestMain turns into researchtui, in the test's environment.
func (c *cli) command(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = c.env
	return cmd
}

// run executes the command line in a child process.
func (c *cli) run(args ...string) (stdout, stderr string, code int, took time.Duration) {
	c.t.Helper()
	cmd := c.command(args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	took = time.Since(start)
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		c.t.Fatal(err)
	}
	return out.String(), errb.String(), code, took
}

func TestRunHeadlessJSON(t *testing.T) {
	t.Parallel()
	script := &pipelinetest.Script{RevisionRounds: 1}
	c, oll, _ := scriptedCLI(t, script)
	outFile := filepath.Join(c.dir, "report.md")

	stdout, stderr, code, _ := c.run("run", "--json", "--sources", "arxiv,openalex", "--out", outFile, "How is software testing studied?")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var lastSeq int64
	var id string
	types := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev struct {
			Type      string    `json:"type"`
			SessionID string    `json:"session_id"`
			Seq       int64     `json:"seq"`
			Time      time.Time `json:"time"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("not JSON: %q", sc.Text())
		}
		if ev.Type == "" || ev.SessionID == "" || ev.Time.IsZero() || ev.Seq <= lastSeq {
			t.Fatalf("bad event line %q", sc.Text())
		}
		lastSeq, id = ev.Seq, ev.SessionID
		types[ev.Type] = true
	}
	for _, want := range []string{"run_started", "stage_started", "review_requested", "review_decided", "report_ready", "run_finished"} {
		if !types[want] {
			t.Errorf("no %s event", want)
		}
	}
	report, err := os.ReadFile(outFile)
	if err != nil || !bytes.Contains(report, []byte("## References")) {
		t.Fatalf("report file: %v\n%s", err, report)
	}

	stdout, _, code, _ = c.run("sessions", "list", "--json")
	var listed struct {
		ID     string `json:"id"`
		Status string `json:"status"`
		Model  string `json:"model"`
		Usage  struct {
			Prompt     int `json:"prompt_tokens"`
			Completion int `json:"completion_tokens"`
		} `json:"usage"`
		CostUSD *float64 `json:"cost_usd"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(stdout)), &listed); err != nil || code != 0 {
		t.Fatalf("sessions list --json: exit %d, %v: %q", code, err, stdout)
	}
	served := oll.Served()
	if listed.ID != id || listed.Status != "completed" || listed.Model != "qwen3:8b" || listed.CostUSD == nil ||
		listed.Usage.Prompt != served.PromptTokens || listed.Usage.Completion != served.CompletionTokens {
		t.Errorf("listed %+v, served %+v", listed, served)
	}

	stdout, _, code, _ = c.run("sessions", "show", id, "--json")
	var shown struct {
		Report     string            `json:"report"`
		Sources    []json.RawMessage `json:"sources"`
		Reviews    []json.RawMessage `json:"reviews"`
		Candidates []struct {
			Key    string  `json:"key"`
			Score  float64 `json:"score"`
			Read   bool    `json:"read"`
			Reason string  `json:"reason"`
		} `json:"candidates"`
		Funnel struct{ Found, Read, Analysed, Cited int } `json:"funnel"`
		// The relevance screen's cost and what it saved.
		Screen *struct {
			Calls        int `json:"calls"`
			PromptTokens int `json:"prompt_tokens"`
			SavedTokens  int `json:"saved_tokens"`
		} `json:"screen"`
	}
	if err := json.Unmarshal([]byte(stdout), &shown); err != nil || code != 0 || len(shown.Sources) < 3 || len(shown.Reviews) != 2 || shown.Report == "" {
		t.Errorf("sessions show --json: exit %d err %v sources %d reviews %d", code, err, len(shown.Sources), len(shown.Reviews))
	}
	if shown.Screen == nil {
		t.Error("sessions show --json has no screen report")
	}
	// Every candidate is kept with its score and why it was (not) read.
	readKeys := map[string]bool{}
	for _, c := range shown.Candidates {
		if c.Reason == "" || c.Key == "" {
			t.Errorf("candidate without key or reason: %+v", c)
		}
		if c.Read {
			readKeys[c.Key] = true
		}
	}
	if f := shown.Funnel; len(shown.Candidates) <= len(readKeys) || f.Read != len(readKeys) || f.Cited != len(shown.Sources) || f.Found < f.Read || f.Analysed < f.Cited {
		t.Errorf("funnel %+v with %d candidates, %d read, %d cited", f, len(shown.Candidates), len(readKeys), len(shown.Sources))
	}
	// A follow-up grows the report as a second version; the first stays.
	first := shown.Report
	_, stderr, code, _ = c.run("ask", id, "Which software testing techniques do these papers study?")
	if code != 0 {
		t.Fatalf("ask: exit %d: %s", code, stderr)
	}
	stdout, _, _, _ = c.run("sessions", "show", id, "--json")
	var grown struct {
		Versions []struct {
			N      int    `json:"n"`
			Kind   string `json:"kind"`
			Report string `json:"report"`
		} `json:"versions"`
	}
	if err := json.Unmarshal([]byte(stdout), &grown); err != nil || len(grown.Versions) != 2 || grown.Versions[0].Report != first ||
		grown.Versions[1].Kind != "follow_up" || !strings.Contains(grown.Versions[1].Report, "## Follow-up:") {
		t.Errorf("versions after ask: %v %+v", err, grown.Versions)
	}
	if out, _, code, _ := c.run("sessions", "export", id, "--version", "1"); code != 0 || strings.TrimSpace(out) != strings.TrimSpace(first) {
		t.Errorf("export --version 1: exit %d", code)
	}
	for _, bad := range [][]string{{"ask", id, "  "}, {"ask", "nope", "why?"}, {"ask", id}} {
		if _, stderr, code, _ := c.run(bad...); code != 2 {
			t.Errorf("%q: exit %d, want 2 (%s)", bad, code, stderr)
		}
	}
	// Options a command cannot honour are refused, not ignored (issue 49):
	// a session resumes with its own options; a follow-up may change only
	// its depth, sources and screen.
	for _, c2 := range []struct {
		args []string
		want string
	}{
		{[]string{"resume", "--depth", "deep", id}, "resume continues session " + id + " with the options it started with, so --depth cannot change it; to research with that option, start a new run: researchtui run --depth deep '"},
		{[]string{"ask", "--language", "de", "--kind", "review", id, "why?"}, "a follow-up keeps session " + id + "'s options but its depth, sources and screen, so --kind, --language cannot change it"},
	} {
		if _, stderr, code, _ := c.run(c2.args...); code != exitUsage || !strings.Contains(stderr, c2.want) {
			t.Errorf("%q: exit %d, %s; want exit 2 saying %q", c2.args, code, stderr, c2.want)
		}
	}
	// Their help lists only what they can change (a trial read 16 flags in
	// resume --help that resume always refuses).
	for cmd, want := range map[string][]string{"resume": {"--review", "--json"}, "ask": {"--depth", "--sources", "--screen"}} {
		help, _, _, _ := c.run(cmd, "--help")
		for _, w := range want {
			if !strings.Contains(help, w) {
				t.Errorf("%s --help lacks %s:\n%s", cmd, w, help)
			}
		}
		for _, fixed := range []string{"--kind", "--language", "--max-revisions", "--deadline"} {
			if strings.Contains(help, fixed) {
				t.Errorf("%s --help lists %s, which it refuses:\n%s", cmd, fixed, help)
			}
		}
	}
	stdout, _, code, _ = c.run("sessions", "export", id, "--format", "bibtex")
	entries := strings.Count("\n"+stdout, "\n@")
	if code != 0 || entries != len(shown.Sources) {
		t.Errorf("bibtex export: exit %d, %d entries for %d sources\n%s", code, entries, len(shown.Sources), stdout)
	}
	// Everything read is searchable: semantically with the model...
	stdout, _, code, _ = c.run("search", "--json", "-k", "3", "software testing techniques")
	var hit struct {
		Title string  `json:"title"`
		Score float32 `json:"score"`
		Text  string  `json:"text"`
	}
	if err := json.Unmarshal([]byte(strings.SplitN(stdout, "\n", 2)[0]), &hit); err != nil || code != 0 || hit.Title == "" || hit.Text == "" {
		t.Errorf("search: exit %d, %v: %q", code, err, stdout)
	}
	if n := strings.Count(stdout, "\n"); n == 0 || n > 3 {
		t.Errorf("search -k 3 gave %d passages", n)
	}
	// ...and by keywords with no backend at all.
	offline := &cli{t: t, env: append(append([]string{}, c.env...), "OLLAMA_HOST=http://127.0.0.1:1"), dir: c.dir}
	stdout, stderr, code, _ = offline.run("search", "software testing")
	if code != 0 || !strings.Contains(stderr, "keyword search") || !strings.Contains(stdout, " 1. ") {
		t.Errorf("offline search: exit %d\n%s\n%s", code, stdout, stderr)
	}
	_, stderr, code, _ = c.run("sessions", "export", id, "--format", "docx")
	if code != 2 || !strings.Contains(stderr, "unknown export format") {
		t.Errorf("bad format: exit %d %q", code, stderr)
	}
}

func TestBadInputExitCodes(t *testing.T) {
	t.Parallel()
	c, _ := modelCLI(t, ollamafake.Options{})

	_, stderr, code, _ := c.run("run", "")
	if code != 2 || !strings.Contains(stderr, "question is empty") {
		t.Errorf("empty question: exit %d, %q", code, stderr)
	}
	_, stderr, code, _ = c.run("run", "--depth", "bottomless", "why?")
	if code != 2 || !strings.Contains(stderr, "depth") {
		t.Errorf("bad depth: exit %d, %q", code, stderr)
	}
	for _, bad := range [][]string{{"--max-revisions", "-3"}, {"--budget-tokens", "-5"}, {"--review", "maybe"}, {"--sources", "arxiv,nowhere"}, {"--screen", "maybe"}} {
		_, stderr, code, _ = c.run(append(append([]string{"run"}, bad...), "why?")...)
		if code != 2 {
			t.Errorf("run %v: exit %d, %q; want 2", bad, code, stderr)
		}
	}
	_, stderr, code, _ = c.run("run", "--model", "nosuchmodel:1b", "why is the sky blue?")
	if code != 3 || !strings.Contains(stderr, "ollama pull nosuchmodel:1b") {
		t.Errorf("unknown model: exit %d, %q", code, stderr)
	}
	_, stderr, code, _ = c.run("sessions", "show", "nope")
	if code != 2 {
		t.Errorf("unknown session: exit %d, %q", code, stderr)
	}
	// A flag's bad value is named in words, not in Go's parser's (issue 47).
	_, stderr, code, _ = c.run("run", "--budget-tokens", "abc", "why?")
	if code != 2 || !strings.Contains(stderr, `--budget-tokens takes a whole number, like 20000, not "abc"`) || strings.Contains(stderr, "strconv") {
		t.Errorf("--budget-tokens abc: exit %d, %q", code, stderr)
	}
}

func TestUnreachableOllama(t *testing.T) {
	t.Parallel()
	c := newCLI(t, "http://127.0.0.1:1", nil)
	_, stderr, code, _ := c.run("run", "why is the sky blue?")
	if code != 3 || !strings.Contains(stderr, "OLLAMA_HOST") {
		t.Errorf("exit %d, %q", code, stderr)
	}
	stdout, _, code, _ := c.run("doctor")
	if code == 0 || !strings.Contains(stdout, "ollama serve") {
		t.Errorf("doctor with no Ollama: exit %d\n%s", code, stdout)
	}
}

func TestSecondProcessGetsExit4(t *testing.T) {
	t.Parallel()
	c := newCLI(t, "http://127.0.0.1:1", nil)
	dataDir := strings.TrimPrefix(c.env[3], "RESEARCHTUI_DATA_DIR=")
	st, err := store.Open(filepath.Join(dataDir, "researchtui.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, stderr, code, took := c.run("sessions", "list")
	if code != 4 || !strings.Contains(stderr, "another researchtui") {
		t.Errorf("exit %d, %q", code, stderr)
	}
	// It gives up after about a second of trying to open and to connect;
	// the bound only tells that from a hang on a loaded machine.
	if took > 30*time.Second {
		t.Errorf("took %v: a second process must not hang on a held store", took)
	}
}
