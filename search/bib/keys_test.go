package bib

import (
	"strings"
	"testing"
)

// Two works under one key keep their IDs when one of them is deleted or
// moved (the suffix is the work's, not its place's); an entry repeated
// whole is imported once; an entry without a key gets a readable one.
func TestKeysAreStable(t *testing.T) {
	t.Parallel()
	books := `@book{Scales2015, title={Books under fire}, year=2015}
`
	scales := `@book{Scales2015, title={Scales on censorship}, year=2015}
@article{Milazzo2017, title={M}, doi={10.1/m}, year=2017}
@article{Milazzo2017, title={M}, doi={10.1/m}, year=2017}
`
	both, errs := ReadBibTeX([]byte(books+scales), "")
	alone, _ := ReadBibTeX([]byte(scales), "")
	moved, _ := ReadBibTeX([]byte(scales+books), "")
	id := func(items []Item, title string) string {
		for _, it := range items {
			if it.Title == title {
				return it.ID
			}
		}
		return ""
	}
	if len(both) != 3 {
		t.Fatalf("%d items, want 3 (the repeated Milazzo2017 once): %+v", len(both), both)
	}
	eq(t, "first keeps the key", id(both, "Books under fire"), "Scales2015")
	second := id(both, "Scales on censorship")
	if !strings.HasPrefix(second, "Scales2015-") || len(second) != len("Scales2015-0000") {
		t.Fatalf("second work's ID %q", second)
	}
	eq(t, "moved after the other, the first keeps its suffix-free key", id(moved, "Books under fire"), "Scales2015-"+contentTag(Item{Title: "Books under fire", Year: 2015, Type: "book"}))
	eq(t, "the other alone", id(alone, "Scales on censorship"), "Scales2015")
	notes := 0
	for _, e := range errs {
		if pe, ok := e.(*ParseError); ok && pe.Imported {
			notes++
			if strings.Contains(pe.Msg, "both") {
				t.Errorf("a note says %q", pe.Msg)
			}
		}
	}
	eq(t, "notes (a suffix, a copy)", notes, 2)
}

// A home-folder attachment path (BibDesk, Papers: "~/Papers/x.pdf") is the
// person's home folder, not a relative path.
func TestHomeFolderAttachments(t *testing.T) {
	t.Setenv("HOME", "/home/ann")
	items, errs := ReadBibTeX([]byte(`@article{k, title={T}, file={~/Papers/x.pdf}}`), "/lib")
	noErrors(t, errs)
	eq(t, "file", items[0].Files, []string{"/home/ann/Papers/x.pdf"})
}
