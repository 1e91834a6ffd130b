//go:build linux

package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/researchtui/researchtui/llm/ollamafake"
	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/search/zotero/zoterotest"
)

// zoteroLibrary is a Zotero library of n journal articles spread over
// cols collections ("Topic A", "Topic B", ...), every fourth with an
// imported PDF, the rest with their abstract; titles name their
// collection, so a cited source tells where it was filed.
func zoteroLibrary(n, cols int) zoterotest.Library {
	var lib zoterotest.Library
	for c := range cols {
		lib.Collections = append(lib.Collections, zoterotest.Collection{Key: zoterotest.Key(100_000 + c), Name: fmt.Sprintf("Topic %c", 'A'+c)})
	}
	for i := range n {
		c := i % cols
		title := fmt.Sprintf("Thermal transport in d-wave superconductors, study %d of topic %c", i, 'A'+c)
		e := zoterotest.Entry{
			Key:  zoterotest.Key(i + 1),
			Type: "journalArticle",
			Fields: map[string]string{
				"title": title, "publicationTitle": "Physical Review B", "date": fmt.Sprint(1990 + i%30),
				"volume": "85", "issue": "11", "pages": "115117-115125",
				"DOI":          fmt.Sprintf("10.5555/zt.%d", i),
				"abstractNote": fmt.Sprintf("We measure thermal transport and phonon scattering in d-wave superconductors, study %d.", i),
			},
			Creators:    []zoterotest.Creator{{First: "Anna", Last: "Müller"}, {First: "Bo", Last: fmt.Sprintf("Author%d", i)}},
			Tags:        []string{"phonons"},
			Collections: []string{zoterotest.Key(100_000 + c)},
		}
		if i%4 == 0 {
			e.Attachments = []zoterotest.Attachment{{Filename: fmt.Sprintf("study-%d.pdf", i),
				Content: zoterotest.PDF(title, fmt.Sprintf("Phonon scattering limits thermal transport below Tc in study %d.", i))}}
		}
		lib.Items = append(lib.Items, e)
	}
	return lib
}

func fileSum(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Tried as a user would (issue 26's acceptance): a Zotero library of 200
// items in 5 collections, PDFs included, is imported from its database
// (never modified); a run limited to one collection cites only its items,
// with full APA references; a second import after deleting one item and
// changing another reports 1 removed, 1 updated and embeds nothing; while
// another process holds the database as a running Zotero does, the import
// says so, points at the local API, and leaves the file as it was.
func TestZoteroLibraryAcceptance(t *testing.T) {
	t.Parallel()
	script := thermalScript()
	c, _ := modelCLI(t, ollamafake.Options{Responder: script.Responder()})
	zdir := filepath.Join(c.dir, "Zotero")
	lib := zoteroLibrary(200, 5)
	if err := zoterotest.Build(zdir, lib); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(zdir, "zotero.sqlite")
	before := fileSum(t, db)

	stdout, stderr, code, took := c.run("library", "import", "zotero", "--data-dir", zdir)
	t.Logf("import of 200 items: %s", took)
	if code != 0 || !strings.Contains(stdout, "200 added, 0 updated, 0 unchanged, 0 skipped, 0 removed; library zotero: 200 items") {
		t.Fatalf("import: exit %d\n%.3000s\n%s", code, stdout, stderr)
	}
	if after := fileSum(t, db); after != before {
		t.Error("the import changed zotero.sqlite")
	}
	for _, side := range []string{"-journal", "-shm"} {
		if _, err := os.Stat(db + side); err == nil {
			t.Errorf("the import left %s beside the database", filepath.Base(db+side))
		}
	}

	stdout, _, _, _ = c.run("library", "list", "--json")
	counts := collectionCounts(stdout)
	for name, want := range map[string]int{"zotero": 200, "Topic A": 40, "Topic C": 40, "Topic E": 40, "#phonons": 200} {
		if counts[name] != want {
			t.Errorf("collection %q: %d items, want %d (%v)", name, counts[name], want, counts)
		}
	}

	_, stderr, code, _ = c.run("run", "--sources", "local", "--collection", "Topic C", "--depth", "quick",
		"How does phonon scattering limit thermal transport in d-wave superconductors?")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	stdout, _, _, _ = c.run("sessions", "list", "--json")
	raw, _, _, _ := c.run("sessions", "export", between(stdout, `"id":"`, `"`), "--format", "json")
	var rep pipeline.Report
	if err := json.Unmarshal([]byte(raw), &rep); err != nil || len(rep.Sources) == 0 {
		t.Fatalf("no report or nothing cited: %v", err)
	}
	for _, s := range rep.Sources {
		n := 0
		fmt.Sscanf(s.Title[strings.Index(s.Title, "study ")+6:], "%d", &n)
		want := fmt.Sprintf("Müller, A., & Author%d, B. (%d). %s. *Physical Review B*, *85*(11), 115117–115125. https://doi.org/10.5555/zt.%d", n, 1990+n%30, s.Title, n)
		if !strings.HasSuffix(s.Title, "of topic C") || s.Library != "zotero" || s.Reference != want {
			t.Errorf("cited %q (%s)\n reference %q\n want      %q", s.Title, s.Library, s.Reference, want)
		}
	}

	// One item deleted, one retitled in Zotero.
	changed := lib.Items[8] // one with a PDF
	changed.Fields["title"] += ", revised"
	if err := zoterotest.Update(zdir, changed); err != nil {
		t.Fatal(err)
	}
	if err := zoterotest.Delete(zdir, lib.Items[13].Key); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code, _ = c.run("library", "import", "zotero", "--data-dir", zdir)
	if code != 0 || !strings.Contains(stdout, "0 added, 1 updated, 198 unchanged, 0 skipped, 1 removed") || strings.Contains(stdout, "embedded ") {
		t.Fatalf("sync: exit %d\n%.3000s\n%s", code, stdout, stderr)
	}

	// Zotero running: it holds an exclusive lock on its database, as
	// SQLite takes one (a write lock on the shared bytes). The sum is
	// taken first: closing any descriptor of the file would drop this
	// process's locks on it.
	before = fileSum(t, db)
	f, err := os.OpenFile(db, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lock := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: 0x40000002, Len: 510}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lock); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code, _ = c.run("library", "import", "zotero", "--data-dir", zdir, "--api-url", "http://127.0.0.1:1/api/users/0/")
	t.Logf("locked: exit %d\n%s%s", code, stdout, stderr)
	if code == 0 || !strings.Contains(stderr, "Zotero is running") || !strings.Contains(stderr, "local API") {
		t.Errorf("a locked database: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if fileSum(t, db) != before {
		t.Error("the database changed while Zotero held it")
	}
}
