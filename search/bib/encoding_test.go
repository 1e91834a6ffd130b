package bib

import (
	"testing"

	"golang.org/x/text/encoding/charmap"
)

// A Czech library saved in Latin-2 reads as Czech, a German one in
// Windows-1252 as German, without being told; --encoding overrides.
func TestLegacyEncodingsDetected(t *testing.T) {
	t.Parallel()
	czech := "@article{k, author={Pastrňák, Josef and Kužel, Radomír and Dvořák, Jiří}, title={Příliš žluťoučký kůň úpěl ďábelské ódy}, year=1961}"
	latin2, err := charmap.ISO8859_2.NewEncoder().String(czech)
	if err != nil {
		t.Fatal(err)
	}
	items, errs := Read("cz.bib", []byte(latin2))
	guessed(t, errs, "Latin-2")
	eq(t, "Latin-2 title", items[0].Title, "Příliš žluťoučký kůň úpěl ďábelské ódy")
	eq(t, "Latin-2 names", items[0].Authors[2], Name{Family: "Dvořák", Given: "Jiří"})

	german := "@book{g, author={Müller, Jürgen and Groß, Käthe}, title={Über die Ökonomie der Straße}, year=1990}"
	cp, _ := charmap.Windows1252.NewEncoder().String(german)
	items, errs = Read("de.bib", []byte(cp))
	guessed(t, errs, "Windows-1252")
	eq(t, "Windows-1252 title", items[0].Title, "Über die Ökonomie der Straße")
	eq(t, "Windows-1252 name", items[0].Authors[1], Name{Family: "Groß", Given: "Käthe"})

	declared := "% Encoding: ISO8859_2\n" + czech
	l2, _ := charmap.ISO8859_2.NewEncoder().String(declared)
	items, _ = Read("decl.bib", []byte(l2))
	eq(t, "declared Latin-2", items[0].Authors[1], Name{Family: "Kužel", Given: "Radomír"})

	forced, ferrs := ReadFiles([]File{{Name: "x.bib", Data: []byte(l2), Encoding: "latin1"}, {Name: "u.bib", Data: []byte(czech), Encoding: "latin1"}})
	noErrors(t, ferrs[0])
	eq(t, "--encoding leaves a UTF-8 file as it is", forced[1][0].Authors[2].Family, "Dvořák")
	eq(t, "--encoding latin1 is obeyed", forced[0][0].Authors[1].Family, "Ku¾el") // ž is 0xBE in Latin-2, ¾ in Latin-1
	_, ferrs = ReadFiles([]File{{Name: "x.bib", Data: []byte(l2), Encoding: "klingon"}})
	if len(ferrs[0]) != 1 {
		t.Errorf("an unknown encoding: %v", ferrs[0])
	}
}

// guessed checks that the only problem is the note naming the encoding
// guessed.
func guessed(t *testing.T, errs []error, name string) {
	t.Helper()
	if len(errs) != 1 || errs[0].Error() != "not UTF-8: read as "+name+" (a guess: --encoding latin1, cp1252, latin2, cp1250 or latin9 says which)" {
		t.Errorf("problems %v, want the %s guess named", errs, name)
	}
}

// Emacs's coding cookie (biber's encoding1.bib: "-*- coding: latin-9-unix
// -*-") is believed.
func TestEmacsCodingCookie(t *testing.T) {
	t.Parallel()
	src := "% -*- coding: latin-9-unix -*-\n@book{k, title={Šome title}, year=2001}"
	l9, _ := charmap.ISO8859_15.NewEncoder().String(src)
	items, errs := Read("e.bib", []byte(l9))
	noErrors(t, errs)
	eq(t, "title", items[0].Title, "Šome title")
	for _, n := range []string{"latin-9", "Latin9", "ISO-8859-15", "iso8859_15", "CP1252", "windows-1250"} {
		if !KnownEncoding(n) {
			t.Errorf("--encoding %s refused", n)
		}
	}
}
