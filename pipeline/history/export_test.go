package history

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/search/bib"

	"golang.org/x/net/html"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/store"
)

// exportFixture is a verified report with a partly supported sentence, a
// retracted and a corrected source, a Markdown link, and hostile text in
// the body, a passage and a title.
func exportFixture() pipeline.Report {
	md := `# Perovskite <script>alert(1)</script> stability

Humidity degrades **methylammonium** perovskites within days [1]. Encapsulation slows the loss of efficiency [2, 3]. See [the review](https://example.org/review?a=1&b=2) for more.

- Thermal cycling cracks the films [3].
- A claim in ` + "`code [2]`" + ` stays as written.

Mixed cations help "somewhat" [2]. <img src=x onerror=alert(1)> [9]

## Method

Nothing cited here.

## References

[1] RETRACTED: Smith, J. (2020). Humidity and perovskites. *Energy*, 1, 1–2.

[2] Doe, A. (2021). "onmouseover=alert(1) x="<script>. *Solar*, 2, 3–4.

[3] Roe, B. (2022). Thermal cycling. *Films*, 3, 5–6.
`
	return pipeline.Report{
		SessionID: store.NewID(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)),
		Title:     `Perovskite "stability" <b>`,
		Question:  `Why do perovskites degrade? <script>x</script>`,
		Markdown:  md,
		Sources: []report.CitedSource{
			{N: 1, Title: "Humidity and perovskites", Quote: "q1", Retracted: true,
				Updates: []search.Update{{Type: "retraction", DOI: "10.1/retract"}}},
			{N: 2, Title: `"onmouseover=alert(1) x="<script>`, Quote: `quote 2 "onmouseover=alert(1)`,
				Updates: []search.Update{{Type: "correction", DOI: "10.2/fix"}}},
			{N: 3, Title: "Thermal cycling", Quote: "quote three"},
		},
		Support: []pipeline.CitationSupport{
			{Sentence: "Humidity degrades **methylammonium** perovskites within days.", N: []int{1}, Verdict: pipeline.VerdictSupported,
				Passage: `Films exposed to 80% humidity degraded in 3 days.`, Source: 1},
			{Sentence: "Encapsulation slows the loss of efficiency.", N: []int{2, 3}, Verdict: pipeline.VerdictPartly,
				Passage: `Encapsulated cells kept 80% "efficiency" <script>alert(2)</script> " onmouseover="alert(3)`, Source: 2},
			{Sentence: "Thermal cycling cracks the films.", N: []int{3}, Verdict: pipeline.VerdictSupported, Passage: "Cycling cracked the films.", Source: 3},
		},
		Metrics: pipeline.CitationMetrics{Verified: &pipeline.VerifyCounts{Cited: 4, Supported: 2, Partly: 1, Recited: 1, Uncited: 1}},
	}
}

func exportHTMLDoc(t *testing.T, rep pipeline.Report) (string, *html.Node) {
	t.Helper()
	out, err := ExportReport(rep, "html")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	return string(out), doc
}

func walk(n *html.Node, f func(*html.Node)) {
	f(n)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, f)
	}
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func TestExportHTMLCitationsLinkToReferences(t *testing.T) {
	t.Parallel()
	_, doc := exportHTMLDoc(t, exportFixture())
	ids := map[string]*html.Node{}
	var cites []*html.Node
	walk(doc, func(n *html.Node) {
		if n.Type != html.ElementNode {
			return
		}
		if id, ok := attr(n, "id"); ok {
			ids[id] = n
		}
		if href, _ := attr(n, "href"); strings.HasPrefix(href, "#") {
			cites = append(cites, n)
		}
	})
	for _, id := range []string{"ref-1", "ref-2", "ref-3"} {
		if ids[id] == nil {
			t.Errorf("no element with id %q", id)
		}
	}
	got := map[string]int{}
	for _, a := range cites {
		href, _ := attr(a, "href")
		if ids[href[1:]] == nil {
			t.Errorf("link %q resolves to no id", href)
		}
		if text := nodeText(a); "#ref-"+text != href {
			t.Errorf("link text %q goes to %q", text, href)
		}
		got[href]++
	}
	// [1], [2, 3] (two links), [3] in the list, [2] once more; [9] has no
	// reference and the [2] in code is not a citation.
	if got["#ref-1"] != 1 || got["#ref-2"] != 2 || got["#ref-3"] != 2 || len(got) != 3 {
		t.Errorf("citation links = %v", got)
	}
	for _, a := range cites {
		for p := a.Parent; p != nil; p = p.Parent {
			if p.Data == "code" {
				t.Error("a bracket in code was linked")
			}
		}
	}
}

