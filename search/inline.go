package search

import (
	"encoding/xml"
	"html"
	"io"
	"regexp"
	"strings"

	"github.com/researchtui/researchtui/textkit"
)

// xnode is a minimal XML tree for mixed content (HTML inline markup,
// MathML, JATS) inside API fields.
type xnode struct {
	name     string // local name; "" for text
	text     string
	children []*xnode
}

// parseFragment parses an XML fragment (text with inline elements) leniently:
// unknown HTML entities are decoded, unbalanced tags are tolerated, and what
// cannot be parsed ends the tree where it failed.
func parseFragment(s string) (*xnode, bool) {
	root := &xnode{name: "#root"}
	d := xml.NewDecoder(strings.NewReader("<x>" + s + "</x>"))
	d.Strict = false
	d.AutoClose = xml.HTMLAutoClose
	d.Entity = xml.HTMLEntity
	stack := []*xnode{root}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return root, false
		}
		top := stack[len(stack)-1]
		switch t := tok.(type) {
		case xml.StartElement:
			n := &xnode{name: strings.ToLower(t.Name.Local)}
			top.children = append(top.children, n)
			stack = append(stack, n)
		case xml.EndElement:
			if len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
		case xml.CharData:
			top.children = append(top.children, &xnode{text: string(t)})
		}
	}
	if len(root.children) == 1 && root.children[0].name == "x" {
		return root.children[0], true
	}
	return root, true
}

// InlineText turns an API field with inline markup into one clean line of
// text: HTML inline tags (<i>, <b>, <sub>, <sup>), JATS (<jats:p>,
// <jats:italic>, ...) and MathML are reduced to readable text; a JATS or
// HTML "Abstract" heading at the start is dropped. Superscripts become
// Unicode superscripts where every character has one (km·h⁻¹), else ^(...).
func InlineText(s string) string {
	if !strings.Contains(s, "<") && !strings.Contains(s, "&") {
		return textkit.CleanLine(s)
	}
	s = textkit.StripControls(s)
	root, ok := parseFragment(s)
	if !ok {
		// not well-formed even for the lenient parser: drop tags crudely
		return textkit.CleanLine(html.UnescapeString(tagRe.ReplaceAllString(s, " ")))
	}
	var b strings.Builder
	renderInline(&b, root, true)
	return textkit.CleanLine(b.String())
}

var tagRe = regexp.MustCompile(`<[^>]*>`)

func renderInline(b *strings.Builder, n *xnode, top bool) {
	for i, c := range n.children {
		if c.name == "" {
			b.WriteString(c.text)
			continue
		}
		switch c.name {
		case "math":
			b.WriteString(" " + strings.TrimSpace(mathText(c)) + " ")
		case "sup":
			b.WriteString(superscript(flatText(c)))
		case "sub":
			b.WriteString(subscript(flatText(c)))
		case "title":
			// JATS <jats:title>Abstract</jats:title> and section titles
			t := strings.TrimSpace(flatText(c))
			if top && i == 0 && strings.EqualFold(strings.TrimSuffix(t, ":"), "abstract") {
				continue
			}
			b.WriteString(" " + t + ". ")
		case "script", "style":
		case "p", "sec", "div", "br", "li", "list-item":
			b.WriteByte(' ')
			renderInline(b, c, false)
			b.WriteByte(' ')
		default:
			renderInline(b, c, false)
		}
	}
}

func flatText(n *xnode) string {
	if n.name == "" {
		return n.text
	}
	if n.name == "math" {
		return mathText(n)
	}
	var b strings.Builder
	for _, c := range n.children {
		b.WriteString(flatText(c))
	}
	return b.String()
}

// mathText renders a MathML subtree as linear text: V̇O2max, x², a/b.
func mathText(n *xnode) string {
	if n.name == "" {
		if strings.TrimSpace(n.text) == "" {
			return ""
		}
		return strings.TrimSpace(n.text)
	}
	var kids []*xnode
	for _, c := range n.children {
		if c.name != "" || strings.TrimSpace(c.text) != "" {
			kids = append(kids, c)
		}
	}
	arg := func(i int) string {
		if i < len(kids) {
			return mathText(kids[i])
		}
		return ""
	}
	switch n.name {
	case "mtext", "ms":
		t := flatText(n)
		if strings.TrimSpace(t) == "" && t != "" {
			return " "
		}
		return t
	case "msub":
		return arg(0) + subscript(arg(1))
	case "msup":
		return arg(0) + superscript(arg(1))
	case "msubsup":
		return arg(0) + subscript(arg(1)) + superscript(arg(2))
	case "mover", "munderover":
		over := arg(len(kids) - 1)
		switch over {
		case ".", "˙", "\u0307":
			return arg(0) + "\u0307"
		case "¯", "‾", "_", "\u0304":
			return arg(0) + "\u0304"
		case "^", "ˆ":
			return arg(0) + "\u0302"
		case "~", "˜":
			return arg(0) + "\u0303"
		}
		return arg(0) + over
	case "mfrac":
		return arg(0) + "/" + arg(1)
	case "msqrt":
		var b strings.Builder
		for _, k := range kids {
			b.WriteString(mathText(k))
		}
		return "√(" + b.String() + ")"
	case "annotation", "annotation-xml":
		return ""
	case "semantics":
		return arg(0)
	}
	var b strings.Builder
	for _, k := range kids {
		b.WriteString(mathText(k))
	}
	return b.String()
}

var supMap = map[rune]rune{'0': '⁰', '1': '¹', '2': '²', '3': '³', '4': '⁴', '5': '⁵', '6': '⁶', '7': '⁷', '8': '⁸', '9': '⁹',
	'-': '⁻', '−': '⁻', '+': '⁺', '=': '⁼', '(': '⁽', ')': '⁾', 'n': 'ⁿ', 'i': 'ⁱ'}
var subMap = map[rune]rune{'0': '₀', '1': '₁', '2': '₂', '3': '₃', '4': '₄', '5': '₅', '6': '₆', '7': '₇', '8': '₈', '9': '₉',
	'-': '₋', '−': '₋', '+': '₊', '=': '₌', '(': '₍', ')': '₎'}

func superscript(s string) string {
	s = strings.TrimSpace(s)
	if m, ok := mapAll(s, supMap); ok {
		return m
	}
	if s == "" {
		return ""
	}
	if len([]rune(s)) == 1 {
		return "^" + s
	}
	return "^(" + s + ")"
}

// subscript maps digit-only subscripts (O₂); others stay plain (LEmin).
func subscript(s string) string {
	s = strings.TrimSpace(s)
	if m, ok := mapAll(s, subMap); ok {
		return m
	}
	return s
}

func mapAll(s string, m map[rune]rune) (string, bool) {
	if s == "" {
		return "", false
	}
	var b strings.Builder
	for _, r := range s {
		x, ok := m[r]
		if !ok {
			return "", false
		}
		b.WriteRune(x)
	}
	return b.String(), true
}
