package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/researchtui/researchtui/llm/ollamafake"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/search/sourcefake"
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
	if pdf, err := os.ReadFile("../shared/fixtures/pdf/arxiv-1111.2011v2.pdf"); err == nil {
		os.WriteFile(filepath.Join(dir, "bethe.pdf"), pdf, 0o644)
	}
	return dir
}

func TestCorpusAddListAndRun(t *testing.T) {
	script := &pipelinetest.Script{RevisionRounds: 1}
	oll := ollamafake.New(ollamafake.Options{Responder: script.Responder()})
	defer oll.Close()
	src := sourcefake.New()
	defer src.Close()
	c := newCLI(t, oll.URL, src)
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