func TestExportHTMLHoverPassages(t *testing.T) {
	t.Parallel()
	_, doc := exportHTMLDoc(t, exportFixture())
	titles := map[string][]string{} // href -> titles in order
	classes := map[string][]string{}
	walk(doc, func(n *html.Node) {
		if href, _ := attr(n, "href"); n.Type == html.ElementNode && strings.HasPrefix(href, "#ref-") {
			title, _ := attr(n, "title")
			class, _ := attr(n, "class")
			titles[href] = append(titles[href], title)
			classes[href] = append(classes[href], class)
		}
	})
	if got := titles["#ref-1"]; len(got) != 1 || got[0] != "Films exposed to 80% humidity degraded in 3 days." {
		t.Errorf("[1] title = %q", got)
	}
	// [2, 3]: the passage is from 2; 3 shows its own quote.
	if got := titles["#ref-2"]; len(got) != 2 || !strings.HasPrefix(got[0], "Encapsulated cells kept") || got[1] != `quote 2 "onmouseover=alert(1)` {
		t.Errorf("[2] titles = %q", got)
	}
	if got := titles["#ref-3"]; len(got) != 2 || got[0] != "quote three" || got[1] != "Cycling cracked the films." {
		t.Errorf("[3] titles = %q", got)
	}
	if got := classes["#ref-2"]; got[0] != "cite partly" || got[1] != "cite" {
		t.Errorf("[2] classes = %q (only the partly supported sentence's citation is marked)", got)
	}
	if got := classes["#ref-3"]; got[0] != "cite partly" || got[1] != "cite" {
		t.Errorf("[3] classes = %q", got)
	}
}

func TestExportHTMLStaysEscaped(t *testing.T) {
	t.Parallel()
	out, doc := exportHTMLDoc(t, exportFixture())
	walk(doc, func(n *html.Node) {
		if n.Type != html.ElementNode {
			return
		}
		switch n.Data {
		case "script", "img", "b":
			t.Errorf("model or source text became a <%s> element", n.Data)
		}
		for _, a := range n.Attr {
			if strings.HasPrefix(a.Key, "on") || a.Key == "x" || a.Key == "src" {
				t.Errorf("text broke out into attribute %s=%q on <%s>", a.Key, a.Val, n.Data)
			}
		}
	})
	for _, bad := range []string{"<script", "<img", `" onmouseover`, `"onmouseover`} {
		if strings.Contains(out, bad) {
			t.Errorf("output contains %q unescaped", bad)
		}
	}
}

