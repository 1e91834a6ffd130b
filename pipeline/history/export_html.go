package history

import (
	"bytes"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	nethtml "golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/text/language"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/textkit"
)

// The HTML export is a page a reader can check: every citation links to
// its reference and shows, on hover, the passage that supports its
// sentence; the references say which works were retracted or corrected;
// a header gives the question and what the verifier checked.
//
// The report body is model text, so the page is built in two steps that
// keep it inert: goldmark renders the Markdown with raw HTML escaped (its
// default), and citations are then linked on the parsed tree, never by
// editing HTML as a string. Text only ever lands in text nodes and
// attribute values, which the renderer escapes, so nothing in a sentence,
// a passage or a title can open a tag or leave an attribute.

// htmlPassageRunes caps a hover passage: a tooltip is for a glance.
const htmlPassageRunes = 700

// citeNumber finds the numbers inside a citation group ("1, 3", "2–4").
var citeNumber = regexp.MustCompile(`\d+`)

// refLine is the "[n] " a References line starts with.
var refLine = regexp.MustCompile(`^\[(\d+)\]\s*`)

// exportHTML renders rep as a standalone page.
func exportHTML(rep pipeline.Report) ([]byte, error) {
	md := goldmark.New(goldmark.WithExtensions(extension.GFM))
	var body bytes.Buffer
	if err := md.Convert([]byte(rep.Markdown), &body); err != nil {
		return nil, err
	}
	nodes, err := nethtml.ParseFragment(&body, &nethtml.Node{Type: nethtml.ElementNode, Data: "body", DataAtom: atom.Body})
	if err != nil {
		return nil, err
	}
	main := &nethtml.Node{Type: nethtml.ElementNode, Data: "main", DataAtom: atom.Main}
	for _, n := range nodes {
		main.AppendChild(n)
	}
	refs := referencesHeading(main)
	makeInert(main, refs)
	drawFlow(main, rep.Flow)
	x := newHTMLExport(rep)
	x.markReferences(refs)
	for c := main.FirstChild; c != nil && c != refs; c = c.NextSibling {
		x.linkBlocks(c)
	}

	var b bytes.Buffer
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"%s\"><head><meta charset=\"utf-8\"><title>%s</title>\n"+
		"<meta http-equiv=\"Content-Security-Policy\" content=\"%s\">\n"+
		"<meta name=\"generator\" content=\"researchtui\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"+
		"<style>%s</style>\n</head><body>\n", pageLanguage(rep.Language), html.EscapeString(textkit.FirstNonEmpty(rep.Title, rep.Question, "Report")), htmlCSP, htmlStyle)
	b.WriteString(htmlHeader(rep))
	if err := nethtml.Render(&b, main); err != nil {
		return nil, err
	}
	b.WriteString("\n")
	b.WriteString(x.legend())
	b.WriteString("</body></html>\n")
	return b.Bytes(), nil
}

// pageLanguage is the html element's lang: the report's language tag when
// it is one (readers, hyphenation and fonts follow it), else English.
func pageLanguage(tag string) string {
	t, err := language.Parse(tag)
	if tag == "" || err != nil {
		return "en"
	}
	return t.String()
}

