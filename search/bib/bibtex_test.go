package bib

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func testdata(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func byID(t *testing.T, items []Item, id string) Item {
	t.Helper()
	for _, it := range items {
		if it.ID == id {
			return it
		}
	}
	t.Fatalf("no item %q among %d", id, len(items))
	return Item{}
}

func eq[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %#v, want %#v", what, got, want)
	}
}

func noErrors(t *testing.T, errs []error) {
	t.Helper()
	for _, err := range errs {
		t.Errorf("unexpected problem: %v", err)
	}
}

// The hand-written file has accents in several spellings, macros, missing
// fields and a broken entry in the middle: the broken one is reported by
// line and key, every other one is read.
func TestHandwrittenBibTeX(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	items, errs := ReadBibTeX(testdata(t, "handwritten.bib"), dir)

	if len(errs) != 2 || !strings.Contains(errs[1].Error(), "line 41 (nothing): it has no fields: imported with its key as its title") {
		t.Fatalf("problems = %v, want the broken entry and the note on the empty one", errs)
	}
	var pe *ParseError
	if !asParseError(errs[0], &pe) || pe.Line != 28 || pe.Key != "broken2020" {
		t.Errorf("problem = %#v, want line 28, key broken2020", errs[0])
	}
	if msg := errs[0].Error(); !strings.Contains(msg, "line 28") || !strings.Contains(msg, "broken2020") || !strings.Contains(msg, "unbalanced braces") {
		t.Errorf("problem reads %q", msg)
	}
	var ids []string
	for _, it := range items {
		ids = append(ids, it.ID)
	}
	eq(t, "ids", ids, []string{"mueller2019", "dvorak1990", "aangstrom2021", "nothing", "arxiv2203"})

	m := byID(t, items, "mueller2019")
	eq(t, "title", m.Title, "DNA repair in E. coli: the α-helix and β-sheet – a review")
	eq(t, "authors", m.Authors, []Name{{Family: "Müller", Given: "Jörg"}, {Family: "Öztürk", Given: "Ayşe"},
		{Family: "Lefèvre", Given: "François"}, {Family: "Zola", Given: "Émile"}})
	eq(t, "type", m.Type, "article-journal")
	eq(t, "venue (a @string macro)", m.Venue, "Journal of Chemical Physics")
	eq(t, "year", m.Year, 2019)
	eq(t, "date (month macro)", m.Date, "2019-03")
	eq(t, "pages", m.Pages, "1–10")
	eq(t, "volume", m.Volume, "150")
	eq(t, "issue", m.Issue, "12")
	eq(t, "doi", m.DOI, "10.1063/1.5086789")
	eq(t, "tags", m.Tags, []string{"DNA", "repair", "proteins"})

	d := byID(t, items, "dvorak1990")
	eq(t, "authors", d.Authors, []Name{{Family: "Dvořák", Given: "Antonín"}, {Family: "Erdős", Given: "Paul"},
		{Family: "Łukasiewicz", Given: "Jan"}, {Family: "Gauß", Given: "Carl Friedrich"}})
	eq(t, "title", d.Title, "Straße & Co: 100% of $5 #1 works of art")
	eq(t, "publisher (# concatenation)", d.Publisher, "Springer und Verlag")
	eq(t, "type", d.Type, "book")

	a := byID(t, items, "aangstrom2021")
	eq(t, "title", a.Title, "Øresund bridges and ålborg: æsthetics, œuvre, łódź, İstanbul")
	eq(t, "authors (and others dropped)", a.Authors, []Name{{Family: "Ångström", Given: "Anders"}, {Literal: "World Health Organization"}})
	eq(t, "venue", a.Venue, "Proceedings of the 3rd Workshop")
	eq(t, "date range", a.Date, "2021-09-13/2021-09-17")
	eq(t, "year", a.Year, 2021)
	eq(t, "type", a.Type, "paper-conference")

	n := byID(t, items, "nothing")
	eq(t, "empty entry", n, Item{ID: "nothing", Type: "document"})

	x := byID(t, items, "arxiv2203")
	eq(t, "type (misc with eprint)", x.Type, "article")
	eq(t, "title", x.Title, "Spin liquids: H₂O at 10⁻³ K")
	eq(t, "authors", x.Authors, []Name{{Family: "de la Cruz", Given: "Juan"}, {Family: "van der Waals", Given: "Johannes Diderik"}})
	eq(t, "url", x.URL, "https://arxiv.org/abs/2203.01234")
	eq(t, "language", x.Language, "en")
	eq(t, "files", x.Files, []string{filepath.Join(dir, "papers", "arxiv2203.pdf"), "/abs/snap.html"})
}

