package report

import (
	"strings"
	"testing"

	"github.com/researchtui/researchtui/search"
)

func TestCheckCitationsRenumbersByFirstUseAndDropsUnknown(t *testing.T) {
	md := "Claim A [3]. Claim B [1, 3]. Range [2-3]. Bogus [9]. Mixed [1; 9]. A [link](https://x.org) and [2](https://y.org) stay."
	got := CheckCitations(md, 3)
	want := "Claim A [1]. Claim B [1, 2]. Range [1, 3]. Bogus. Mixed [2]. A [link](https://x.org) and [2](https://y.org) stay."
	if got.Text != want {
		t.Errorf("got  %q\nwant %q", got.Text, want)
	}
	if got.Removed != 2 {
		t.Errorf("removed %d, want 2", got.Removed)
	}
	if len(got.Order) != 3 || got.Order[0] != 3 || got.Order[1] != 1 || got.Order[2] != 2 {
		t.Errorf("order %v, want [3 1 2]", got.Order)
	}
	if got.Markers != 6 {
		t.Errorf("markers %d, want 6", got.Markers)
	}
}

func TestStripReferencesKeepsLaterSections(t *testing.T) {
	md := "# T\n\nText [1].\n\n## References\n\n1. Made up (2020).\n\n## Appendix\n\nKept.\n"
	got := StripReferences(md)
	if strings.Contains(got, "Made up") || !strings.Contains(got, "## Appendix\n\nKept.") || !strings.Contains(got, "Text [1].") {
		t.Errorf("got %q", got)
	}
	if got := StripReferences("# T\n\nNo refs.\n"); got != "# T\n\nNo refs.\n" {
		t.Errorf("changed a report without references: %q", got)
	}
}

// A library's names say which words are the family name, and an
// organisation is kept whole.
func TestAPAFiledNames(t *testing.T) {
	r := search.Record{Title: "Cien años", Year: 1967, Authors: []string{"Gabriel García Márquez", "CERN Collaboration", "Plato"},
		AuthorsFiled: []string{"García Márquez, Gabriel", "CERN Collaboration", "Plato,"}}
	want := "García Márquez, G., CERN Collaboration, & Plato. (1967). Cien años." // APA ends the author element with a period
	if got := APA(r); got != want {
		t.Errorf("APA = %q, want %q", got, want)
	}
}

func TestAPA(t *testing.T) {
	r := search.Record{
		Title:   "Theoretical description of anisotropic superconductors",
		Authors: []string{"Adrian Del Maestro", "Jean-Luc Picard", "Smith, John Ronald"},
		Year:    2012, Venue: "Physical Review B", DOI: "10.1103/physrevb.85.115117",
	}
	want := "Del Maestro, A., Picard, J.-L., & Smith, J. R. (2012). Theoretical description of anisotropic superconductors. *Physical Review B*. https://doi.org/10.1103/physrevb.85.115117"
	if got := APA(r); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// Without authors, APA 7 puts the title first (issue 46: "(2022).
	// Communicating Ecology.").
	if got := APA(search.Record{Title: "Why?", ArxivID: "1111.2011"}); got != "*Why?* (arXiv:1111.2011). (n.d.). arXiv. https://arxiv.org/abs/1111.2011" {
		t.Errorf("no authors, no year: %q", got)
	}
	// A preprint is cited as APA 7 cites one, whatever host name the API
	// gave arXiv (issue 36 #17: "arXiv (Cornell University)").
	pre := search.Record{Title: "Toolformer", Authors: []string{"Timo Schick"}, Year: 2023, Venue: "arXiv", ArxivID: "2302.04761", DOI: "10.48550/arxiv.2302.04761"}
	if got := APA(pre); got != "Schick, T. (2023). *Toolformer* (arXiv:2302.04761). arXiv. https://doi.org/10.48550/arxiv.2302.04761" {
		t.Errorf("preprint: %q", got)
	}
	// An arXiv record that carries its published version's DOI (a trial's
	// "(arXiv:2202.12139). arXiv. https://doi.org/10.1109/icstw…") is
	// cited as the preprint that was read, linked to arXiv.
	pub := search.Record{Title: "Testing Deep Learning Models", Authors: []string{"Mohit Kumar Ahuja"}, Year: 2022, ArxivID: "2202.12139", DOI: "10.1109/icstw55395.2022.00035"}
	if got := APA(pub); got != "Ahuja, M. K. (2022). *Testing Deep Learning Models* (arXiv:2202.12139). arXiv. https://arxiv.org/abs/2202.12139" {
		t.Errorf("preprint with a publisher's DOI: %q", got)
	}
	many := make([]string, 25)
	for i := range many {
		many[i] = "A Author" + string(rune('a'+i))
	}
	if got := apaAuthors(many, nil); !strings.Contains(got, ". . . Authory, A.") || strings.Count(got, "A.") != 20 {
		t.Errorf("25 authors: %q", got)
	}
}

func TestCitationAfterAbbreviationStaysWithItsSentence(t *testing.T) {
	got := CitedSentences("Systems in driving, surgery, etc. [1]\nAnother claim [2].")
	if len(got) != 2 || !strings.Contains(got[0].Text, "surgery") || got[0].Nums[0] != 1 {
		t.Errorf("got %+v", got)
	}
}

