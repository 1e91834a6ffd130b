package history

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/report"
)

// flowFixture is a review's flow whose reason names are hostile text.
func flowFixture() report.Flow {
	return report.Flow{
		Databases:  []report.RouteCount{{Route: "arxiv", Round: 1, Records: 30}, {Route: "openalex", Round: 2, Records: 6}},
		Other:      []report.RouteCount{{Route: "citation chasing", Round: 2, Records: 6}},
		Identified: 42, Duplicates: 20, Screened: 22, Excluded: 11,
		ExcludedWhy: []report.FlowReason{{Reason: `below the floor <script>alert(1)</script>`, Count: 11}},
		Sought:      11, Assessed: 11, AssessedAbstract: 11, Reports: 2,
		ReportsWhy: []report.FlowReason{{Reason: "analysed, not cited by the report", Count: 2}},
		Included:   9,
	}
}

// A review's HTML export draws its flow as an inline SVG in place of the
// text diagram, with every box's count, no script and nothing fetched;
// the header names the model, the sources searched and the counts.
func TestExportHTMLDrawsTheFlow(t *testing.T) {
	t.Parallel()
	f := flowFixture()
	if err := f.Check(); err != nil {
		t.Fatal(err)
	}
	rep := exportFixture()
	rep.Markdown = strings.Replace(rep.Markdown, "## Method", strings.TrimSpace(f.FlowSection("PRISMA 2020 flow", ""))+"\n\n## Method", 1)
	rep.Flow, rep.Model, rep.Searched = &f, "qwen3:8b", []string{"arxiv", "openalex"}
	rep.Funnel = pipeline.Funnel{Found: 22, Read: 11, Analysed: 11, Cited: 9}
	out, doc := exportHTMLDoc(t, rep)

	var svg, pre *html.Node
	var texts []string
	walk(doc, func(n *html.Node) {
		switch {
		case n.Type == html.ElementNode && n.Data == "svg":
			svg = n
		case n.Type == html.ElementNode && n.DataAtom == atom.Pre && strings.Contains(nodeText(n), "Records identified"):
			pre = n
		case n.Type == html.ElementNode && n.Data == "text" && n.Namespace == "svg":
			texts = append(texts, nodeText(n))
		}
	})
	if svg == nil || pre != nil {
		t.Fatalf("the flow is not drawn as SVG in place of the text diagram (svg %v, text diagram left %v)", svg != nil, pre != nil)
	}
	all := strings.Join(texts, "\n")
	for _, want := range []string{"Records identified (n = 42)", "Duplicates removed (n = 20)", "Records screened (n = 22)",
		"Reports sought (n = 11)", "Studies included (n = 9)", "citation chasing (round 2) (n = 6)", "<script>alert(1)</script>"} {
		if !strings.Contains(all, want) {
			t.Errorf("the drawing lacks %q:\n%s", want, all)
		}
	}
	if strings.Contains(out, "<script>alert(1)") || strings.Contains(out, "src=\"http") || strings.Contains(out, "<link") {
		t.Error("the page has a live script or an external resource")
	}
	for _, want := range []string{"Model: qwen3:8b · Sources searched: arxiv, openalex", "22 works found, 11 read, 11 analysed, 9 cited.",
		"<td>Studies included (cited)</td>", "@media print"} {
		if !strings.Contains(out, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// Without a stored flow (an older run) the text diagram stays.
	rep.Flow = nil
	out2, _ := exportHTMLDoc(t, rep)
	if strings.Contains(out2, "<svg") || !strings.Contains(out2, "Records identified (n = 42)") {
		t.Error("a report without a stored flow should keep its text diagram")
	}
}
