package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/researchtui/researchtui/corpus"
	"github.com/researchtui/researchtui/llm/ollamafake"
	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/store"
)

// A new user's folder: a PDF, Markdown, HTML, an empty file, a binary file,
// a file of an unknown type and a hidden file.
func corpusFolder(t *testing.T, root string) string {
	t.Helper()
	dir := filepath.Join(root, "My Papers")
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"notes.md": []byte("# Software testing techniques\n\nMutation testing and fuzzing are the software testing techniques " +
			"compared in our lab notes. Mutation testing found more faults than random testing in every project.\n"),
		"sub/tools.html": []byte(`<html><head><title>Chemistry tools for language models</title></head><body><nav>Home | Blog | Login</nav><article>` +
			strings.Repeat(`<p>Large language models augmented with chemistry tools plan syntheses and call calculators for molecular properties.</p>`, 4) +
			`</article></body></html>`),
		"empty.txt":   {},
		"data.bin.md": {0x00, 0x01, 0x02, 0xff, 0xfe, 0x00, 'x'},
		"photo.jpg":   {0xff, 0xd8, 0xff, 0xe0},
		".hidden.md":  []byte("# hidden"),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if pdf, err := os.ReadFile(sharedFixture("pdf/arxiv-1111.2011v2.pdf")); err == nil {
		os.WriteFile(filepath.Join(dir, "bethe.pdf"), pdf, 0o644)
	}
	return dir
}

func TestCorpusAddListAndRun(t *testing.T) {
	t.Parallel()
	script := &pipelinetest.Script{RevisionRounds: 1}
	c, _, _ := scriptedCLI(t, script)
	dir := corpusFolder(t, c.dir)
	_, hasPDF := os.Stat(filepath.Join(dir, "bethe.pdf"))

	stdout, stderr, code, took := c.run("corpus", "add", dir)
	t.Logf("corpus add (%s):\n%s", took.Round(time.Millisecond), stdout)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"added     " + filepath.Join(dir, "notes.md") + " (1 chunks)",
		"added     " + filepath.Join(dir, "sub", "tools.html"),
		"skipped   " + filepath.Join(dir, "empty.txt") + ": the file is empty",
		"skipped   " + filepath.Join(dir, "data.bin.md") + ": unsupported document type: binary content",
		"skipped   " + filepath.Join(dir, "photo.jpg") + ": unsupported document type: \".jpg\"",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if hasPDF == nil && !strings.Contains(stdout, "bethe.pdf (8 pages,") {
		t.Errorf("PDF not indexed with pages:\n%s", stdout)
	}
	if strings.Contains(stdout, "hidden") {
		t.Error("hidden file touched")
	}

	// re-add: nothing changes; a changed file is re-indexed; a removed one dropped
	stdout, _, code, _ = c.run("corpus", "add", dir)
	if code != 0 || !strings.Contains(stdout, "unchanged "+filepath.Join(dir, "notes.md")) || strings.Contains(stdout, "added ") {
		t.Errorf("re-add: exit %d\n%s", code, stdout)
	}
	os.WriteFile(filepath.Join(dir, "notes.md"), []byte("# Software testing techniques\n\nProperty-based testing, too.\n"), 0o644)
	os.Remove(filepath.Join(dir, "sub", "tools.html"))
	stdout, _, _, _ = c.run("corpus", "add", dir)
	if !strings.Contains(stdout, "updated   "+filepath.Join(dir, "notes.md")) || !strings.Contains(stdout, "removed   "+filepath.Join(dir, "sub", "tools.html")) {
		t.Errorf("changes not seen:\n%s", stdout)
	}
	stdout, _, code, _ = c.run("corpus", "list")
	if code != 0 || !strings.Contains(stdout, "Software testing techniques") || strings.Contains(stdout, "tools.html") {
		t.Errorf("list: %d\n%s", code, stdout)
	}
	if _, _, code, _ := c.run("corpus", "add", filepath.Join(c.dir, "nope")); code != exitUsage {
		t.Errorf("missing path: exit %d", code)
	}

	// the documents are sources of the next run
	out := filepath.Join(c.dir, "report.md")
	_, stderr, code, _ = c.run("run", "--sources", "local,arxiv", "--out", out, "How is software testing studied?")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	stdout, _, _, _ = c.run("sessions", "list", "--json")
	id := between(stdout, `"id":"`, `"`)
	stdout, _, code, _ = c.run("sessions", "show", id, "--json")
	if code != 0 || !strings.Contains(strings.ReplaceAll(stdout, `": "`, `":"`), `"source":"local"`) || !strings.Contains(stdout, "Software testing techniques") {
		t.Errorf("the local document is not a source of the run:\n%.2000s", stdout)
	}
}