func asParseError(err error, pe **ParseError) bool {
	p, ok := err.(*ParseError)
	*pe = p
	return ok
}

// A Better BibTeX export (Zotero), BibTeX flavour, cut from BBT's test
// fixtures: LaTeX accents in names, \textendash, bare-number years, month
// macros, attachments. One of its entries is genuinely broken (an
// unbalanced brace in a publisher) and must cost that entry only.
func TestBetterBibTeXExport(t *testing.T) {
	t.Setenv("HOME", "/home/ann")
	items, errs := ReadBibTeX(testdata(t, "bbt-library.bib"), "/lib")
	if len(items) != 111 {
		t.Errorf("%d items, want 111 of the 112 entries", len(items))
	}
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "line 267 (AGESCHEIDER:2009dk)") {
		t.Errorf("problems = %v, want one for AGESCHEIDER:2009dk at line 267", errs)
	}
	a := byID(t, items, "Abawi:2004ks")
	eq(t, "title", a.Title, "Accuracy in Optical Tracking with Fiducial Markers: An Accuracy Function for ARToolKit")
	eq(t, "authors", a.Authors, []Name{{Family: "Abawi", Given: "Daniel F"}, {Family: "Bienwald", Given: "Joachim"}, {Family: "Dörner", Given: "Ralf"}})
	eq(t, "date", a.Date, "2004-11")
	eq(t, "year", a.Year, 2004)
	eq(t, "pages", a.Pages, "260–261")
	eq(t, "doi", a.DOI, "10.1109/ismar.2004.8")
	eq(t, "isbn", a.ISBN, "0-7695-2191-6")
	eq(t, "publisher", a.Publisher, "IEEE Computer Society")
	eq(t, "files (~ is the home folder)", a.Files, []string{"/home/ann/BBTTEST/48EB765D-F196-4600-BB07-160322A89457.pdf"})

	eq(t, "Hornbæk", byID(t, items, "Alexander:2018cq").Authors[3], Name{Family: "Hornbæk", Given: "Kasper"})
	eq(t, "Alrøe", byID(t, items, "Alroe:2012di").Authors[0], Name{Family: "Alrøe", Given: "Tobias"})
	eq(t, "title with \\textendash", byID(t, items, "Akerman:2011tk").Title, "Prochinima – Using Pico Projector to Tell Situated Stories")
	eq(t, "files (an escaped colon, a relative path)", byID(t, items, "Anonymous:2010p7822").Files,
		[]string{"/home/ann/BBTTEST/MobileHCI '10 2010 Pielot.pdf", "/lib/files/Anonymous:2010p7822/MobileHCI '10 2010 Pielot.pdf"})
	files := 0
	for _, it := range items {
		files += len(it.Files)
		if it.Title == "" {
			t.Errorf("%s has no title", it.ID)
		}
	}
	if files != 86 {
		t.Errorf("%d attachments, want the 86 the 111 entries name", files)
	}
}