// htmlStyle is the page's style sheet. Partly supported citations are
// told apart by a dotted underline only: a hint, not an alarm.
const htmlStyle = `:root{color-scheme:light dark}
body{max-width:46rem;margin:2rem auto;padding:0 1rem;font:16px/1.6 system-ui,sans-serif;color:#222;background:#fff}
h1,h2{line-height:1.25}
a{color:#0550ae}
blockquote{color:#555;border-left:3px solid #ccc;margin-left:0;padding-left:1rem}
a.cite{text-decoration:none}
a.cite:hover{text-decoration:underline}
a.cite.partly{text-decoration:underline dotted;text-underline-offset:3px}
.report-meta{color:#555;font-size:.9rem;border-bottom:1px solid #ddd;margin-bottom:1.5rem}
.report-meta p{margin:.25rem 0}
p.ref:target{background:#fff3c4}
.retracted{color:#b00020;text-transform:uppercase;font-size:.8em;letter-spacing:.04em}
.corrected{color:#7a5d00;font-size:.9em}
.legend{color:#666;font-size:.85rem;border-top:1px solid #ddd;margin-top:2rem}
figure.prisma{margin:1.5rem 0;overflow-x:auto}
figure.prisma figcaption{color:#555;font-size:.85rem}
svg.prisma-flow{max-width:100%;height:auto;font:13px system-ui,sans-serif}
svg.prisma-flow rect{fill:none;stroke:currentColor;stroke-width:1}
svg.prisma-flow text{fill:currentColor}
svg.prisma-flow text.title{font-weight:600}
svg.prisma-flow text.stage{font-weight:600;font-size:12px;letter-spacing:.06em;text-transform:uppercase;fill:#777}
svg.prisma-flow line.arrow{stroke:currentColor;stroke-width:1.2}
table{border-collapse:collapse;margin:1rem 0}
th,td{border:1px solid #ccc;padding:.2rem .5rem;text-align:left}
td:last-child{text-align:right}
@media print{
body{max-width:none;margin:0;color:#000;background:#fff}
a{color:#000}
a.cite{text-decoration:none}
figure.prisma,table,pre,blockquote{break-inside:avoid}
h1,h2,h3{break-after:avoid}
.legend{display:none}
}
@media (prefers-color-scheme: dark){
body{color:#ddd;background:#161616}
a{color:#7ab7ff}
blockquote,.report-meta,.legend,figure.prisma figcaption{color:#aaa;border-color:#444}
th,td{border-color:#444}
p.ref:target{background:#3a3320}
.retracted{color:#ff7b7b}
.corrected{color:#e0c060}
}`

// htmlHeader is the page's header: the question, the date the session
// began (its ID carries it) and the verifier's figures. Parts the report
// does not record are left out.
func htmlHeader(rep pipeline.Report) string {
	var b strings.Builder
	b.WriteString("<header class=\"report-meta\" lang=\"en\">\n") // its labels are English whatever the report's language
	if rep.Question != "" {
		fmt.Fprintf(&b, "<p class=\"question\"><strong>Question:</strong> %s</p>\n", html.EscapeString(rep.Question))
	}
	if t, ok := store.IDTime(rep.SessionID); ok {
		t = t.UTC()
		fmt.Fprintf(&b, "<p class=\"date\"><time datetime=\"%s\">%s</time></p>\n", t.Format("2006-01-02"), t.Format("2 January 2006"))
	}
	if rep.Model != "" || len(rep.Searched) > 0 {
		var parts []string
		if rep.Model != "" {
			parts = append(parts, "Model: "+rep.Model)
		}
		if len(rep.Searched) > 0 {
			parts = append(parts, "Sources searched: "+strings.Join(rep.Searched, ", "))
		}
		fmt.Fprintf(&b, "<p class=\"run\">%s</p>\n", html.EscapeString(strings.Join(parts, " · ")))
	}
	if f := rep.Funnel; f.Found > 0 {
		fmt.Fprintf(&b, "<p class=\"counts\">%d works found, %d read, %d analysed, %d cited.</p>\n", f.Found, f.Read, f.Analysed, f.Cited)
	}
	if v := rep.Metrics.Verified; v != nil {
		fmt.Fprintf(&b, "<p class=\"verified\">%s</p>\n", html.EscapeString(verifiedLine(*v)))
	}
	for i := len(rep.Updates) - 1; i >= 0; i-- { // the newest first, as the sections are
		u := rep.Updates[i]
		fmt.Fprintf(&b, "<p class=\"updated\">Updated <time datetime=\"%s\">%s</time>: %s (version %d).</p>\n",
			u.At.UTC().Format("2006-01-02"), u.At.UTC().Format("2 January 2006"), textkit.Plural(u.New, "new work", "new works"), u.Version)
	}
	b.WriteString("</header>\n")
	return b.String()
}

// verifiedLine sums up the verification in one sentence; partly supported
// and dropped sentences are named only when there are any.
func verifiedLine(v pipeline.VerifyCounts) string {
	s := fmt.Sprintf("%d cited sentences checked: %d supported", v.Cited, v.Supported)
	if v.Partly > 0 {
		s += fmt.Sprintf(", %d partly supported", v.Partly)
	}
	s += fmt.Sprintf(", %d re-cited, %d uncited", v.Recited, v.Uncited)
	if v.Dropped > 0 {
		s += fmt.Sprintf(", %d dropped", v.Dropped)
	}
	return s + "."
}

