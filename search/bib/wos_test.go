package bib

import (
	"os"
	"strings"
	"testing"
)

// Real Web of Science exports (python-wostools' examples): every record
// an item, with its full names, title, journal, pages, DOI and ID.
func TestWebOfScienceExports(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/wostools-single-article.txt")
	if err != nil {
		t.Fatal(err)
	}
	items, errs := Read("savedrecs.txt", data)
	noErrors(t, errs)
	if len(items) != 1 {
		t.Fatalf("%d items", len(items))
	}
	it := items[0]
	eq(t, "id", it.ID, "WOS:000397201600008")
	eq(t, "type", it.Type, "article-journal")
	eq(t, "title", it.Title, "Structural control of ultra-fine CoPt nanodot arrays via electrodeposition process")
	eq(t, "first author", it.Authors[0], Name{Family: "Wodarz", Given: "Siggi"})
	eq(t, "authors", len(it.Authors), 4)
	eq(t, "venue", it.Venue, "Journal of Magnetism and Magnetic Materials")
	eq(t, "volume", it.Volume, "430")
	eq(t, "pages", it.Pages, "52–58")
	eq(t, "year", it.Year, 2017)
	eq(t, "date", it.Date, "2017-05")
	eq(t, "doi", it.DOI, "10.1016/j.jmmm.2017.01.061")
	eq(t, "publisher", it.Publisher, "Elsevier Science Bv")

	data, err = os.ReadFile("testdata/wostools-savedrecs-40.txt")
	if err != nil {
		t.Fatal(err)
	}
	if f := Format("export.txt", data); f != "wos" {
		t.Fatalf("format %q", f)
	}
	items, errs = Read("export.txt", data)
	noErrors(t, errs)
	if len(items) != 40 {
		t.Fatalf("%d items of 40 records", len(items))
	}
	conf := 0
	for _, it := range items {
		if it.Title == "" || len(it.Authors) == 0 || it.Year == 0 || it.ID == "" {
			t.Errorf("item %+v lacks title, authors, year or ID", it)
		}
		if it.Type == "paper-conference" {
			conf++
		}
	}
	eq(t, "proceedings papers", conf, 6)
}

// Files that are no library say what they are and how to export one.
func TestNotALibraryFileSaysWhatItIs(t *testing.T) {
	t.Parallel()
	for data, want := range map[string]string{
		"<?xml version=\"1.0\"?><xml><records><record><ref-type name=\"Journal Article\">17</ref-type></record></records></xml>": "EndNote XML",
		"PMID- 123456\nOWN - NLM\nTI  - A title\n":      "MEDLINE",
		"%0 Journal Article\n%A Smith, J\n%T A title\n": "EndNote tagged",
		"":                   "no entries in it",
		"% just a comment\n": "no entries in it",
	} {
		items, errs := Read("refs.bib", []byte(data))
		if len(items) != 0 || len(errs) != 1 || !strings.Contains(errs[0].Error(), want) {
			t.Errorf("%q: %d items, %v; want %q", data, len(items), errs, want)
		}
	}
}