// A Better BibLaTeX export exercising names: particles, suffixes,
// organisations, Greek script.
func TestBetterBibLaTeXNames(t *testing.T) {
	t.Parallel()
	items, errs := ReadBibTeX(testdata(t, "bbt-particles.biblatex"), "")
	noErrors(t, errs)
	if len(items) != 53 {
		t.Errorf("%d items, want 53", len(items))
	}
	for id, want := range map[string][]Name{
		"bugreports_parseName":                                    {{Family: "van Happel", Given: "Eduard"}, {Family: "von Hoppel", Given: "Gustav"}},
		"bennett_citations_2013":                                  {{Family: "Bennett", Given: "Frank G.", Suffix: "Jr."}},
		"bugreports_DemoPageFullCiteCruftOnSubsequent":            {{Literal: "U.S. Bureau of the Census"}},
		"bugreports_GreekStyleProblems":                           {{Family: "Καρυωτάκης", Given: "Κώστας"}},
		"decorations_AndTermUnaffectedByNameDecorations":          {{Family: "Doe", Given: "John", Suffix: "III"}, {Family: "van Roe", Given: "Jane"}},
		"name_ParsedNonDroppingParticleWithAffixes":               {{Family: "de la Fontaine", Given: "Jean"}},
		"name_ParticleCaps3":                                      {{Family: "Van Dyke", Given: "Dick"}},
		"disambiguate_FailWithYearSuffix":                         {{Literal: "Caritas Europa"}, {Literal: "JRS-Europe"}},
		"name_MixedFormatsInitialSortOrderAllWithDecorationsEtAl": {{Family: "van Winkle", Given: "Rip"}, {Family: "Thucydides", Given: "Carl", Suffix: "III"}},
	} {
		eq(t, id, byID(t, items, id).Authors, want)
	}
	book := byID(t, items, "almeida_reading_2013")
	eq(t, "title (\\mkbibemph, nested braces)", book.Title, "Reading HLA Hart's: The Concept of Law")
	eq(t, "editors", book.Editors[1], Name{Family: "Edwards", Given: "James"})
	eq(t, "language", book.Language, "en")
	eq(t, "title with escaped _", byID(t, items, "bugreports_parseName").Title, "bugreports_parseName")
}

// BibLaTeX dates with ranges, as Better BibLaTeX writes them.
func TestBetterBibLaTeXDateRanges(t *testing.T) {
	t.Parallel()
	items, errs := ReadBibTeX(testdata(t, "bbt-dateranges.biblatex"), "")
	noErrors(t, errs)
	a := byID(t, items, "Adams2015")
	eq(t, "date", a.Date, "2015-06-22/2015-06-26")
	eq(t, "year", a.Year, 2015)
	eq(t, "venue (journaltitle)", a.Venue, "Bulletin of Volcanology")
	eq(t, "title", a.Title, "746: The Physical Volcanology of the 1600 Eruption of Huaynaputina, Southern Peru")
	w := byID(t, items, "P.Widhalm2011")
	eq(t, "braced names", w.Authors, []Name{{Literal: "P. Widhalm"}, {Literal: "H. Koller"}, {Literal: "W. Ponweiser"}})
	eq(t, "doi", w.DOI, "10.1109/fists.2011.5973643")
	eq(t, "tags (case kept: fault detection, Fault detection)", len(w.Tags), 19)
	eq(t, "date across months", byID(t, items, "Seeley1989").Date, "1989-01-30/1989-02-03")
}

