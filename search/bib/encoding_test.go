package bib

import (
	"testing"

	"golang.org/x/text/encoding/charmap"
)

// A Czech library saved in Latin-2 reads as Czech, a German one in
// Windows-1252 as German, without being told; --encoding overrides.
func TestLegacyEncodingsDetected(t *testing.T) {
	czech := "@article{k, author={Pastrňák, Josef and Kužel, Radomír and Dvořák, Jiří}, title={Příliš žluťoučký kůň úpěl ďábelské ódy}, year=1961}"
	latin2, err := charmap.ISO8859_2.NewEncoder().String(czech)
	if err != nil {
		t.Fatal(err)
	}
	items, errs := Read("cz.bib", []byte(latin2))
	noErrors(t, errs)
	eq(t, "Latin-2 title", items[0].Title, "Příliš žluťoučký kůň úpěl ďábelské ódy")
	eq(t, "Latin-2 names", items[0].Authors[2], Name{Family: "Dvořák", Given: "Jiří"})

	german := "@book{g, author={Müller, Jürgen and Groß, Käthe}, title={Über die Ökonomie der Straße}, year=1990}"
	cp, _ := charmap.Windows1252.NewEncoder().String(german)
	items, errs = Read("de.bib", []byte(cp))
	noErrors(t, errs)
	eq(t, "Windows-1252 title", items[0].Title, "Über die Ökonomie der Straße")
	eq(t, "Windows-1252 name", items[0].Authors[1], Name{Family: "Groß", Given: "Käthe"})

	declared := "% Encoding: ISO8859_2\n" + czech
	l2, _ := charmap.ISO8859_2.NewEncoder().String(declared)
	items, _ = Read("decl.bib", []byte(l2))
	eq(t, "declared Latin-2", items[0].Authors[1], Name{Family: "Kužel", Given: "Radomír"})

	forced, ferrs := ReadFiles([]File{{Name: "x.bib", Data: []byte(l2), Encoding: "latin1"}})
	noErrors(t, ferrs[0])
	eq(t, "--encoding latin1 is obeyed", forced[0][0].Authors[1].Family, "Ku¾el") // ž is 0xBE in Latin-2, ¾ in Latin-1
	_, ferrs = ReadFiles([]File{{Name: "x.bib", Data: []byte(l2), Encoding: "klingon"}})
	if len(ferrs[0]) != 1 {
		t.Errorf("an unknown encoding: %v", ferrs[0])
	}
}
