package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 45, tried as a person brings a library: nothing is dropped
// silently. A second references.bib from another folder becomes a library
// of its own; duplicate and missing citation keys keep every entry; RIS
// records without ID are items; a crossref into another file given
// together is resolved; a file with nothing to import exits non-zero and
// leaves its library as it was.
func TestLibraryImportLosesNothing(t *testing.T) {
	t.Parallel()
	c := newCLI(t, "http://127.0.0.1:1", nil)
	write := func(rel, text string) string {
		p := filepath.Join(c.dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a/references.bib", `@article{one, title={First of A}, author={Doe, Jr., Jeffrey}, year=2001, journal={J}}
@article{two, title={Second of A}, author={Roe, Ann}, year=2002, journal={J}}
@article{three, title={Third of A}, author={Poe, Ed}, year=2003, journal={J}}
`)
	b := write("b/references.bib", `@book{campbell2018, title={The Book}, author={Campbell, Kim and Manning, Lee}, year=2018, publisher={P}}
@article{campbell2018, title={The Article}, author={Campbell, Kim}, year=2018, journal={J}}
@article{, title={Mendeley wrote no key}, author={Smith, Al}, year=2020, journal={J}}
@article{
  title = {EndNote wrote no key either},
  author = {Jones, Bo},
  year = {2019},
}
`)
	stdout, stderr, code, _ := c.run("library", "import", a)
	if code != 0 || !strings.Contains(stdout, "3 added") {
		t.Fatalf("a: exit %d\n%s\n%s", code, stdout, stderr)
	}
	stdout, stderr, code, _ = c.run("library", "import", b)
	if code != 0 || !strings.Contains(stdout, "4 added, 0 updated, 0 unchanged, 0 skipped, 0 removed; 3 notes above; library references-b: 4 items") ||
		!strings.Contains(stdout, "importing as library references-b: the name references is the library of "+a) ||
		!strings.Contains(stdout, "citation key campbell2018 is also the citation key of the entry on line 1, another work: this one is imported as campbell2018-") ||
		!strings.Contains(stdout, "BibTeX line 3: it has no citation key: imported as smith2020mendeley") ||
		strings.Contains(stdout, "removed   ") {
		t.Fatalf("b: exit %d\n%s\n%s", code, stdout, stderr)
	}
	stdout, _, _, _ = c.run("library", "list", "--json")
	if counts := collectionCounts(stdout); counts["references"] != 3 || counts["references-b"] != 4 {
		t.Fatalf("library list: %v\n%s", counts, stdout)
	}
	if stdout, _, _, _ = c.run("library", "list"); !strings.Contains(stdout, "  from "+a+"\n") || !strings.Contains(stdout, "  from "+b+"\n") {
		t.Errorf("library list does not name each library's file:\n%s", stdout)
	}
	// The same file again syncs its own library; --replace lets it take the name.
	if stdout, _, code, _ = c.run("library", "import", b); code != 0 || !strings.Contains(stdout, "0 added, 0 updated, 4 unchanged") || !strings.Contains(stdout, "library references-b") {
		t.Fatalf("b again: exit %d\n%s", code, stdout)
	}
	// The first of two works under one key deleted: the second takes the
	// key, and the report says which work the ID named before.
	src, _ := os.ReadFile(b)
	os.WriteFile(b, []byte(strings.Replace(string(src), "@book{campbell2018, title={The Book}, author={Campbell, Kim and Manning, Lee}, year=2018, publisher={P}}\n", "", 1)), 0o644)
	if stdout, _, code, _ = c.run("library", "import", b); code != 0 || !strings.Contains(stdout, "updated   The Article (its title only (no file, no abstract), 1 chunk; its ID campbell2018 was “The Book”)") {
		t.Fatalf("the first of two works under one key deleted: exit %d\n%s", code, stdout)
	}
	if _, stderr, code, _ = c.run("library", "import", "--name", "refs", b); code != exitUsage || !strings.Contains(stderr, "is the library references-b already; to rename it, `researchtui library remove references-b`") {
		t.Fatalf("--name for a file imported under another name: exit %d\n%s", code, stderr)
	}
	for _, bad := range []string{"corpus", "zotero", "#thesis", "Thesis/Ch1"} {
		if _, stderr, code, _ = c.run("library", "import", "--name", bad, write("x/"+strings.NewReplacer("#", "", "/", "").Replace(bad)+".bib", "@misc{k, title={T}}")); code != exitUsage || !strings.Contains(stderr, "--name "+bad+": ") {
			t.Errorf("--name %s: exit %d\n%s", bad, code, stderr)
		}
	}

	// RIS without ID, and names without commas.
	ris := write("c/citations.ris", "TY  - JOUR\r\nAU  - Catarina Barata\r\nTI  - Deep learning for skin lesions\r\nPY  - 2019\r\nER  - \r\n\r\nTY  - JOUR\r\nAU  - World Health Organization\r\nTI  - A report\r\nPY  - 2020\r\nER  - \r\n")
	if stdout, stderr, code, _ = c.run("library", "import", ris); code != 0 || !strings.Contains(stdout, "2 added") {
		t.Fatalf("ris: exit %d\n%s\n%s", code, stdout, stderr)
	}

	// Crossref across two files given together.
	krr := write("d/krr.bib", `@inproceedings{paper, title={A Paper}, author={Lee, Bo}, crossref={kr2020}}`)
	procs := write("d/procs.bib", `@proceedings{kr2020, title={Proceedings of KR 2020}, year=2020, publisher={IJCAI}}`)
	if stdout, stderr, code, _ = c.run("library", "import", krr, procs); code != 0 {
		t.Fatalf("crossref: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// (the fields it inherits: TestCrossrefAcrossFiles). Synced alone,
	// krr.bib still inherits from procs.bib, imported before.
	if stdout, stderr, code, _ = c.run("library", "import", krr); code != 0 || !strings.Contains(stdout, "0 added, 0 updated, 1 unchanged") {
		t.Fatalf("krr.bib alone: exit %d\n%s\n%s", code, stdout, stderr)
	}
	alone := write("d2/alone.bib", `@inproceedings{p2, title={Another Paper}, author={Lee, Bo}, crossref={nowhere}}`)
	if stdout, _, _, _ = c.run("library", "import", alone); !strings.Contains(stdout, "its crossref nowhere names no entry of the files read") {
		t.Errorf("an unresolved crossref is not named:\n%s", stdout)
	}

	// A brace typed wrong in an entry already imported: the entry is
	// named as skipped and its item kept, not removed.
	src, _ = os.ReadFile(a)
	os.WriteFile(a, []byte(strings.Replace(string(src), "title={Second of A}", "title={Second {of A}", 1)), 0o644)
	stdout, stderr, code, _ = c.run("library", "import", a)
	if code != 0 || !strings.Contains(stdout, "skipped   an entry: BibTeX line 2 (two)") || !strings.Contains(stdout, "kept      Second of A (its entry could not be read this time") ||
		strings.Contains(stdout, "removed   ") {
		t.Fatalf("a typo: exit %d\n%s\n%s", code, stdout, stderr)
	}

	// A file that yields nothing: non-zero, and the library keeps its items.
	os.WriteFile(a, nil, 0o644)
	stdout, stderr, code, _ = c.run("library", "import", a)
	if code != exitUsage || !strings.Contains(stderr, "references.bib: no entries in it") || !strings.Contains(stderr, "the library references keeps its items") {
		t.Fatalf("empty file: exit %d\n%s\n%s", code, stdout, stderr)
	}
	wos := write("e/savedrecs.bib", "FN Clarivate Analytics Web of Science\nVR 1.0\nPT J\nAU Sun, ZW\nAF Sun, Zhao Wei\nTI A title\nSO JOURNAL OF THINGS\nPY 2019\nUT WOS:1\nER\nEF\n")
	if stdout, stderr, code, _ = c.run("library", "import", wos); code != 0 || !strings.Contains(stdout, "1 added") {
		t.Fatalf("a Web of Science export: exit %d\n%s\n%s", code, stdout, stderr)
	}
	stdout, _, _, _ = c.run("library", "list", "--json")
	if counts := collectionCounts(stdout); counts["references"] != 3 || counts["citations"] != 2 || counts["krr"] != 1 || counts["procs"] != 1 || counts["alone"] != 1 {
		t.Fatalf("library list after all: %v\n%s", counts, stdout)
	}
	// A library can be forgotten; the file stays.
	if stdout, stderr, code, _ = c.run("library", "remove", "references-b"); code != 0 || !strings.Contains(stdout, "library references-b removed: 3 items no longer searched") {
		t.Fatalf("remove: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(b); err != nil {
		t.Fatal("the file was touched")
	}
	stdout, _, _, _ = c.run("library", "list", "--json")
	if counts := collectionCounts(stdout); counts["references-b"] != 0 || counts["references"] != 3 {
		t.Fatalf("library list after remove: %v\n%s", counts, stdout)
	}
	if _, stderr, code, _ = c.run("library", "remove", "nope"); code != exitUsage || !strings.Contains(stderr, "no library nope (there are: ") {
		t.Errorf("remove an unknown library: exit %d\n%s", code, stderr)
	}
}

// `library list` of a real JabRef library: groups in order of their paths,
// tags summed up, every one with --tags; `| head` is no error.
func TestLibraryListReadable(t *testing.T) {
	t.Parallel()
	c := newCLI(t, "http://127.0.0.1:1", nil)
	p := filepath.Join(c.dir, "groups.bib")
	os.WriteFile(p, []byte(`@comment{jabref-meta: grouping:
0 AllEntriesGroup:;
1 StaticGroup:Zeta\;0\;1\;\;\;\;;
1 StaticGroup:Alpha\;0\;1\;\;\;\;;
2 StaticGroup:Sub\;0\;1\;\;\;\;;
}
@article{a, title={A}, groups={Sub}, keywords={b-tag, A/B tag}}
@article{z, title={Z}, groups={Zeta}, keywords={c-tag}}
`), 0o644)
	if _, stderr, code, _ := c.run("library", "import", p); code != 0 {
		t.Fatalf("import: %d %s", code, stderr)
	}
	stdout, _, _, _ := c.run("library", "list")
	alpha, sub, zeta := strings.Index(stdout, "  Alpha/Sub"), strings.Index(stdout, "    Alpha/Sub"), strings.Index(stdout, "  Zeta")
	if sub < 0 || zeta < sub || alpha < 0 || !strings.Contains(stdout, "  3 tags (`researchtui library list --tags` lists them)") || strings.Contains(stdout, "#b-tag") {
		t.Errorf("library list:\n%s", stdout)
	}
	stdout, _, _, _ = c.run("library", "list", "--tags")
	if i, j := strings.Index(stdout, "  #A/B tag"), strings.Index(stdout, "  #b-tag"); i < 0 || j < i || strings.Contains(stdout, "    #A/B tag") {
		t.Errorf("library list --tags:\n%s", stdout)
	}
}
