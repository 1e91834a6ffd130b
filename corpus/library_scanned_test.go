package corpus_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/search/bib"
)

// imageOnlyPDF is a valid one-page PDF whose page is a picture and holds
// no text, as a scan without OCR is.
func imageOnlyPDF() []byte {
	var b bytes.Buffer
	var offs []int
	obj := func(s string) {
		offs = append(offs, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", len(offs), s)
	}
	b.WriteString("%PDF-1.4\n")
	obj("<< /Type /Catalog /Pages 2 0 R >>")
	obj("<< /Type /Pages /Kids [3 0 R] /Count 1 >>")
	obj("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Resources << /XObject << /Im1 5 0 R >> >> /Contents 4 0 R >>")
	content := "q 200 0 0 200 0 0 cm /Im1 Do Q"
	obj(fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content))
	obj("<< /Type /XObject /Subtype /Image /Width 2 /Height 2 /ColorSpace /DeviceGray /BitsPerComponent 8 /Length 4 >>\nstream\n\x00\xff\xff\x00\nendstream")
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offs)+1)
	for _, o := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offs)+1, xref)
	return b.Bytes()
}

// A scanned article (a PDF of pictures, no text) stays in the library with
// its metadata and abstract, as an item without a file does, and the
// report says why its file was not read.
func TestImageOnlyPDFKeepsItsItem(t *testing.T) {
	t.Parallel()
	w := newLibraryWorld(t)
	scan := filepath.Join(w.dir, "storage", "SCAN", "scan.pdf")
	os.MkdirAll(filepath.Dir(scan), 0o755)
	if err := os.WriteFile(scan, imageOnlyPDF(), 0o644); err != nil {
		t.Fatal(err)
	}
	items := []bib.Item{{ID: "SCAN", Type: "article-journal", Title: "A scanned classic", Year: 1952, Authors: []bib.Name{{Family: "Turing", Given: "Alan"}},
		Abstract: "Morphogenesis by reaction and diffusion.", Files: []string{scan}}}
	res := w.importItems(t, items)
	if res.Added != 1 || res.Skipped != 0 {
		t.Fatalf("import: %+v %q", res, w.reports)
	}
	if d := w.details["A scanned classic"]; !strings.Contains(d, "no text could be extracted from its file") || !strings.Contains(d, "read from its abstract") {
		t.Errorf("the report: %q", d)
	}
	if _, ok, _ := w.st.Source(search.LibraryKey("zotero", "SCAN")); !ok {
		t.Fatal("the scanned item has no record")
	}
	c, _ := w.st.Chunks(search.LibraryKey("zotero", "SCAN"))
	if len(c) != 1 || !strings.Contains(c[0].Text, "reaction and diffusion") {
		t.Fatalf("chunks: %+v", c)
	}
	// Imported again: unchanged, not dropped.
	if res := w.importItems(t, items); res.Unchanged != 1 || res.Removed+res.Skipped != 0 {
		t.Fatalf("second import: %+v %q", res, w.reports)
	}
}