// htmlExport carries what linking the citations needs.
type htmlExport struct {
	sources map[int]report.CitedSource
	refs    map[int]bool // reference numbers that have an id on the page
	support []pipeline.CitationSupport
	words   []map[string]bool // content words of each support sentence
	cursor  int               // support entries are in report order
	partly  bool              // a partly supported citation was marked
	linked  bool              // a citation was linked
}

func newHTMLExport(rep pipeline.Report) *htmlExport {
	x := &htmlExport{sources: map[int]report.CitedSource{}, refs: map[int]bool{}, support: rep.Support}
	for _, s := range rep.Sources {
		x.sources[s.N] = s
	}
	for _, s := range rep.Support {
		x.words = append(x.words, textkit.WordSet(s.Sentence))
	}
	return x
}

// referencesHeading is the last "References" heading at the top level of
// the page (the code-generated one comes last), or nil.
func referencesHeading(main *nethtml.Node) *nethtml.Node {
	var h *nethtml.Node
	for c := main.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == nethtml.ElementNode && (c.DataAtom == atom.H2 || c.DataAtom == atom.H1) &&
			isReferences(nodeText(c)) {
			h = c
		}
	}
	return h
}

// isReferences: a heading text is a References heading (in any of the
// report languages).
func isReferences(h string) bool {
	for _, r := range report.ReferencesHeadings() {
		if strings.EqualFold(strings.TrimSpace(h), r) {
			return true
		}
	}
	return false
}

// markReferences gives each "[n] …" line after the heading id="ref-n",
// and marks retracted and corrected works.
func (x *htmlExport) markReferences(h *nethtml.Node) {
	if h == nil {
		return
	}
	for c := h.NextSibling; c != nil; c = c.NextSibling {
		if c.Type != nethtml.ElementNode {
			continue
		}
		if isHeading(c.DataAtom) {
			break
		}
		if c.DataAtom != atom.P || c.FirstChild == nil || c.FirstChild.Type != nethtml.TextNode {
			continue
		}
		first := c.FirstChild
		m := refLine.FindStringSubmatch(first.Data)
		if m == nil {
			continue
		}
		n, err := strconv.Atoi(m[1])
		if err != nil || x.refs[n] {
			continue
		}
		x.refs[n] = true
		c.Attr = append(c.Attr, nethtml.Attribute{Key: "id", Val: fmt.Sprintf("ref-%d", n)}, nethtml.Attribute{Key: "class", Val: "ref"})
		src, ok := x.sources[n]
		if !ok {
			continue
		}
		if src.Retracted {
			rest := strings.TrimPrefix(first.Data[len(m[0]):], "RETRACTED: ")
			first.Data = m[0]
			tag := element(atom.Strong, "class", "retracted")
			tag.AppendChild(textNode("Retracted"))
			c.InsertBefore(tag, first.NextSibling)
			c.InsertBefore(textNode(" "+rest), tag.NextSibling)
			x.appendNotices(c, "retraction notice", search.Update.IsRetraction, src.Updates)
		}
		x.appendNotices(c, "corrected", search.Update.IsCorrection, src.Updates)
	}
}

// appendNotices adds to a reference line a note for the notices of one
// kind, each linked to its DOI. Notices the work is itself (Notice) are
// not about it.
func (x *htmlExport) appendNotices(p *nethtml.Node, label string, kind func(search.Update) bool, ups []search.Update) {
	var notes []search.Update
	for _, u := range ups {
		if !u.Notice && kind(u) {
			notes = append(notes, u)
		}
	}
	if len(notes) == 0 {
		return
	}
	span := element(atom.Span, "class", strings.Fields(label)[0])
	span.AppendChild(textNode(label))
	sep := ": "
	for _, u := range notes {
		if u.DOI == "" {
			continue
		}
		span.AppendChild(textNode(sep))
		sep = ", "
		a := element(atom.A, "href", (&url.URL{Scheme: "https", Host: "doi.org", Path: "/" + u.DOI}).String())
		a.AppendChild(textNode(u.DOI))
		span.AppendChild(a)
	}
	p.AppendChild(textNode(" "))
	p.AppendChild(span)
}

