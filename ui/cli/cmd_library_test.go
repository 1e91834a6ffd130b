package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/researchtui/researchtui/llm/ollamafake"
	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/search/bib"
)

// bibLibrary writes a Better BibTeX export of n items, every fourth with a
// PDF (a real one, copied) and every fourth with a Markdown note, the
// rest with their abstract only; titles carry the file's name so a cited
// source tells which file it came from.
func bibLibrary(t *testing.T, dir, name string, n int) string {
	t.Helper()
	pdf, err := os.ReadFile(filepath.Join("..", "..", "search", "testdata", "pdf", "elsarticle-elstest-5p.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	files := filepath.Join(dir, name+"-files")
	if err := os.MkdirAll(files, 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := 0; i < n; i++ {
		key := fmt.Sprintf("%s%03d", name, i)
		fmt.Fprintf(&b, "@article{%s,\n  title = {Thermal transport in {d-wave} superconductors, part %d of {%s}},\n", key, i, name)
		fmt.Fprintf(&b, "  author = {M{\\\"u}ller, Anna and van der Waals, Johannes and Author%d, Bo},\n", i)
		fmt.Fprintf(&b, "  date = {%d-03-04},\n  journaltitle = {Physical Review B},\n  volume = {%d},\n  number = {2},\n  pages = {100--110},\n  doi = {10.9999/%s},\n", 1990+i%30, i, key)
		fmt.Fprintf(&b, "  abstract = {We measure thermal transport and phonon scattering in d-wave superconductors, sample %d of %s.},\n", i, name)
		switch i % 4 {
		case 0:
			p := filepath.Join(files, key+".pdf")
			os.WriteFile(p, pdf, 0o644)
			fmt.Fprintf(&b, "  file = {Full Text PDF:%s:application/pdf},\n", p)
		case 1:
			p := filepath.Join(files, key+".md")
			os.WriteFile(p, []byte(fmt.Sprintf("# Notes %d\n\nThermal transport in d-wave superconductors: phonon scattering dominates below Tc in sample %d of %s.\n", i, i, name)), 0o644)
			fmt.Fprintf(&b, "  file = {%s:%s:text/markdown},\n", filepath.Base(p), p)
		}
		b.WriteString("}\n\n")
	}
	p := filepath.Join(dir, name+".bib")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// collectionCounts reads `library list --json`: items by collection.
func collectionCounts(out string) map[string]int {
	counts := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var col struct {
			Name  string `json:"name"`
			Items int    `json:"items"`
		}
		if json.Unmarshal([]byte(l), &col) == nil {
			counts[col.Name] = col.Items
		}
	}
	return counts
}

// thermalScript is a model that plans and writes about the thermal
// transport the library tests' items are about.
func thermalScript() *pipelinetest.Script {
	return &pipelinetest.Script{RevisionRounds: 1, Canonical: "thermal transport", Topics: []pipelinetest.Topic{
		{Question: "How does phonon scattering limit thermal transport?", Strict: "phonon scattering thermal transport", Moderate: "thermal transport", Broad: "superconductors"},
		{Question: "What is measured in d-wave superconductors?", Strict: "d-wave superconductors measure", Moderate: "d-wave superconductors", Broad: "superconductors"},
	}}
}

// apaArticle is an APA 7 article reference's venue part, as the library's
// volume, issue and pages give it.
var apaArticle = regexp.MustCompile(`\*Physical Review B\*, \*\d+\*\(2\), 100–110\. https://doi\.org/10\.9999/reading\d+$`)

var summaryLine = regexp.MustCompile(`(\d+) added, (\d+) updated, (\d+) unchanged, (\d+) skipped, (\d+) removed`)

// Tried as a user would: two reference files are imported as two
// collections, listed with their counts; a run limited to one cites only
// its items, with APA references from their metadata marked as from the
// library; an unknown collection is refused with the list; importing again
// after deleting one entry and retitling another reports 1 removed and 1
// updated and embeds nothing; the references export as RIS, CSL-JSON and
// BibTeX that read back the same, with the person's citation keys.
func TestLibraryImportRunAndSync(t *testing.T) {
	t.Parallel()
	script := thermalScript()
	c, _ := modelCLI(t, ollamafake.Options{Responder: script.Responder()})
	thesis := bibLibrary(t, c.dir, "thesis", 24)
	reading := bibLibrary(t, c.dir, "reading", 16)

	stdout, stderr, code, _ := c.run("library", "import", thesis, reading)
	if code != 0 {
		t.Fatalf("import: exit %d\n%s\n%s", code, stdout, stderr)
	}
	sums := summaryLine.FindAllStringSubmatch(stdout, -1)
	if len(sums) != 2 || sums[0][1] != "24" || sums[1][1] != "16" || !strings.Contains(stdout, "embedded ") {
		t.Fatalf("import summaries %q:\n%s", sums, stdout)
	}
	if !strings.Contains(stdout, "added     Thermal transport in d-wave superconductors, part 0 of thesis (4 pages") {
		t.Errorf("the PDF item is not reported with its pages:\n%.3000s", stdout)
	}

	stdout, _, code, _ = c.run("library", "list", "--json")
	counts := collectionCounts(stdout)
	if code != 0 || counts["thesis"] != 24 || counts["reading"] != 16 {
		t.Fatalf("library list: exit %d %v\n%s", code, counts, stdout)
	}

	_, stderr, code, _ = c.run("run", "--collection", "nope", "--depth", "quick", "Thermal transport?")
	if code != exitUsage || !strings.Contains(stderr, "no collection nope (there are: reading, thesis)") {
		t.Errorf("an unknown collection: exit %d\n%s", code, stderr)
	}
	out := filepath.Join(c.dir, "report.md")
	_, stderr, code, _ = c.run("run", "--sources", "local", "--collection", "reading", "--depth", "quick", "--out", out,
		"How does phonon scattering limit thermal transport in d-wave superconductors?")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	stdout, _, _, _ = c.run("sessions", "list", "--json")
	id := between(stdout, `"id":"`, `"`)
	// A quick run has no review: its scores say so, not "not approved".
	// How it was asked, which its title does not say.
	if show, _, _, _ := c.run("sessions", "show", id); !strings.Contains(show, "scores    no review, 0 revision rounds,") || !strings.Contains(show, "asked     quick · standard report\n") {
		t.Errorf("sessions show of a quick run:\n%s", show)
	}
	raw, _, code, _ := c.run("sessions", "export", id, "--format", "json")
	var rep pipeline.Report
	if code != 0 || json.Unmarshal([]byte(raw), &rep) != nil {
		t.Fatalf("export json: exit %d", code)
	}
	if len(rep.Sources) == 0 {
		t.Fatalf("nothing cited:\n%s", rep.Markdown)
	}
	for _, s := range rep.Sources {
		if s.Library != "reading" || !strings.Contains(s.Title, "of reading") {
			t.Errorf("cited outside the collection: %+v", s)
		}
		if !slices.Equal(s.AuthorsFiled[:2], []string{"Müller, Anna", "van der Waals, Johannes"}) {
			t.Errorf("the library's filing of the authors is lost: %q", s.AuthorsFiled)
		}
		if !strings.HasPrefix(s.Reference, "Müller, A., van der Waals, J., & Author") || !apaArticle.MatchString(s.Reference) {
			t.Errorf("not an APA reference from the library's metadata: %q", s.Reference)
		}
	}
	if !strings.Contains(rep.Markdown, "*(your library: reading)*") {
		t.Errorf("the references do not say the works are the person's:\n%s", rep.Markdown)
	}

	// RIS and CSL-JSON read back into the same fields.
	for _, format := range []string{"ris", "csljson", "bibtex"} {
		data, _, code, _ := c.run("sessions", "export", id, "--format", format)
		items, problems := bib.Read("refs."+map[string]string{"ris": "ris", "csljson": "json", "bibtex": "bib"}[format], []byte(data))
		if code != 0 || len(problems) > 0 || len(items) != len(rep.Sources) {
			t.Fatalf("%s: exit %d, %d items of %d, %v", format, code, len(items), len(rep.Sources), problems)
		}
		for i, it := range items {
			s := rep.Sources[i]
			if it.Title != s.Title || it.Year != s.Year || it.Venue != s.Venue || it.DOI != s.DOI || len(it.Authors) != 3 ||
				it.Type != "article-journal" || it.Volume != s.Volume || it.Issue != "2" || it.Pages != "100–110" ||
				it.ID != strings.TrimPrefix(s.DOI, "10.9999/") || // the person's own citation key

				it.Authors[0] != (bib.Name{Family: "Müller", Given: "Anna"}) || it.Authors[1] != (bib.Name{Family: "van der Waals", Given: "Johannes"}) {
				t.Errorf("%s read back %+v for %+v", format, it, s)
			}
		}
	}

	// Sync: one entry deleted, one retitled.
	src, _ := os.ReadFile(reading)
	text := strings.Replace(string(src), "part 4 of {reading}", "part 4 of {reading}, revised", 1)
	i := strings.Index(text, "@article{reading005,")
	j := strings.Index(text, "@article{reading006,")
	text = text[:i] + text[j:]
	os.WriteFile(reading, []byte(text), 0o644)
	stdout, stderr, code, _ = c.run("library", "import", reading)
	sums = summaryLine.FindAllStringSubmatch(stdout, -1)
	if code != 0 || len(sums) != 1 || sums[0][0] != "0 added, 1 updated, 14 unchanged, 0 skipped, 1 removed" || strings.Contains(stdout, "embedded ") {
		t.Fatalf("sync: exit %d %q\n%s\n%s", code, sums, stdout, stderr)
	}
	if !strings.Contains(stdout, "removed   Thermal transport in d-wave superconductors, part 5 of reading") ||
		!strings.Contains(stdout, "updated   Thermal transport in d-wave superconductors, part 4 of reading, revised (new metadata)") {
		t.Errorf("sync report:\n%s", stdout)
	}
}

// TestEmptyLibraryListJSON (issue 47 #4): `library list --json` of an
// empty library is no line on stdout (an empty list in JSON lines) and
// the reason on stderr, not silence.
func TestEmptyLibraryListJSON(t *testing.T) {
	t.Parallel()
	c := newCLI(t, "http://127.0.0.1:1", nil)
	stdout, stderr, code, _ := c.run("library", "list", "--json")
	if code != 0 || strings.TrimSpace(stdout) != "" || !strings.Contains(stderr, "nothing imported yet") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
