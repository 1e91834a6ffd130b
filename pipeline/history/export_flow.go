package history

import (
	"fmt"
	"html"
	"strings"

	"github.com/researchtui/researchtui/pipeline/report"
	nethtml "golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// The HTML export draws a review's PRISMA 2020 flow as an inline SVG in
// place of the report's text diagram: the same stages and boxes
// (report.Flow.Stages), in the page's colours (currentColor), with
// nothing fetched.

// SVG geometry, in pixels.
const (
	svgWidth    = 680
	svgBoxW     = 300
	svgAsideX   = 370
	svgLine     = 18
	svgPad      = 10
	svgGap      = 34 // between rows, room for the arrow down
	svgStageH   = 20 // a stage's label above its row
	svgWrapMain = 40 // characters per line in a box (13 px system-ui)
)

// flowSVG is the flow as an SVG element.
func flowSVG(f report.Flow) string {
	var body strings.Builder
	y := 0
	stages := f.Stages()
	for i, st := range stages {
		if st.Stage != "" {
			y += svgStageH
			fmt.Fprintf(&body, `<text class="stage" x="0" y="%d">%s</text>`, y-6, html.EscapeString(st.Stage))
		}
		mainLines, asideLines := svgLines(st.Main), svgLines(st.Aside)
		mainH := boxHeight(len(mainLines))
		h := mainH
		svgBox(&body, 0, y, svgBoxW, mainLines)
		if st.Aside != nil {
			asideH := boxHeight(len(asideLines))
			h = max(h, asideH)
			svgBox(&body, svgAsideX, y, svgWidth-svgAsideX-1, asideLines)
			ay := y + svgPad + svgLine/2 + 2
			fmt.Fprintf(&body, `<line class="arrow" x1="%d" y1="%d" x2="%d" y2="%d" marker-end="url(#prisma-head)"/>`, svgBoxW, ay, svgAsideX-4, ay)
		}
		if i < len(stages)-1 {
			next := y + h + svgGap
			if stages[i+1].Stage != "" {
				next += svgStageH
			}
			fmt.Fprintf(&body, `<line class="arrow" x1="%d" y1="%d" x2="%d" y2="%d" marker-end="url(#prisma-head)"/>`, svgBoxW/2, y+mainH, svgBoxW/2, next-4)
		}
		y += h + svgGap
	}
	height := y - svgGap + 2
	return fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" class="prisma-flow" role="img" aria-label="PRISMA 2020 flow diagram" viewBox="0 0 %d %d" width="%d" height="%d">`+
		`<defs><marker id="prisma-head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" fill="currentColor"/></marker></defs>`+
		`%s</svg>`, svgWidth, height, svgWidth, height, body.String())
}

// svgLines are a box's lines, wrapped; items are indented under the title.
func svgLines(lines []string) []string {
	var out []string
	for i, l := range lines {
		l = strings.ReplaceAll(l, "\u00a0", " ")
		indent := ""
		if i > 0 {
			indent = "\u2003"
		}
		for _, part := range wrapText(l, svgWrapMain-2*len(indent)) {
			out = append(out, indent+part)
		}
	}
	return out
}

func boxHeight(lines int) int { return 2*svgPad + lines*svgLine }

// svgBox draws a box with its lines, the first in bold.
func svgBox(b *strings.Builder, x, y, w int, lines []string) {
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" rx="4"/>`, x+1, y, w-1, boxHeight(len(lines)))
	for i, l := range lines {
		class := ""
		if i == 0 {
			class = ` class="title"`
		}
		fmt.Fprintf(b, `<text%s x="%d" y="%d">%s</text>`, class, x+svgPad, y+svgPad+(i+1)*svgLine-5, html.EscapeString(l))
	}
}

// wrapText wraps at spaces to lines of at most w characters.
func wrapText(s string, w int) []string {
	var out []string
	line := ""
	for _, word := range strings.Fields(s) {
		if line != "" && len([]rune(line))+1+len([]rune(word)) > w {
			out, line = append(out, line), word
			continue
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	return append(out, line)
}

// drawFlow replaces the report's text diagram (a fenced block of
// report.FlowFence) by the SVG drawing, captioned. Without a stored
// flow the text diagram stays.
func drawFlow(main *nethtml.Node, f *report.Flow) {
	if f == nil {
		return
	}
	var pre *nethtml.Node
	var find func(n *nethtml.Node)
	find = func(n *nethtml.Node) {
		for c := n.FirstChild; c != nil && pre == nil; c = c.NextSibling {
			if c.Type == nethtml.ElementNode && c.DataAtom == atom.Pre && c.FirstChild != nil &&
				c.FirstChild.DataAtom == atom.Code && hasClass(c.FirstChild, "language-"+report.FlowFence) {
				pre = c
				return
			}
			find(c)
		}
	}
	find(main)
	if pre == nil {
		return
	}
	ctx := &nethtml.Node{Type: nethtml.ElementNode, Data: "figure", DataAtom: atom.Figure}
	nodes, err := nethtml.ParseFragment(strings.NewReader(flowSVG(*f)), ctx)
	if err != nil {
		return
	}
	fig := element(atom.Figure, "class", "prisma")
	for _, n := range nodes {
		fig.AppendChild(n)
	}
	caption := element(atom.Figcaption)
	caption.AppendChild(textNode("PRISMA 2020 flow diagram: counted from the run's records of what it searched, screened, read and cited."))
	fig.AppendChild(caption)
	pre.Parent.InsertBefore(fig, pre)
	pre.Parent.RemoveChild(pre)
}

func hasClass(n *nethtml.Node, class string) bool {
	for _, a := range n.Attr {
		if a.Key == "class" {
			for _, c := range strings.Fields(a.Val) {
				if c == class {
					return true
				}
			}
		}
	}
	return false
}