// blockTags hold a run of prose whose sentences citations belong to.
var blockTags = map[atom.Atom]bool{
	atom.P: true, atom.Li: true, atom.Td: true, atom.Th: true, atom.Dt: true, atom.Dd: true,
	atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true, atom.H6: true,
	atom.Figcaption: true, atom.Caption: true,
}

// boundaryTags end a block's own text: their text is another block's.
var boundaryTags = map[atom.Atom]bool{
	atom.Ul: true, atom.Ol: true, atom.Table: true, atom.Blockquote: true, atom.Pre: true, atom.Div: true, atom.Dl: true,
}

// noLinkTags hold text whose brackets are not citations: a link's text
// (a Markdown link stays as written), code.
var noLinkTags = map[atom.Atom]bool{atom.A: true, atom.Code: true, atom.Pre: true, atom.Script: true, atom.Style: true}

func isHeading(a atom.Atom) bool {
	switch a {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		return true
	}
	return false
}

// linkBlocks links the citations of every block under n, in page order.
func (x *htmlExport) linkBlocks(n *nethtml.Node) {
	if n.Type != nethtml.ElementNode || noLinkTags[n.DataAtom] {
		return
	}
	if blockTags[n.DataAtom] {
		x.linkBlock(n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		x.linkBlocks(c)
	}
}

// textSeg is one text node of a block, at its offset in the block's text.
type textSeg struct {
	node     *nethtml.Node
	start    int
	linkable bool
}

// linkBlock links the citations in a block's own text. The block's text
// as a whole is cut into sentences (as the verifier cut the Markdown), so
// a citation after emphasis or a link still finds its sentence.
func (x *htmlExport) linkBlock(block *nethtml.Node) {
	var segs []textSeg
	var sb strings.Builder
	var collect func(n *nethtml.Node, linkable bool)
	collect = func(n *nethtml.Node, linkable bool) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			switch c.Type {
			case nethtml.TextNode:
				segs = append(segs, textSeg{c, sb.Len(), linkable})
				sb.WriteString(c.Data)
			case nethtml.ElementNode:
				if blockTags[c.DataAtom] || boundaryTags[c.DataAtom] {
					continue
				}
				collect(c, linkable && !noLinkTags[c.DataAtom])
			}
		}
	}
	collect(block, true)
	text := strings.NewReplacer("\n", " ", "\r", " ").Replace(sb.String())
	sentences := report.LineSentences(text)
	matched := map[int]*pipeline.CitationSupport{}
	supportAt := func(off int, nums []int) *pipeline.CitationSupport {
		for i, s := range sentences {
			if off >= s[0] && off < s[1] {
				if sup, ok := matched[i]; ok {
					return sup
				}
				sup := x.match(report.StripCitations(text[s[0]:s[1]]), nums)
				matched[i] = sup
				return sup
			}
		}
		return nil
	}
	for _, sg := range segs {
		if !sg.linkable {
			continue
		}
		x.linkText(sg, supportAt)
	}
}

// linkText replaces a text node by the same text with each citation
// number a link.
func (x *htmlExport) linkText(sg textSeg, supportAt func(int, []int) *pipeline.CitationSupport) {
	data := sg.node.Data
	var out []*nethtml.Node
	last := 0
	for _, m := range report.CiteGroups(data) {
		if m[1] < len(data) && data[m[1]] == '(' {
			continue // "[1](…)" that goldmark left as text: not a citation
		}
		inner := data[m[2]:m[3]]
		nums := report.ParseCiteGroup(inner)
		sup := supportAt(sg.start+m[0], nums)
		out = append(out, textNode(data[last:m[2]]))
		pos := 0
		for _, nm := range citeNumber.FindAllStringIndex(inner, -1) {
			n, _ := strconv.Atoi(inner[nm[0]:nm[1]])
			if !x.refs[n] {
				continue
			}
			out = append(out, textNode(inner[pos:nm[0]]), x.citeLink(n, inner[nm[0]:nm[1]], sup))
			pos = nm[1]
		}
		out = append(out, textNode(inner[pos:]))
		last = m[3]
	}
	if len(out) == 0 {
		return
	}
	out = append(out, textNode(data[last:]))
	parent := sg.node.Parent
	for _, n := range out {
		if n.Type == nethtml.TextNode && n.Data == "" {
			continue
		}
		parent.InsertBefore(n, sg.node)
	}
	parent.RemoveChild(sg.node)
}

