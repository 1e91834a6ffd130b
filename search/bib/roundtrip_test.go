package bib

import (
	"reflect"
	"sort"
	"testing"
)

// fullItems cover every field of Item, with every kind of name, and every
// CSL type that RIS has a type for.
func fullItems() []Item {
	base := Item{
		ID:    "smith2019",
		Type:  "article-journal",
		Title: "Spin liquids in Kitaev materials: a review – with “quotes” & <angles>",
		Authors: []Name{{Family: "Smith", Given: "Anna B."}, {Family: "van der Waals", Given: "Johannes"},
			{Family: "King", Given: "Martin Luther", Suffix: "Jr."}, {Literal: "CERN Collaboration"}, {Family: "Plato"}},
		Editors:     []Name{{Family: "Müller", Given: "Jörg"}},
		Year:        2019,
		Date:        "2019-03-04",
		Venue:       "Physical Review B",
		Volume:      "99",
		Issue:       "12",
		Pages:       "125101–125120",
		Publisher:   "American Physical Society",
		DOI:         "10.1103/physrevb.99.125101",
		ISBN:        "978-3-16-148410-0",
		ISSN:        "2469-9950",
		URL:         "https://journals.aps.org/prb/abstract/10.1103/PhysRevB.99.125101",
		Abstract:    "We review the field.\n\nTY - JOUR is how a RIS record starts.",
		Language:    "en-GB",
		Tags:        []string{"spin liquid", "Kitaev", "Majorana"},
		Collections: []string{"Thesis/Chapter 2", "Reading"},
		Files:       []string{"/home/anna/papers/smith2019.pdf", `C:\Users\anna\smith2019-si.pdf`},
	}
	items := []Item{base}
	var types []string
	for typ := range risTypesOut {
		types = append(types, typ)
	}
	sort.Strings(types)
	for i, typ := range types {
		it := base
		it.ID = "t" + itoaTest(i)
		it.Type = typ
		it.Date, it.Year = "2001-11", 2001
		items = append(items, it)
	}
	minimal := Item{ID: "min", Type: "document", Title: "Only a title"}
	return append(items, minimal)
}

func itoaTest(i int) string { return string(rune('a'+i/26)) + string(rune('a'+i%26)) }

// sameFields compares two items field by field, naming each that differs.
func sameFields(t *testing.T, what string, got, want Item) {
	t.Helper()
	g, w := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := 0; i < g.NumField(); i++ {
		if !reflect.DeepEqual(g.Field(i).Interface(), w.Field(i).Interface()) {
			t.Errorf("%s %s: %s = %#v, want %#v", what, want.ID, g.Type().Field(i).Name, g.Field(i).Interface(), w.Field(i).Interface())
		}
	}
}

func TestRoundTripCSLJSON(t *testing.T) {
	t.Parallel()
	items := fullItems()
	data, err := WriteCSLJSON(items)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ReadCSLJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(items) {
		t.Fatalf("%d items back, want %d", len(back), len(items))
	}
	for i, want := range items {
		// CSL-JSON has no field for attachments or collections.
		want.Files, want.Collections = nil, nil
		sameFields(t, "CSL-JSON", back[i], want)
	}
}

func TestRoundTripRIS(t *testing.T) {
	t.Parallel()
	items := fullItems()
	back, errs := ReadRIS(WriteRIS(items))
	noErrors(t, errs)
	if len(back) != len(items) {
		t.Fatalf("%d items back, want %d", len(back), len(items))
	}
	for i, want := range items {
		// RIS has no tag for collections.
		want.Collections = nil
		sameFields(t, "RIS", back[i], want)
	}
}

// What a format cannot carry, shown rather than hidden: RIS keeps the
// start of a date range and reads an organisation with a comma as a
// person; CSL-JSON's keyword is one string, so a tag with a comma splits.
func TestRoundTripLimits(t *testing.T) {
	t.Parallel()
	it := Item{ID: "x", Type: "report", Year: 2015, Date: "2015-06-22/2015-06-26",
		Authors: []Name{{Literal: "Smith, Jones & Partners"}}, Tags: []string{"a, b"}}
	back, _ := ReadRIS(WriteRIS([]Item{it}))
	eq(t, "RIS date range", back[0].Date, "2015-06-22")
	eq(t, "RIS organisation with a comma", back[0].Authors, []Name{{Family: "Smith", Given: "Jones & Partners"}})
	data, _ := WriteCSLJSON([]Item{it})
	csl, _ := ReadCSLJSON(data)
	eq(t, "CSL date range", csl[0].Date, "2015-06-22/2015-06-26")
	eq(t, "CSL organisation", csl[0].Authors, it.Authors)
	eq(t, "CSL tag with a comma", csl[0].Tags, []string{"a", "b"})

	// An item with a year and no date comes back with the year as its
	// date: every reader gives Date when it knows the year.
	back, _ = ReadRIS(WriteRIS([]Item{{ID: "y", Type: "book", Year: 1999}}))
	eq(t, "year only", back[0].Date, "1999")
}

// Real exports survive a trip through both writers.
func TestRoundTripRealFiles(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"bbt-library.bib", "jabref-complex.bib", "bbt-particles.biblatex", "mendeley-desktop.bib"} {
		items, _ := ReadBibTeX(testdata(t, name), "/lib")
		data, err := WriteCSLJSON(items)
		if err != nil {
			t.Fatal(err)
		}
		csl, err := ReadCSLJSON(data)
		if err != nil {
			t.Fatal(err)
		}
		ris, errs := ReadRIS(WriteRIS(items))
		noErrors(t, errs)
		for i, want := range items {
			w := want
			w.Files, w.Collections = nil, nil
			sameFields(t, name+" via CSL-JSON", csl[i], w)
			w = want
			w.Collections = nil
			if want.URL != "" && !isWebURL(want.URL) {
				w.URL = "" // RIS's UR is read as a web link only
			}
			sameFields(t, name+" via RIS", ris[i], w)
		}
	}
}
