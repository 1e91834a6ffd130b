package bib

import (
	"strings"
	"testing"
)

// A CSL-JSON export of Better BibTeX (Zotero): date parts as strings and
// numbers, literal names, chapters with editors, short DOIs.
func TestCSLJSONExport(t *testing.T) {
	t.Parallel()
	items, err := ReadCSLJSON(testdata(t, "bbt-library.csl.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 26 {
		t.Errorf("%d items, want 26", len(items))
	}
	b := byID(t, items, "brittain2004")
	eq(t, "title", b.Title, "Perceptions of disability and their impact upon involvement in sport for people with disabilities at all levels")
	eq(t, "authors", b.Authors, []Name{{Family: "Brittain", Given: "Ian"}})
	eq(t, "year (a date part given as a string)", b.Year, 2004)
	eq(t, "venue", b.Venue, "Journal of Sport and Social Issues")
	eq(t, "pages", b.Pages, "429–452")
	eq(t, "doi (short DOI)", b.DOI, "10/fqd6hj")
	eq(t, "issn", b.ISSN, "0193-7235")
	eq(t, "language", b.Language, "en")
	eq(t, "type", b.Type, "article-journal")

	d := byID(t, items, "duncan2002")
	eq(t, "chapter", d.Type, "chapter")
	eq(t, "editors", d.Editors, []Name{{Family: "Wenner", Given: "Lawrence"}})
	eq(t, "venue (book title)", d.Venue, "MediaSport")
	eq(t, "publisher", d.Publisher, "Routledge")

	c := byID(t, items, "courtofarbitrationforsport2019")
	eq(t, "literal author", c.Authors, []Name{{Literal: "Court of Arbitration for Sport"}})
	eq(t, "full date", c.Date, "2019-03-21")
	eq(t, "webpage", c.Type, "webpage")
}

func TestCSLJSONDates(t *testing.T) {
	t.Parallel()
	items, err := ReadCSLJSON(testdata(t, "bbt-dates.csl.json"))
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{
		"t1": "2014-12-31/2015-01-01", "t3": "2014-12-31", "t4": "2014-12-31", "doe12_edtf_2011": "2011-05",
		"doe9_edtf_2011": "2011-05-25/2012-06-26", "doe14_date2010_2010": "2011", "t2": "", "t5": "",
	} {
		eq(t, id, byID(t, items, id).Date, want)
	}
	eq(t, "year of a range", byID(t, items, "t1").Year, 2014)
	eq(t, "no year before the common era", byID(t, items, "t6").Year, 0)
}

// Tools disagree on types: numbers come as strings and strings as
// numbers; one object alone is an item.
func TestCSLJSONLenient(t *testing.T) {
	t.Parallel()
	one := `{"id": 12, "type": "Article-Journal", "title": "T", "volume": 28, "issue": "4", "page": "5-9",
	  "issued": {"date-parts": [["2019", "3", 4]]}, "container-title": ["Journal A", "J. A"],
	  "author": [{"family": "Gogh", "non-dropping-particle": "van", "given": "Vincent"}, {"literal": "WHO"},
	             {"family": "King", "given": "Martin Luther", "suffix": "Jr."}, {}],
	  "keyword": "spin; liquid, glass", "DOI": "https://doi.org/10.1000/XYZ", "language": "de"}`
	items, err := ReadCSLJSON([]byte(one))
	if err != nil {
		t.Fatal(err)
	}
	it := items[0]
	eq(t, "id (a number)", it.ID, "12")
	eq(t, "type", it.Type, "article-journal")
	eq(t, "volume (a number)", it.Volume, "28")
	eq(t, "date (strings)", it.Date, "2019-03-04")
	eq(t, "venue (an array)", it.Venue, "Journal A")
	eq(t, "pages", it.Pages, "5–9")
	eq(t, "names", it.Authors, []Name{{Family: "van Gogh", Given: "Vincent"}, {Literal: "WHO"}, {Family: "King", Given: "Martin Luther", Suffix: "Jr."}})
	eq(t, "tags", it.Tags, []string{"spin", "liquid", "glass"})
	eq(t, "doi", it.DOI, "10.1000/xyz")

	items, err = ReadCSLJSON([]byte(`[{"title": "<i>E. coli</i> and <span class=\"nocase\">DNA</span> in x<sup>2</sup> & <angles>"}]`))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "rich text", items[0].Title, "E. coli and DNA in x2 & <angles>")

	items, err = ReadCSLJSON([]byte(`{"items": [{"id": "a", "type": "book"}, {"id": "b", "issued": {"raw": "May 2001"}}]}`))
	if err != nil || len(items) != 2 {
		t.Fatalf("wrapped items: %v, %v", items, err)
	}
	eq(t, "raw date", items[1].Year, 2001)
	eq(t, "missing type", items[1].Type, "document")
}

func TestCSLJSONErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"[\n  {\"id\": \"a\"},\n  {\"id\": \"b\",}\n]", "CSL-JSON line 3: not valid JSON"},
		{`[{"id": "a"}`, "ends in the middle of the JSON"},
		{`"just a string"`, "expected an array of items"},
		{"[\n {\"id\": \"a\"}\n] trailing", "not valid JSON"},
	} {
		_, err := ReadCSLJSON([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ReadCSLJSON(%q) error = %v, want %q", c.in, err, c.want)
		}
	}
	items, err := ReadCSLJSON([]byte(`[1, null, {"id": "kept"}]`))
	if err == nil || !strings.Contains(err.Error(), "item 1 is not an object") {
		t.Errorf("error = %v, want item 1 named", err)
	}
	if len(items) != 1 || items[0].ID != "kept" {
		t.Errorf("items = %v, want the one object", items)
	}
	if items, err := ReadCSLJSON([]byte("  \n")); items != nil || err != nil {
		t.Errorf("empty file: %v, %v", items, err)
	}
}

func TestWriteCSLJSON(t *testing.T) {
	t.Parallel()
	out, err := WriteCSLJSON([]Item{{ID: "a", Title: "Fish & <Chips>", Year: 2001, Date: "2001-02",
		Authors: []Name{{Family: "Doe", Given: "J."}}, Tags: []string{"x", "y"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := `[
  {
    "id": "a",
    "type": "document",
    "title": "Fish & <Chips>",
    "author": [
      {
        "family": "Doe",
        "given": "J."
      }
    ],
    "issued": {
      "date-parts": [
        [
          2001,
          2
        ]
      ]
    },
    "keyword": "x, y"
  }
]
`
	eq(t, "output", string(out), want)
}

// One DOI rule for every reader: resolvers, "doi:" and case go, and a
// value that is not a prefix and a suffix is no DOI at all.
func TestCleanDOI(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://doi.org/10.1000/XYZ": "10.1000/xyz",
		"doi:10.1145/1137627.1137631": "10.1145/1137627.1137631",
		"https://doi.org/10.1000%2Fa": "10.1000/a",
		"10.1000/abc.":                "10.1000/abc",
		"10.1000":                     "",
		"10.1000/":                    "",
		"ISBN 978-3-16-148410-0":      "",
		"":                            "",
	} {
		if got := CleanDOI(in); got != want {
			t.Errorf("CleanDOI(%q) = %q, want %q", in, got, want)
		}
	}
}

// One broken object alone is an error naming its line, whatever part of
// it is broken.
func TestCSLJSONObjectErrors(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"{\"id\": \"a\",\n \"author\": [{\"family\": }]}", "{\"id\": \"a\",\n \"title\": x}", "{\"items\": [{\"id\": 1},\n{]}"} {
		items, err := ReadCSLJSON([]byte(in))
		if items != nil || err == nil || !strings.Contains(err.Error(), "CSL-JSON line 2: not valid JSON") {
			t.Errorf("ReadCSLJSON(%q) = %v, %v", in, items, err)
		}
	}
}