// JabRef's own test library: groups with a hierarchy in @Comment, file
// fields, DOIs as resolver URLs, names with particles and suffixes,
// BibTeX-style line-wrapped values.
func TestJabRefLibrary(t *testing.T) {
	t.Parallel()
	items, errs := ReadBibTeX(testdata(t, "jabref-complex.bib"), "/lib")
	noErrors(t, errs)
	if len(items) != 20 {
		t.Errorf("%d items, want 20", len(items))
	}
	b := byID(t, items, "1137631")
	eq(t, "authors", b.Authors[:3], []Name{{Family: "Boström", Given: "Gustav"}, {Family: "Wäyrynen", Given: "Jaana"}, {Family: "Bodén", Given: "Marine"}})
	eq(t, "files", b.Files, []string{"/Volumes/iDisk/Freie Universität Berlin/Semester 9/Softwareprozesse/p11-bostrom.pdf"})
	eq(t, "collections (group paths from the tree)", b.Collections, []string{"StaticGroup", "TestOne/TestOneSubOne", "TestOne/TestOneSubTwo", "TestOne", "TestTwo"})
	eq(t, "doi (from a resolver URL)", b.DOI, "10.1145/1137627.1137631")
	eq(t, "type", b.Type, "paper-conference")

	c := byID(t, items, "10250999")
	eq(t, "names", c.Authors, []Name{{Family: "von Hippel", Given: "Eric"}, {Family: "Reagle", Given: "Joseph M.", Suffix: "Jr."},
		{Family: "Sherry", Given: "John F.", Suffix: "Jr."}, {Family: "van den Huevel", Given: "Johan A", Suffix: "Jr."}})
	eq(t, "wrapped booktitle", byID(t, items, "1143122").Venue, "SOUPS '06: Proceedings of the second symposium on Usable privacy and security")
	th := byID(t, items, "deBraga2001")
	eq(t, "thesis title (\\textit)", th.Title, "The postcranial anatomy of Procolophon (Parareptilia: Procolophonidae) and its implications for the origin of turtles")
	eq(t, "thesis type", th.Type, "thesis")
	eq(t, "thesis publisher (school)", th.Publisher, "Department of Zoology, University of Toronto")
}

// JabRef escapes the colon of a drive and doubles backslashes.
func TestJabRefWindowsFiles(t *testing.T) {
	t.Parallel()
	items, errs := ReadBibTeX(testdata(t, "jabref-files.bib"), "/lib")
	noErrors(t, errs)
	eq(t, "one file", byID(t, items, "entry1").Files, []string{`D:\Janosh\_UNI\_Eclipse_WS\Jabref_WC\src\tests\net\sf\jabref\imports\unlinkedFilesTestFolder\pdfInDatabase.pdf`})
	eq(t, "two files", byID(t, items, "entry2").Files, []string{`D:\Janosh\_UNI\_Eclipse_WS\Jabref\pdfTestFolder\sub2\sub22\d1anl2.pdf`, `D:\Janosh\_UNI\_Eclipse_WS\Jabref\pdfTestFolder\metaDataPdf.pdf`})
}

// A Mendeley Desktop export: LaTeX in file paths, the leading slash of a
// Unix path dropped, several URLs in one field, month as a word.
func TestMendeleyDesktopExport(t *testing.T) {
	t.Parallel()
	items, errs := ReadBibTeX(testdata(t, "mendeley-desktop.bib"), "/lib")
	noErrors(t, errs)
	if len(items) != 1 {
		t.Fatalf("%d items, want 1", len(items))
	}
	it := items[0]
	eq(t, "id", it.ID, "Lesley2004")
	eq(t, "files", it.Files, []string{"/media/Daten/Dokumente/Universität/Wissenschaftliche Projekte/Bib/2004/Lesley et al. - TSG-6 Modulates the Interaction between Hyaluronan and Cell Surface CD44.pdf"})
	eq(t, "title", it.Title, "TSG-6 Modulates the Interaction between Hyaluronan and Cell Surface CD44")
	eq(t, "date", it.Date, "2004-06")
	eq(t, "url (the first of three)", it.URL, "http://www.ncbi.nlm.nih.gov/pubmed/15060082")
	eq(t, "doi", it.DOI, "10.1074/jbc.m313319200")
	eq(t, "pages", it.Pages, "25745–25754")
	eq(t, "publisher (institution is an affiliation here)", it.Publisher, "")
	if !strings.Contains(it.Abstract, "Link_TSG6") {
		t.Errorf("abstract does not decode {\\_}: %.120q", it.Abstract)
	}
	eq(t, "authors", it.Authors[1], Name{Family: "Gal", Given: "I."})
}

