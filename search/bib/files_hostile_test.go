package bib

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// hasDotDot reports a ".." element, which is what the importer refuses.
func hasDotDot(p string) bool {
	for _, el := range strings.Split(filepath.ToSlash(p), "/") {
		if el == ".." {
			return true
		}
	}
	return false
}

// A library file's relative attachment paths that climb out of its folder
// keep their "..", so the importer can see them and refuse them; they are
// not cleaned into absolute paths that look like any other. A ".." that
// stays inside the folder is cleaned as before, and absolute paths stay as
// written.
func TestAttachmentPathsThatClimbOut(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("Unix paths")
	}
	dir := "/shared/library"
	name := filepath.Join(dir, "refs.bib")
	bibtex := `@article{up, title = {Up}, file = {../../home/me/.ssh/notes.txt}}
@article{jabref, title = {JabRef}, file = {:papers/../../../etc/x.pdf:PDF}}
@article{zotero, title = {Zotero}, file = {Full Text:papers/../../outside.pdf:application/pdf}}
@article{inside, title = {Inside}, file = {papers/../ok.pdf}}
@article{abs, title = {Absolute}, file = {/home/me/Zotero/storage/ABCD1234/x.pdf}}
`
	items, errs := Read(name, []byte(bibtex))
	noErrors(t, errs)
	files := map[string]string{}
	for _, it := range items {
		if len(it.Files) != 1 {
			t.Fatalf("%s: files %q", it.ID, it.Files)
		}
		files[it.ID] = it.Files[0]
	}
	for _, id := range []string{"up", "jabref", "zotero"} {
		if !hasDotDot(files[id]) || !strings.HasPrefix(files[id], dir+"/") {
			t.Errorf("%s: %q lost its .. (it would read as a file outside the library's folder like any other)", id, files[id])
		}
	}
	eq(t, "inside", files["inside"], filepath.Join(dir, "ok.pdf"))
	eq(t, "absolute", files["abs"], "/home/me/Zotero/storage/ABCD1234/x.pdf")

	ris := "TY  - JOUR\nTI  - Up\nL1  - ../../../etc/passwd.txt\nER  - \nTY  - JOUR\nTI  - In\nL1  - pdfs/a.pdf\nER  - \n"
	items, errs = Read(filepath.Join(dir, "refs.ris"), []byte(ris))
	noErrors(t, errs)
	if len(items) != 2 || len(items[0].Files) != 1 || !hasDotDot(items[0].Files[0]) {
		t.Fatalf("RIS: %+v", items)
	}
	eq(t, "RIS inside", items[1].Files[0], filepath.Join(dir, "pdfs", "a.pdf"))
}