// citeLink is one citation number linked to its reference, titled with
// the passage that supports the sentence it stands in.
func (x *htmlExport) citeLink(n int, label string, sup *pipeline.CitationSupport) *nethtml.Node {
	x.linked = true
	class := "cite"
	if sup != nil && sup.Verdict == pipeline.VerdictPartly {
		class += " partly"
		x.partly = true
	}
	a := element(atom.A, "href", fmt.Sprintf("#ref-%d", n), "class", class)
	if t := x.passageFor(n, sup); t != "" {
		a.Attr = append(a.Attr, nethtml.Attribute{Key: "title", Val: textkit.Clip(strings.Join(strings.Fields(t), " "), htmlPassageRunes)})
	}
	a.AppendChild(textNode(label))
	return a
}

// passageFor is what a citation shows on hover: the sentence's supporting
// passage when it comes from this source (or its source is not recorded);
// otherwise the source's own quote, which says what [n] contributes.
func (x *htmlExport) passageFor(n int, sup *pipeline.CitationSupport) string {
	if sup != nil && sup.Passage != "" && (sup.Source == n || sup.Source == 0) {
		return sup.Passage
	}
	if q := x.sources[n].Quote; q != "" {
		return q
	}
	if sup != nil {
		return sup.Passage
	}
	return ""
}

// match finds the support entry of a sentence: the next one in report
// order whose words are the sentence's and that cites one of its numbers,
// else any entry whose words are clearly the sentence's. Words, not
// strings, are compared: the entry holds the Markdown sentence, the page
// its rendering.
func (x *htmlExport) match(sentence string, nums []int) *pipeline.CitationSupport {
	w := textkit.WordSet(sentence)
	if len(w) == 0 || len(x.support) == 0 {
		return nil
	}
	k := len(x.support)
	for j := 0; j < k; j++ {
		i := (x.cursor + j) % k
		if dice(w, x.words[i]) >= 0.6 && sharesNumber(x.support[i].N, nums) {
			x.cursor = i + 1
			return &x.support[i]
		}
	}
	for i := range x.support {
		if dice(w, x.words[i]) >= 0.8 {
			return &x.support[i]
		}
	}
	return nil
}

// legend closes the page with how to read its citations.
func (x *htmlExport) legend() string {
	if !x.linked {
		return ""
	}
	s := "<footer class=\"legend\" lang=\"en\">\n<p>Each citation links to its reference; hover over it to see the passage that supports its sentence.</p>\n"
	if x.partly {
		s += "<p>A citation <a class=\"cite partly\">underlined with dots</a> is to a source that only partly supports its sentence.</p>\n"
	}
	return s + "</footer>\n"
}

// dice is the Dice coefficient of two word sets.
func dice(a, b map[string]bool) float64 {
	if len(a)+len(b) == 0 {
		return 0
	}
	both := 0
	for w := range a {
		if b[w] {
			both++
		}
	}
	return 2 * float64(both) / float64(len(a)+len(b))
}

func sharesNumber(a, b []int) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}

func nodeText(n *nethtml.Node) string {
	if n.Type == nethtml.TextNode {
		return n.Data
	}
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		b.WriteString(nodeText(c))
	}
	return b.String()
}

func textNode(s string) *nethtml.Node { return &nethtml.Node{Type: nethtml.TextNode, Data: s} }

// element makes an element with attributes given as key, value pairs.
func element(a atom.Atom, kv ...string) *nethtml.Node {
	n := &nethtml.Node{Type: nethtml.ElementNode, Data: a.String(), DataAtom: a}
	for i := 0; i+1 < len(kv); i += 2 {
		n.Attr = append(n.Attr, nethtml.Attribute{Key: kv[i], Val: kv[i+1]})
	}
	return n
}