// The file field in each exporter's dialect, as one entry each.
func TestFileFieldDialects(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, field string
		want        []string
	}{
		{"Zotero, relative", `Full Text PDF:files/47/paper.pdf:application/pdf`, []string{"/lib/files/47/paper.pdf"}},
		{"Zotero, two", `Full Text PDF:/abs/x.pdf:application/pdf;Snapshot:/abs/y.html:text/html`, []string{"/abs/x.pdf", "/abs/y.html"}},
		{"Zotero, unescaped drive", `Test:E:\some\folder\paper.pdf:application/pdf`, []string{`E:\some\folder\paper.pdf`}},
		{"Zotero, escaped drive", `Test:E\:\\some\\folder\\paper.pdf:application/pdf`, []string{`E:\some\folder\paper.pdf`}},
		{"Better BibTeX", `/Users/me/Zotero/storage/AB12/x.pdf;/Users/me/y.pdf`, []string{"/Users/me/Zotero/storage/AB12/x.pdf", "/Users/me/y.pdf"}},
		{"Better BibTeX, Windows", `C:\\Users\\me\\x.pdf`, []string{`C:\Users\me\x.pdf`}},
		{"JabRef, relative", `:papers/x.pdf:PDF`, []string{"/lib/papers/x.pdf"}},
		{"JabRef, Windows relative", `:papers\\x.pdf:PDF`, []string{"/lib/papers/x.pdf"}},
		{"JabRef, escaped drive", `:C\:/Users/x.pdf:PDF`, []string{"C:/Users/x.pdf"}},
		{"JabRef, described", `Main text:/srv/papers/x.pdf:PDF`, []string{"/srv/papers/x.pdf"}},
		{"Mendeley, Windows", `:C$\backslash$:/Users/me/AppData/Local/Mendeley Ltd./Mendeley Desktop/Downloaded/Smith - 2010 - Title.pdf:pdf`,
			[]string{"C:/Users/me/AppData/Local/Mendeley Ltd./Mendeley Desktop/Downloaded/Smith - 2010 - Title.pdf"}},
		{"Mendeley, Unix", `:home/me/.local/share/data/Mendeley Ltd./Mendeley Desktop/Downloaded/x.pdf:pdf`,
			[]string{"/home/me/.local/share/data/Mendeley Ltd./Mendeley Desktop/Downloaded/x.pdf"}},
		{"Mendeley, escapes", `:C$\backslash$:/some/dir/a,.$\backslash$;'[]\{\}-=\~{}!@\#\$\%\^{}\&()\_+.pdf:pdf`,
			[]string{"C:/some/dir/a,.;'[]{}-=~!@#$%^&()_+.pdf"}},
		{"Mendeley, accents", `:Users/me/M{\"{u}}ller{\_}2001 -- draft.pdf:pdf`, []string{"/Users/me/Müller_2001 -- draft.pdf"}},
		{"file URL", `:file\:///tmp/x.pdf:PDF`, []string{"/tmp/x.pdf"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			items, errs := ReadBibTeX([]byte("@article{k,\n  file = {"+c.field+"},\n}\n"), "/lib")
			noErrors(t, errs)
			eq(t, "files", items[0].Files, c.want)
		})
	}
	items, _ := ReadBibTeX([]byte(`@misc{k, file = {:http\://arxiv.org/pdf/2003.05580v3:PDF}}`), "/lib")
	eq(t, "a link is the URL, not a file", items[0].URL, "http://arxiv.org/pdf/2003.05580v3")
	eq(t, "no file", items[0].Files, []string(nil))
}

