package report

import (
	"strings"
	"testing"

	"github.com/researchtui/researchtui/textkit/mdinert"

	"github.com/researchtui/researchtui/search"
)

// A hostile title, venue, author or URL reaches the reference as text: no
// image, link or raw HTML in the Markdown, and the words still read.
func TestReferenceFromHostileMetadataStaysText(t *testing.T) {
	r := search.Record{
		Title:   `Survey ![x](http://host.example/track.png) [click](https://evil.example) <script>alert(1)</script>`,
		Authors: []string{"Ada <img src=x onerror=alert(1)> Lovelace"},
		Venue:   "Chaos *and* [Fractals](javascript:alert(1))",
		Year:    2024,
		URL:     "https://example.org/a b)(<x>",
	}
	ref := APA(r)
	md := goldmarkish(ref)
	for _, bad := range []string{"<script", "<img", "![", "]("} {
		if strings.Contains(md, bad) {
			t.Errorf("reference %q still has %q as syntax", ref, bad)
		}
	}
	plain := PlainReference(ref)
	for _, want := range []string{"Survey ![x](http://host.example/track.png)", "<script>alert(1)</script>", "Chaos *and* [Fractals](javascript:alert(1))", "https://example.org/a%20b%29%28%3Cx%3E"} {
		if !strings.Contains(plain, want) {
			t.Errorf("plain reference %q lacks %q", plain, want)
		}
	}
	r.URL = "javascript:alert(1)"
	if ref := APA(r); strings.HasSuffix(ref, "alert(1)") {
		t.Errorf("a javascript: address was printed: %q", ref)
	}
}

// The model's prose keeps its Markdown but loses raw HTML, images and
// links, and passing it through again changes nothing.
func TestProseLosesImagesLinksAndHTML(t *testing.T) {
	in := "# Title\n\nA claim [1]. See ![t](http://h/t.png) and [x](https://evil) <img src=x onerror=y> <https://auto>.\n\n[r]: https://evil\n\n```\n<keep> ![as](is)\n```\n"
	out := mdinert.Prose(in)
	prose, _, _ := strings.Cut(goldmarkish(out), "```")
	if strings.Contains(prose, "<img") || strings.Contains(prose, "<https") || strings.Contains(prose, "![") || strings.Contains(prose, "](") || strings.Contains(prose, "]:") {
		t.Errorf("prose kept syntax:\n%s", out)
	}
	if !strings.Contains(out, "A claim [1].") || !strings.Contains(out, "# Title") || !strings.Contains(out, "<keep> ![as](is)") {
		t.Errorf("prose lost its own Markdown or code:\n%s", out)
	}
	if again := mdinert.Prose(out); again != out {
		t.Errorf("a second pass changed the text:\n%s\n---\n%s", out, again)
	}
}

// goldmarkish drops escaped characters, leaving what a Markdown reader
// would still take as syntax.
func goldmarkish(md string) string {
	var b strings.Builder
	for i := 0; i < len(md); i++ {
		if md[i] == '\\' && i+1 < len(md) {
			i++
			b.WriteByte('_')
			continue
		}
		b.WriteByte(md[i])
	}
	return b.String()
}

// The PRISMA section opens in the report's language where it has been
// written in it, and in English otherwise (issue 36 #20).
func TestFlowIntroInTheReportsLanguage(t *testing.T) {
	var f Flow
	if got := f.FlowSection("PRISMA-2020-Flussdiagramm", "de-AT"); !strings.Contains(got, "Wie die Quellen dieser Übersicht") {
		t.Errorf("German section:\n%s", got)
	}
	if got := FlowIntro("xx-nope"); got != flowIntros[""] {
		t.Errorf("unknown language: %q", got)
	}
}

// The report's prose is inert as a CommonMark reader sees it (issue 48):
// a line "```x```" is an inline code span, not a fence, and an indented
// "```" is code; neither lets the image after it through.
func TestProseFencesAreTheParsersFences(t *testing.T) {
	for _, in := range []string{
		"A claim [1].\n```x```\n![p](http://host.example/p.png) <img src=http://host.example/i.png>",
		"A claim [1].\n\n    ```\n\n![p](http://host.example/p.png)\n\n<img src=x>",
	} {
		if got := mdinert.Active(mdinert.Prose(in)); len(got) > 0 {
			t.Errorf("inertProse(%q) still has %v", in, got)
		}
	}
}
