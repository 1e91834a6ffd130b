package bib

import "testing"

// Years before the common era keep their sign (BibLaTeX's EDTF dates).
func TestBCYears(t *testing.T) {
	items, errs := ReadBibTeX([]byte("@book{caesar, title={Commentarii de Bello Gallico}, date={-0049}}\n@book{pyr, title={P}, date={-2000~}}\n@article{m, title={T}, year=2001, month=sep}"), "")
	noErrors(t, errs)
	eq(t, "year", items[0].Year, -49)
	eq(t, "date", items[0].Date, "-0049")
	eq(t, "approximate", items[1].Year, -2000)
	eq(t, "month macro", items[2].Date, "2001-09")
}
