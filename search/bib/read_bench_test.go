package bib

import (
	"bytes"
	"fmt"
	"testing"
)

// BenchmarkRead100kEntries reads a library of 100,000 entries through
// Read, as `library import` does: "minimal" is the file of issue 39
// (100,010 one-line BibTeX entries, 3 MB, the last 10 over MaxItems);
// "bibtex", "csljson" and "ris" are 100,000 full items (authors, venue,
// date, DOI, URL, tags, an abstract) as WriteBibTeX, WriteCSLJSON and
// WriteRIS write them. Time and memory should grow linearly with the
// entries: compare with -benchtime 1x at 10,000 (see benchItems).
func BenchmarkRead100kEntries(b *testing.B) {
	var minimal bytes.Buffer
	for i := 0; i < MaxItems+10; i++ {
		fmt.Fprintf(&minimal, "@misc{k%d, title = {T%d}}\n", i, i)
	}
	items := benchItems(MaxItems)
	csl, err := WriteCSLJSON(items)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name, file string
		data       []byte
	}{
		{"minimal", "refs.bib", minimal.Bytes()},
		{"bibtex", "refs.bib", WriteBibTeX(items)},
		{"csljson", "refs.json", csl},
		{"ris", "refs.ris", WriteRIS(items)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			b.ReportAllocs()
			for b.Loop() {
				got, _ := Read(c.file, c.data)
				if len(got) != MaxItems {
					b.Fatalf("%d items, want %d", len(got), MaxItems)
				}
			}
		})
	}
}

// benchItems are n distinct items with every common field.
func benchItems(n int) []Item {
	items := make([]Item, n)
	for i := range items {
		items[i] = Item{
			ID: fmt.Sprintf("smith%d", i), Type: "article-journal",
			Title:   fmt.Sprintf("Spin liquids in Kitaev materials, part %d: a review", i),
			Authors: []Name{{Family: "Smith", Given: "Anna B."}, {Family: "van der Waals", Given: "Johannes"}, {Family: fmt.Sprintf("Author%d", i), Given: "C."}},
			Year:    2019, Date: "2019-03-04", Venue: "Physical Review B", Volume: "99", Issue: "12", Pages: "125101–125120",
			DOI: fmt.Sprintf("10.1103/physrevb.99.%d", i), URL: fmt.Sprintf("https://example.org/paper/%d", i),
			Abstract: "We review the field of Kitaev materials and the spin liquids they may hold, with what experiments have shown so far.",
			Tags:     []string{"spin liquid", "Kitaev"},
		}
	}
	return items
}