// A link or image in the body (model text that may quote a hostile title)
// neither loads nor hides where it goes: the image becomes its alt text,
// the link its text with the address beside it; the references keep their
// visible web addresses as links, and the page forbids every fetch.
func TestExportHTMLMakesNoRequestAndHidesNoAddress(t *testing.T) {
	t.Parallel()
	rep := exportFixture()
	rep.Markdown = strings.Replace(rep.Markdown, "for more.", "for more. ![tracker](http://host.example/track.png) and [a disguised link](https://evil.example/x).", 1)
	rep.Markdown = strings.Replace(rep.Markdown, "*Films*, 3, 5–6.", "*Films*, 3, 5–6. https://doi.org/10.3/films", 1)
	out, doc := exportHTMLDoc(t, rep)
	var hrefs []string
	walk(doc, func(n *html.Node) {
		if n.Type != html.ElementNode {
			return
		}
		if n.Data == "img" {
			t.Errorf("an <img> reached the page: %v", n.Attr)
		}
		if href, ok := attr(n, "href"); ok && n.Data == "a" {
			hrefs = append(hrefs, href)
			if !strings.HasPrefix(href, "#") && nodeText(n) != href && !strings.HasPrefix(href, "https://doi.org/10.1/") && !strings.HasPrefix(href, "https://doi.org/10.2/") {
				t.Errorf("a link shows %q but goes to %q", nodeText(n), href)
			}
		}
	})
	for _, want := range []string{"the review (https://example.org/review?a=1&amp;b=2)", "a disguised link (https://evil.example/x)", "tracker and"} {
		if !strings.Contains(out, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if !strings.Contains(strings.Join(hrefs, " "), "https://doi.org/10.3/films") {
		t.Errorf("the reference's DOI is no longer a link: %q", hrefs)
	}
	if !strings.Contains(out, `http-equiv="Content-Security-Policy" content="default-src 'none'`) {
		t.Error("the page has no Content-Security-Policy forbidding fetches")
	}
}

func TestExportHTMLReferencesMarkNotices(t *testing.T) {
	t.Parallel()
	out, doc := exportHTMLDoc(t, exportFixture())
	refs := map[string]*html.Node{}
	walk(doc, func(n *html.Node) {
		if id, ok := attr(n, "id"); ok {
			refs[id] = n
		}
	})
	r1 := refs["ref-1"]
	if r1 == nil {
		t.Fatal("no ref-1")
	}
	var tag *html.Node
	walk(r1, func(n *html.Node) {
		if c, _ := attr(n, "class"); n.Data == "strong" && c == "retracted" {
			tag = n
		}
	})
	if tag == nil || nodeText(tag) != "Retracted" {
		t.Errorf("retracted work not marked: %q", nodeText(r1))
	}
	if text := nodeText(r1); !strings.HasPrefix(text, "[1] Retracted Smith") || !strings.Contains(text, "retraction notice: 10.1/retract") {
		t.Errorf("ref-1 = %q", text)
	}
	if !strings.Contains(out, `href="https://doi.org/10.1/retract"`) || !strings.Contains(out, `href="https://doi.org/10.2/fix"`) {
		t.Error("notice DOIs are not linked")
	}
	if text := nodeText(refs["ref-2"]); !strings.Contains(text, "corrected: 10.2/fix") || strings.Contains(text, "Retracted") {
		t.Errorf("ref-2 = %q", text)
	}
	if text := nodeText(refs["ref-3"]); strings.Contains(text, "corrected") || strings.Contains(text, "Retracted") {
		t.Errorf("ref-3 = %q", text)
	}
}

func TestExportHTMLHeaderAndLegend(t *testing.T) {
	t.Parallel()
	out, _ := exportHTMLDoc(t, exportFixture())
	for _, want := range []string{
		"Why do perovskites degrade? &lt;script&gt;x&lt;/script&gt;",
		`<time datetime="2026-03-04">4 March 2026</time>`,
		"4 cited sentences checked: 2 supported, 1 partly supported, 1 re-cited, 1 uncited.",
		"@media (prefers-color-scheme: dark)",
		`class="legend"`, "only partly supports",
		"<title>Perovskite &#34;stability&#34; &lt;b&gt;</title>",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// A report without verification, sources or a datable session.
	out2, _ := exportHTMLDoc(t, pipeline.Report{SessionID: "s4", Markdown: "# T\n\nPlain [1] text."})
	for _, absent := range []string{"<time", "cited sentences checked", `class="legend"`, `href="#ref`} {
		if strings.Contains(out2, absent) {
			t.Errorf("bare report page has %q", absent)
		}
	}
}

// A German report's page says it is German; the header and legend the
// code writes in English say so themselves (issue 36 #20).
func TestExportHTMLHasTheReportsLanguage(t *testing.T) {
	t.Parallel()
	rep := exportFixture()
	rep.Language = "de"
	out, _ := exportHTMLDoc(t, rep)
	for _, want := range []string{`<html lang="de">`, `<header class="report-meta" lang="en">`, `<footer class="legend" lang="en">`} {
		if !strings.Contains(out, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	rep.Language = `"><script>`
	if out, _ := exportHTMLDoc(t, rep); !strings.Contains(out, `<html lang="en">`) {
		t.Error("a tag that is not a language reached the page")
	}
}

// A preprint whose API named its venue "arXiv.org" is exported as a
// preprint, and no field is a brace (issue 46: journal = {{}arXiv.org}).
func TestArxivOrgVenueExportsAsAPreprint(t *testing.T) {
	t.Parallel()
	src := report.CitedSource{N: 1, Title: "Does GPT-4 pass the Turing test?", Authors: []string{"Cameron R. Jones"}, Year: 2023,
		Venue: "arXiv.org", ArxivID: "2310.20216", Source: "semanticscholar"}
	out := string(bib.WriteBibTeX(CitedItems([]report.CitedSource{src})))
	if strings.Contains(out, "{}") || strings.Contains(out, "journal") || !strings.Contains(out, "eprint = {2310.20216}") {
		t.Errorf("the BibTeX:\n%s", out)
	}
}