func between(s, a, b string) string {
	i := strings.Index(s, a)
	if i < 0 {
		return ""
	}
	s = s[i+len(a):]
	if j := strings.Index(s, b); j >= 0 {
		return s[:j]
	}
	return s
}

// A file name is untrusted text too: its escape sequences never reach the
// terminal, in add or in list.
func TestCorpusHostileFileName(t *testing.T) {
	t.Parallel()
	c := newCLI(t, "http://127.0.0.1:1", nil)
	dir := filepath.Join(c.dir, "docs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, "evil\x1b]0;pwned\x07\x1b[2Jnotes.md")
	if err := os.WriteFile(name, []byte("# Notes\n\nThermal conductivity of anisotropic superconductors.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"corpus", "add", dir}, {"corpus", "add", name}, {"corpus", "list"}} {
		stdout, stderr, code, _ := c.run(args...)
		if code != 0 || strings.ContainsAny(stdout+stderr, "\x1b\x07") {
			t.Errorf("%v: exit %d, output %q %q", args, code, stdout, stderr)
		}
		if !strings.Contains(stdout, "notes.md") {
			t.Errorf("%v: the file is not named: %q", args, stdout)
		}
	}
}

// libraryFolder writes n Markdown files of unique text, a few chunks each.
func libraryFolder(t testing.TB, root string, n, words int) string {
	t.Helper()
	dir := filepath.Join(root, "library")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	vocab := strings.Fields("thermal conductivity superconductor lattice phonon electron scattering measurement " +
		"anisotropic gap node quasiparticle transport magnetic field temperature sample crystal")
	for i := 0; i < n; i++ {
		var b strings.Builder
		fmt.Fprintf(&b, "# Paper %d\n\n", i)
		for w := 0; w < words; w++ {
			if w%120 == 119 {
				fmt.Fprintf(&b, "(paper %d, paragraph %d).\n\n", i, w/120)
			}
			b.WriteString(vocab[(i*7+w*w)%len(vocab)])
			b.WriteByte(' ')
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("paper%04d.md", i)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func (c *cli) withOllama(url string) {
	for i, e := range c.env {
		if strings.HasPrefix(e, "OLLAMA_HOST=") {
			c.env[i] = "OLLAMA_HOST=" + url
		}
	}
}

func embedInputs(s *ollamafake.Server) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Path == "/api/embed" {
			var req struct {
				Input []string `json:"input"`
			}
			json.Unmarshal(r.Body, &req)
			n += len(req.Input)
		}
	}
	return n
}

func storeStats(t *testing.T, c *cli) store.Stats {
	t.Helper()
	stdout, stderr, code, _ := c.run("store", "stats", "--json")
	if code != 0 {
		t.Fatalf("store stats: exit %d\n%s", code, stderr)
	}
	var st store.Stats
	if err := json.Unmarshal([]byte(stdout), &st); err != nil {
		t.Fatalf("store stats --json: %v\n%s", err, stdout)
	}
	return st
}

func embeddingsOf(st store.Stats, model string) int {
	for _, e := range st.Embeddings {
		if e.Model == model {
			return e.Count
		}
	}
	return 0
}

// A corpus add killed part way (SIGKILL: no cleanup at all) keeps every
// file it committed and every vector it saved; running it again reads only
// the rest and embeds only what is missing, and a third run does nothing.
func TestCorpusAddKilledThenResumed(t *testing.T) {
	t.Parallel()
	c, _ := modelCLI(t, ollamafake.Options{EmbedDelay: 150 * time.Millisecond})
	dir := libraryFolder(t, c.dir, 1000, 500)

	cmd := c.command("corpus", "add", dir)
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && !strings.HasPrefix(sc.Text(), "  added") {
	}
	cmd.Process.Kill()
	cmd.Wait()

	st := storeStats(t, c)
	committed, embedded := len(mustManifest(t, c).Files), embeddingsOf(st, "nomic-embed-text")
	t.Logf("killed after %d files committed, %d of %d chunks embedded", committed, embedded, st.Chunks)
	if committed == 0 || committed == 1000 {
		t.Fatalf("the kill came at %d of 1000 files; the test needs it part way", committed)
	}

	fast := ollamafake.New(ollamafake.Options{})
	defer fast.Close()
	c.withOllama(fast.URL)
	out, stderr, code, took := c.run("corpus", "add", dir)
	if code != 0 {
		t.Fatalf("re-run: exit %d\n%s\n%s", code, out, stderr)
	}
	unchanged, added := strings.Count(out, "  unchanged "), strings.Count(out, "  added ")
	if unchanged != committed || added != 1000-committed {
		t.Fatalf("re-run: %d unchanged, %d added; want %d and %d", unchanged, added, committed, 1000-committed)
	}
	st = storeStats(t, c)
	if got := embedInputs(fast); got != st.Chunks-embedded {
		t.Fatalf("re-run embedded %d texts, want exactly the %d missing", got, st.Chunks-embedded)
	}
	if embeddingsOf(st, "nomic-embed-text") != st.Chunks {
		t.Fatalf("%d embeddings for %d chunks", embeddingsOf(st, "nomic-embed-text"), st.Chunks)
	}
	if len(st.Indexes) != 1 || st.Indexes[0].Vectors != st.Chunks || !st.Indexes[0].Fresh {
		t.Fatalf("vector index after corpus add: %+v", st.Indexes)
	}
	t.Logf("re-run (%s):\n%s", took.Round(time.Millisecond), lastLines(out, 4))

	idle := ollamafake.New(ollamafake.Options{})
	defer idle.Close()
	c.withOllama(idle.URL)
	out, _, code, _ = c.run("corpus", "add", dir)
	if code != 0 || strings.Count(out, "  unchanged ") != 1000 || embedInputs(idle) != 0 {
		t.Fatalf("third run: exit %d, %d embed inputs\n%s", code, embedInputs(idle), lastLines(out, 4))
	}
}

func mustManifest(t *testing.T, c *cli) *corpus.Manifest {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(c.dir, "data", "corpus.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m corpus.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return &m
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// A damaged PDF, a file over the size limit and a binary file are skipped
// with their reason; the rest is indexed and embedded. With no model
// backend the text is still indexed and the summary says why it is not
// embedded.
func TestCorpusAddSkipsBadFilesAndWorksOffline(t *testing.T) {
	t.Parallel()
	c, _ := modelCLI(t, ollamafake.Options{})
	dir := libraryFolder(t, c.dir, 5, 300)
	os.WriteFile(filepath.Join(dir, "broken.pdf"), append([]byte("%PDF-1.7\n"), bytes.Repeat([]byte{0x13, 0x37, 0xff}, 5000)...), 0o644)
	huge := filepath.Join(dir, "huge.txt")
	if f, err := os.Create(huge); err == nil {
		f.Truncate(search.MaxLocalFileBytes + 50<<20) // sparse: nothing is written
		f.Close()
	}
	out, stderr, code, _ := c.run("corpus", "add", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	for _, want := range []string{"skipped   " + filepath.Join(dir, "broken.pdf") + ": ", "skipped   " + huge + ": too large to index (250 MB, limit 200 MB)", "5 added", "embedded "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	off := newCLI(t, "http://127.0.0.1:1", nil)
	dir = libraryFolder(t, off.dir, 3, 300)
	out, _, code, _ = off.run("corpus", "add", dir)
	if code != 0 || !strings.Contains(out, "3 added") || !strings.Contains(out, "not embedded: ") {
		t.Fatalf("offline corpus add: exit %d\n%s", code, out)
	}
}

// openCLIStore opens, in this process, the config and store that c's
// commands use; the store is closed when the test ends.
func openCLIStore(t *testing.T, c *cli) (*Config, *store.Store) {
	t.Helper()
	for _, e := range c.env {
		k, v, _ := strings.Cut(e, "=")
		t.Setenv(k, v)
	}
	cfg, st := configuredStore(t)
	t.Cleanup(func() { st.Close() })
	return cfg, st
}

// configuredStore opens the config and store that this process's
// environment names, as a command does; the caller closes the store.
func configuredStore(tb testing.TB) (*Config, *store.Store) {
	tb.Helper()
	cfg, err := loadConfig()
	if err != nil {
		tb.Fatal(err)
	}
	db, err := openStore(cfg, own)
	if err != nil {
		tb.Fatal(err)
	}
	return cfg, db.(*store.Store)
}

// Ctrl-C (a cancelled context) stops reading, keeps what was committed and
// exits as cancelled.
func TestCorpusAddInterruptKeepsWork(t *testing.T) {
	c, _ := modelCLI(t, ollamafake.Options{EmbedDelay: 50 * time.Millisecond})
	dir := libraryFolder(t, c.dir, 600, 300)
	cfg, st := openCLIStore(t, c)
	b, _ := newBackend(cfg)
	eng := &pipeline.Engine{Store: st, LLM: b}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Ctrl-C as soon as the first batch is committed and being embedded.
	d := corpusDeps{st: st, model: cfg.EmbedModel, parallel: 2, embed: func(ctx context.Context, texts []string) ([][]float32, error) {
		cancel()
		return eng.EmbedDocuments(ctx, cfg.EmbedModel, texts)
	}}
	out := &bytes.Buffer{}
	err := corpusAdd(ctx, cfg, d, []string{dir}, out, io.Discard)
	// The error is what the user reads after "researchtui: ".
	if err == nil || exitCode(ctx, err) != exitCancelled || !strings.HasPrefix(err.Error(), "interrupted: what was read is kept") {
		t.Fatalf("err = %v", err)
	}
	m, _ := corpus.LoadManifest(cfg.corpusPath())
	if n := len(m.Files); n == 0 || n == 600 {
		t.Fatalf("%d files kept after the interrupt\n%s", n, lastLines(out.String(), 3))
	}
	if keys, _ := st.SourceKeys(); len(keys) != len(m.Files) {
		t.Fatalf("%d sources stored, %d in the manifest", len(keys), len(m.Files))
	}
}

// When corpus add returns, the vector index is finished: its graph covers
// every vector, the summary says so, and the file on disk is complete and
// fresh, so the next search maps it with nothing left to build or check.
// (Left half built, every later search took the build up on both cores
// and rewrote the file at exit.)
func TestCorpusAddFinishesTheVectorIndex(t *testing.T) {
	c, _ := modelCLI(t, ollamafake.Options{})
	dir := libraryFolder(t, c.dir, 200, 1500)
	cfg, st := openCLIStore(t, c)
	// The graph from the first vector on, built by one worker: slower than
	// the fake embedding server, as a graph of a real library is.
	st.IndexOptions = store.IndexOptions{SwitchAt: 1, Workers: 1}
	b, _ := newBackend(cfg)
	eng := &pipeline.Engine{Store: st, LLM: b}
	d := corpusDeps{st: st, model: cfg.EmbedModel, parallel: 2, embed: func(ctx context.Context, texts []string) ([][]float32, error) {
		return eng.EmbedDocuments(ctx, cfg.EmbedModel, texts)
	}}
	out := &bytes.Buffer{}
	if err := corpusAdd(context.Background(), cfg, d, []string{dir}, out, io.Discard); err != nil {
		t.Fatal(err)
	}
	is, ok := st.IndexStatus(cfg.EmbedModel)
	if !ok || !is.Graph || is.Vectors < 200 || is.Linked != is.Nodes || is.Phase != "" {
		t.Fatalf("vector index when corpus add returned: %+v", is)
	}
	if want := "vector index of nomic-embed-text: " + commas(is.Vectors) + " vectors, HNSW graph complete"; !strings.Contains(out.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, lastLines(out.String(), 5))
	}
	st.Close()
	s := storeStats(t, c)
	if len(s.Indexes) != 1 {
		t.Fatalf("index files: %+v", s.Indexes)
	}
	if f := s.Indexes[0]; !f.Graph || f.Vectors != s.Chunks || f.Linked != f.Vectors || !f.Fresh {
		t.Fatalf("index file after corpus add (%d chunks): %+v", s.Chunks, f)
	}
}
