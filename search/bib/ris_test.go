package bib

import (
	"strings"
	"testing"
)

// RIS exports of Scopus, AIP, ScienceDirect and CAS, from JabRef's tests.
func TestRISExports(t *testing.T) {
	t.Parallel()
	items, errs := ReadRIS(testdata(t, "jabref-RisImporterTestScopus.ris"))
	noErrors(t, errs)
	s := items[0]
	eq(t, "title", s.Title, "A transversely isotropic composite with a statistical distribution of spheroidal inclusions: A geometrical approach to overall properties")
	eq(t, "authors", s.Authors, []Name{{Family: "Federico", Given: "S."}, {Family: "Grillo", Given: "A."}, {Family: "Herzog", Given: "W."}})
	eq(t, "venue (T2)", s.Venue, "Journal of the Mechanics and Physics of Solids")
	eq(t, "pages (SP, EP)", s.Pages, "2309–2327")
	eq(t, "volume", s.Volume, "52")
	eq(t, "issue", s.Issue, "10")
	eq(t, "year", s.Year, 2004)
	eq(t, "doi", s.DOI, "10.1016/j.jmps.2004.03.010")
	eq(t, "tags", s.Tags, []string{"Composite", "Inclusions", "Statistical distribution", "Transverse isotropy"})
	eq(t, "type", s.Type, "article-journal")

	items, errs = ReadRIS(testdata(t, "jabref-RisImporterTest8_date.ris"))
	noErrors(t, errs)
	a := items[0]
	eq(t, "date (DA)", a.Date, "2005-07-15")
	eq(t, "accented names", a.Authors[1:4], []Name{{Family: "Molina-Bolívar", Given: "J. A."}, {Family: "Galisteo-González", Given: "F."}, {Family: "Gálvez-Ruiz", Given: "M. J."}})
	eq(t, "issn (SN)", a.ISSN, "0021-9606")
	eq(t, "publisher", a.Publisher, "American Institute of Physics")
	eq(t, "pages (SP alone)", a.Pages, "034708")
	eq(t, "url", a.URL, "https://doi.org/10.1063/1.1954747")

	items, errs = ReadRIS(testdata(t, "jabref-RisImporterTestScience.ris"))
	noErrors(t, errs)
	sd := items[0]
	eq(t, "title", sd.Title, "Phase separation and ω transformation in binary V-Ti and ternary V-Ti-Cr alloys")
	eq(t, "date (PY 2016/12//)", sd.Date, "2016-12")
	eq(t, "doi (a resolver URL)", sd.DOI, "10.1016/j.actamat.2016.09.028")
	eq(t, "venue (JO)", sd.Venue, "Acta Materialia")

	items, errs = ReadRIS(testdata(t, "jabref-RisImporterTest5a.ris"))
	noErrors(t, errs)
	eq(t, "title", items[0].Title, "Release profile of ibuprofen in β-cyclodextrin complexes from two different solid dosage forms.")
	eq(t, "venue (JF over JA)", items[0].Venue, "Powder Technology")
	eq(t, "year (PY 2012///)", items[0].Year, 2012)
}

func TestRISStructure(t *testing.T) {
	t.Parallel()
	src := "JF  - Orphan Journal\r\nT1  - no TY before me\r\n\r\n" +
		"TY  - CHAP\r\nID  - c1\r\nT1  - A chapter\r\nA1  - Doe, Jane, Jr.\r\nAU  - World Health Organization\r\n" +
		"ED  - Roe, Rick\r\nBT  - The Book\r\nSN  - 978-3-16-148410-0\r\nSN  - 1234-567X\r\nPY  - 2001/09/01/\r\n" +
		"AB  - First paragraph\r\ncontinues here.\r\n\r\nSecond paragraph.\r\nKW  - one; two\r\nKW  - three\r\n" +
		"L1  - papers/c1.pdf\r\nL1  - file:///C:/Users/me/c1.pdf\r\nL2  - http://example.org/c1\r\nER  - \r\n" +
		"TY  - THES\r\nTI  - No ER at the end\r\n"
	items, errs := ReadRIS([]byte(src))
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "RIS line 1: JF is outside a record") {
		t.Errorf("problems = %v, want JF outside a record at line 1", errs)
	}
	if len(items) != 2 {
		t.Fatalf("%d items, want 2", len(items))
	}
	c := items[0]
	eq(t, "type", c.Type, "chapter")
	eq(t, "authors", c.Authors, []Name{{Family: "Doe", Given: "Jane", Suffix: "Jr."}, {Literal: "World Health Organization"}})
	eq(t, "editors", c.Editors, []Name{{Family: "Roe", Given: "Rick"}})
	eq(t, "venue (BT)", c.Venue, "The Book")
	eq(t, "isbn", c.ISBN, "978-3-16-148410-0")
	eq(t, "issn", c.ISSN, "1234-567X")
	eq(t, "date", c.Date, "2001-09-01")
	eq(t, "abstract", c.Abstract, "First paragraph\ncontinues here.\n\nSecond paragraph.")
	eq(t, "tags", c.Tags, []string{"one", "two", "three"})
	eq(t, "files", c.Files, []string{"papers/c1.pdf", "C:/Users/me/c1.pdf"})
	eq(t, "url (L2)", c.URL, "http://example.org/c1")
	eq(t, "thesis without ER", items[1].Title, "No ER at the end")
	eq(t, "thesis", items[1].Type, "thesis")
}

// Every RIS type this package writes reads back as the CSL type it came
// from; the RIS types that other tools write map to the nearest one.
func TestRISTypes(t *testing.T) {
	t.Parallel()
	for csl, ris := range risTypesOut {
		if back := risTypes[ris]; back != csl {
			t.Errorf("%s is written %s, read back as %q", csl, ris, back)
		}
	}
	for ris, csl := range map[string]string{"JOUR": "article-journal", "CONF": "paper-conference", "CPAPER": "paper-conference",
		"BOOK": "book", "CHAP": "chapter", "THES": "thesis", "RPRT": "report", "ELEC": "webpage", "WEB": "webpage",
		"UNPB": "article", "DATA": "dataset", "GEN": "document", "NONSENSE": "document"} {
		items, _ := ReadRIS([]byte("TY  - " + ris + "\nER  - \n"))
		eq(t, ris, items[0].Type, csl)
	}
	eq(t, "unknown CSL type", risTypeOf("interview"), "GEN")
}