// A work from the person's library is cited with what the library knows:
// a book with its publisher, a chapter in its book with pages, an article
// with volume, issue and pages.
func TestAPAFromLibraryMetadata(t *testing.T) {
	for _, c := range []struct {
		r    search.Record
		want string
	}{
		{search.Record{Title: "The Structure of Scientific Revolutions", Year: 1962, AuthorsFiled: []string{"Kuhn, Thomas S."}, Authors: []string{"Thomas S. Kuhn"},
			Publication: search.Publication{ItemType: "book", Publisher: "University of Chicago Press"}},
			"Kuhn, T. S. (1962). *The Structure of Scientific Revolutions*. University of Chicago Press."},
		// Issue 45: suffixes, edited books, group authors, years BCE.
		{search.Record{Title: "Suffixed", Year: 2001, AuthorsFiled: []string{"Doe, Jeffrey, Jr.", "Jolly, James, III"}, Authors: []string{"Jeffrey Doe Jr.", "James Jolly III"}},
			"Doe, J., Jr., & Jolly, J., III. (2001). Suffixed."},
		{search.Record{Title: "Handbook of Things", Year: 2018, AuthorsFiled: []string{"Travis, C. B.", "White, J. W."}, Authors: []string{"C. B. Travis", "J. W. White"},
			Publication: search.Publication{ItemType: "book", Publisher: "APA", Editors: []string{"Travis, C. B.", "White, J. W."}}},
			"Travis, C. B., & White, J. W. (Eds.). (2018). *Handbook of Things*. APA."},
		{search.Record{Title: "World health statistics", Year: 2020, AuthorsFiled: []string{"World Health Organization"}, Authors: []string{"World Health Organization"},
			Publication: search.Publication{ItemType: "report", Publisher: "WHO"}},
			"World Health Organization. (2020). *World health statistics*. WHO."},
		{search.Record{Title: "Commentarii", Year: -49, AuthorsFiled: []string{"Caesar, Gaius Julius"}, Authors: []string{"Gaius Julius Caesar"}, Publication: search.Publication{ItemType: "book"}},
			"Caesar, G. J. (49 B.C.E.). *Commentarii*."},
		{search.Record{Title: "Edited chapter", Year: 2003, Venue: "Big Book", Publication: search.Publication{ItemType: "chapter", Editors: []string{"Doe, Jeffrey, Jr."}}},
			"Edited chapter. (2003). In J. Doe Jr. (Ed.), *Big Book*."},
		{search.Record{Title: "What is life?", Year: 1944, Publication: search.Publication{ItemType: "book", Publisher: "Cambridge University Press"}},
			"*What is life?* (1944). Cambridge University Press."},
		{search.Record{Title: "Deep residual learning", Year: 2016, Venue: "Proceedings of CVPR", DOI: "10.1109/cvpr.2016.90",
			Publication: search.Publication{ItemType: "paper-conference", Pages: "770–778", Publisher: "IEEE"}},
			"Deep residual learning. (2016). In *Proceedings of CVPR* (pp. 770–778). IEEE. https://doi.org/10.1109/cvpr.2016.90"},
		{search.Record{Title: "Testing theories", Year: 1990, AuthorsFiled: []string{"Beizer, Boris"}, Authors: []string{"Boris Beizer"}, Venue: "Handbook of Software Engineering",
			Publication: search.Publication{ItemType: "chapter", Pages: "101–130", Publisher: "Van Nostrand", Editors: []string{"Marciniak, John J.", "IEEE Computer Society"}}},
			"Beizer, B. (1990). Testing theories. In J. J. Marciniak & IEEE Computer Society (Eds.), *Handbook of Software Engineering* (pp. 101–130). Van Nostrand."},
		{search.Record{Title: "One editor", Year: 2001, Venue: "Book",
			Publication: search.Publication{ItemType: "chapter", Editors: []string{"van der Waals, Johannes Diderik"}}},
			"One editor. (2001). In J. D. van der Waals (Ed.), *Book*."},
		{search.Record{Title: "Spin liquids", Year: 2012, Venue: "Physical Review B", DOI: "10.1103/physrevb.85.115117",
			Publication: search.Publication{ItemType: "article-journal", Volume: "85", Issue: "11", Pages: "115117"}},
			"Spin liquids. (2012). *Physical Review B*, *85*(11), 115117. https://doi.org/10.1103/physrevb.85.115117"},
		// A DOI shows as it is written: "_" and parentheses are no
		// Markdown in running text (issue 46: "neco%5Fa%5F01563").
		{search.Record{Title: "Spikes", Authors: []string{"Ann Lee"}, Year: 2023, Venue: "Neural Computation", DOI: "10.1162/neco_a_01563"},
			"Lee, A. (2023). Spikes. *Neural Computation*. https://doi.org/10.1162/neco_a_01563"},
		{search.Record{Title: "Kinetics", Authors: []string{"Ann Lee"}, Year: 1981, DOI: "10.1016/0022-2836(81)90087-5"},
			"Lee, A. (1981). Kinetics. https://doi.org/10.1016/0022-2836(81)90087-5"},
		{search.Record{Title: "Hostile", Authors: []string{"Ann Lee"}, Year: 2024, DOI: "10.1/x_*y*<img>_[a](b)"},
			"Lee, A. (2024). Hostile. https://doi.org/10.1/x%5F%2Ay%2A%3Cimg%3E%5F%5Ba%5D(b)"},
	} {
		if got := APA(c.r); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
}
