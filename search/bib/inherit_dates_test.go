package bib

import "testing"

// Years before the common era keep their sign (BibLaTeX's EDTF dates).
func TestBCYears(t *testing.T) {
	t.Parallel()
	items, errs := ReadBibTeX([]byte("@book{caesar, title={Commentarii de Bello Gallico}, date={-0049}}\n@book{pyr, title={P}, date={-2000~}}\n@article{m, title={T}, year=2001, month=sep}"), "")
	noErrors(t, errs)
	eq(t, "year", items[0].Year, -49)
	eq(t, "date", items[0].Date, "-0049")
	eq(t, "approximate", items[1].Year, -2000)
	eq(t, "month macro", items[2].Date, "2001-09")
}

// `library import krr.bib procs.bib`: a paper's crossref names its
// proceedings in the other file, and it inherits their title as its
// venue, their year and publisher, as biber gives it.
func TestCrossrefAcrossFiles(t *testing.T) {
	t.Parallel()
	items, errs := ReadFiles([]File{
		{Name: "/l/krr.bib", Data: []byte(`@inproceedings{paper, title={A Paper}, author={Lee, Bo}, crossref={KR2020}}`)},
		{Name: "/l/procs.bib", Data: []byte(`@proceedings{kr2020, title={Proceedings of KR 2020}, year=2020, publisher={IJCAI}, editor={Ed, Al}}`)},
	})
	noErrors(t, errs[0])
	p := items[0][0]
	eq(t, "venue", p.Venue, "Proceedings of KR 2020")
	eq(t, "title", p.Title, "A Paper")
	eq(t, "year", p.Year, 2020)
	eq(t, "publisher", p.Publisher, "IJCAI")
	eq(t, "editors", p.Editors, []Name{{Family: "Ed", Given: "Al"}})
	eq(t, "the proceedings stay an item", items[1][0].Title, "Proceedings of KR 2020")
}

// XDATA fills what an entry lacks; @xdata and @set are containers, not
// works (they were items before).
func TestXDataAndSets(t *testing.T) {
	t.Parallel()
	items, errs := ReadBibTeX([]byte(`@xdata{pub, publisher={Springer}, location={Berlin}}
@book{b, title={A Book}, author={Lee, Bo}, year=2001, xdata={pub}}
@set{s, entryset={b}}`), "")
	noErrors(t, errs)
	if len(items) != 1 {
		t.Fatalf("%d items, want the book only: %+v", len(items), items)
	}
	eq(t, "publisher from xdata", items[0].Publisher, "Springer")
}