func TestEntryTypes(t *testing.T) {
	t.Parallel()
	for typ, want := range map[string]string{
		"article": "article-journal", "inproceedings": "paper-conference", "conference": "paper-conference",
		"book": "book", "incollection": "chapter", "inbook": "chapter", "phdthesis": "thesis", "mastersthesis": "thesis",
		"thesis": "thesis", "techreport": "report", "report": "report", "online": "webpage", "electronic": "webpage",
		"www": "webpage", "unpublished": "manuscript", "misc": "document", "dataset": "dataset", "software": "software",
		"whatever": "document",
	} {
		items, errs := ReadBibTeX([]byte("@"+strings.ToUpper(typ[:1])+typ[1:]+"{k, title = {T}}"), "")
		noErrors(t, errs)
		eq(t, typ, items[0].Type, want)
	}
	items, _ := ReadBibTeX([]byte(`@article{k, journal = {arXiv preprint arXiv:2101.00001}}`), "")
	eq(t, "article in arXiv", items[0].Type, "article")
	items, _ = ReadBibTeX([]byte(`@unpublished{k, eprint = {2101.00001}, eprinttype = {arxiv}}`), "")
	eq(t, "unpublished with eprint", items[0].Type, "article")
}

// The syntax exporters and people use: parentheses, quotes, numbers,
// macros defined with parentheses, comments and preambles, duplicate
// fields, trailing commas, crossref.
func TestBibTeXSyntax(t *testing.T) {
	t.Parallel()
	src := `This text is a comment, and so is user@example.org.
@preamble{ "\newcommand{\noopsort}[1]{}" }
@comment{ @article{ignored, title = {no}} }
@String(pub = {ACM Press})
@ARTICLE(paren,
  Title = "A {"}quoted{"} title",
  YEAR = 1999, title = {duplicate ignored},
  publisher = pub # ", " # {NY},
)
@proceedings{proc2001, title = {Proceedings of X}, year = {2001}, publisher = {IEEE}}
@inproceedings{child, title = {A paper}, crossref = {proc2001}}
@misc{k2,howpublished={\url{https://example.org/a_b}},date={2019-3-4T10:00:00}}
`
	items, errs := ReadBibTeX([]byte(src), "")
	noErrors(t, errs)
	var ids []string
	for _, it := range items {
		ids = append(ids, it.ID)
	}
	eq(t, "ids", ids, []string{"paren", "proc2001", "child", "k2"})
	p := items[0]
	eq(t, "title", p.Title, `A "quoted" title`)
	eq(t, "year", p.Year, 1999)
	eq(t, "publisher", p.Publisher, "ACM Press, NY")
	c := items[2]
	eq(t, "inherited venue", c.Venue, "Proceedings of X")
	eq(t, "inherited year", c.Year, 2001)
	eq(t, "inherited publisher", c.Publisher, "IEEE")
	eq(t, "url from howpublished", items[3].URL, "https://example.org/a_b")
	eq(t, "date with time", items[3].Date, "2019-03-04")
}

// Each kind of damage costs its entry only, with a message that says
// what to fix.
func TestBrokenEntries(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, entry, msg string }{
		{"missing comma between fields", "@article{bad,\n title = {A}\n year = {2000}\n}", "expected a comma or } after the value of title (line 4)"},
		{"missing equals", "@article{bad,\n title {A},\n}", "expected = after the field name title"},
		{"unclosed quote", "@article{bad,\n title = \"A,\n}", "has an unclosed quote"},
		{"missing value", "@article{bad,\n title = ,\n}", "the value of title is missing"},
		{"entry not closed", "@article{bad,\n title = {A},\n", "a } is missing before the next entry"},
		{"no comma after key", "@article{bad title = {A}}", "expected a comma after the citation key"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := "@book{before, title = {Before}}\n" + c.entry + "\n@book{after, title = {After}}\n"
			items, errs := ReadBibTeX([]byte(src), "")
			if len(errs) != 1 || !strings.Contains(errs[0].Error(), "BibTeX line 2 (bad): ") || !strings.Contains(errs[0].Error(), c.msg) {
				t.Errorf("problems = %v, want one at line 2 (bad) saying %q", errs, c.msg)
			}
			if len(items) != 2 || items[0].Title != "Before" || items[1].Title != "After" {
				t.Errorf("items = %+v, want before and after", items)
			}
		})
	}
}
