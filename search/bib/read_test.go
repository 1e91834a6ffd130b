package bib

import (
	"strings"
	"testing"
)

func TestReadDispatch(t *testing.T) {
	t.Parallel()
	bib := testdata(t, "handwritten.bib")
	ris := testdata(t, "jabref-RisImporterTestScopus.ris")
	csl := testdata(t, "bbt-dates.csl.json")
	for _, c := range []struct {
		name   string
		data   []byte
		format string
		items  int
	}{
		{"/lib/refs.bib", bib, "bibtex", 5},
		{"/lib/refs.biblatex", bib, "bibtex", 5},
		{"/lib/refs.json", csl, "csljson", 15},
		{"/lib/refs.csljson", csl, "csljson", 15},
		{"/lib/refs.ris", ris, "ris", 1},
		// the content wins over a wrong or missing extension
		{"/lib/refs.txt", ris, "ris", 1},
		{"/lib/refs", bib, "bibtex", 5},
		{"/lib/export.bib", csl, "csljson", 15},
		{"/lib/export.json", ris, "ris", 1},
		{"/lib/export.ris", bib, "bibtex", 5},
	} {
		eq(t, c.name+" format", Format(c.name, c.data), c.format)
		items, _ := Read(c.name, c.data)
		eq(t, c.name+" items", len(items), c.items)
	}
}

func TestReadProblems(t *testing.T) {
	t.Parallel()
	_, errs := Read("/lib/notes.txt", []byte("just some notes\nwith no entries\n"))
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "notes.txt: not a library file") {
		t.Errorf("unknown format: %v", errs)
	}
	_, errs = Read("/lib/refs.json", []byte(`[{"id": "a",}]`))
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "CSL-JSON line 1: not valid JSON") {
		t.Errorf("bad JSON: %v", errs)
	}
	// broken JSON named .bib is read as the BibTeX it claims to be
	eq(t, "broken JSON named .bib", Format("x.bib", []byte(`[{"id": `)), "bibtex")
	items, errs := Read("/lib/empty.bib", nil)
	if len(items) != 0 || len(errs) != 1 || errs[0].Error() != "empty.bib: no entries in it" {
		t.Errorf("empty file: %v %v", items, errs) // said, never silent
	}
	big := make([]byte, MaxInput+1)
	_, errs = Read("/lib/huge.bib", big)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "more than the 256 MB") {
		t.Errorf("huge file: %v", errs)
	}
}

// Relative attachments are resolved against the library's folder in every
// format that has them.
func TestReadResolvesFiles(t *testing.T) {
	t.Parallel()
	items, _ := Read("/home/me/lib/refs.ris", []byte("TY  - JOUR\nL1  - pdfs/a.pdf\nL1  - /abs/b.pdf\nER  - \n"))
	eq(t, "RIS", items[0].Files, []string{"/home/me/lib/pdfs/a.pdf", "/abs/b.pdf"})
	items, _ = Read("/home/me/lib/refs.bib", []byte("@article{a, file = {:pdfs/a.pdf:PDF}}"))
	eq(t, "BibTeX", items[0].Files, []string{"/home/me/lib/pdfs/a.pdf"})
}
