// Package mdinert makes a model's Markdown prose inert: it keeps headings,
// lists, emphasis, tables, code and [n] citations, and takes away what
// could load or hide anything when the text is rendered (images, links,
// raw HTML, autolinks, reference definitions).
//
// What is code is decided by a CommonMark parser (goldmark, with GitHub's
// extensions, as glamour and most viewers read it), not by line toggles:
// "```x```" is an inline code span, not a fence, and an indented "```"
// is code, not a fence either.
package mdinert

import (
	"sort"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// maxPasses bounds the re-parsing: escaping can change what is code
// (an escaped "<pre>" no longer swallows the fence line after it), so
// Prose parses again until nothing changes.
const maxPasses = 8

var parser = goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser()

// Prose is md with every image, link, raw HTML tag and autolink outside
// code escaped, so that it shows as the characters written. Code blocks
// and code spans are left as they are: nothing in them is read as
// Markdown. Text already escaped stays as it is: Prose(Prose(s)) ==
// Prose(s).
func Prose(md string) string {
	for range maxPasses {
		out := escapeOutside(md, codeRanges(md))
		if out == md {
			return out
		}
		md = out
	}
	// Escaping keeps turning code into prose: escape everywhere, code
	// included. It shows a few backslashes in code, and is safe.
	return escapeOutside(md, nil)
}

// span is a byte range [from, to) of the source.
type span struct{ from, to int }

// codeRanges are the byte ranges the parser reads as code: the content
// lines of fenced and indented code blocks, and code spans' text.
func codeRanges(md string) []span {
	src := []byte(md)
	doc := parser.Parse(text.NewReader(src))
	var out []span
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			lines := n.Lines()
			for i := 0; i < lines.Len(); i++ {
				seg := lines.At(i)
				out = append(out, span{seg.Start, seg.Stop})
			}
			if fc, ok := n.(*ast.FencedCodeBlock); ok && fc.Info != nil {
				// The info string ("```python") is not rendered as text.
				out = append(out, span{fc.Info.Segment.Start, fc.Info.Segment.Stop})
			}
			return ast.WalkSkipChildren, nil
		case *ast.CodeSpan:
			for c := n.FirstChild(); c != nil; c = c.NextSibling() {
				if t, ok := c.(*ast.Text); ok {
					out = append(out, span{t.Segment.Start, t.Segment.Stop})
				}
			}
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].from < out[j].from })
	return out
}

// escapeOutside escapes, outside the code ranges, "<" where raw HTML or an
// autolink would begin, "![", and "]" before "(" or ":", where a link's
// address or a reference definition would. A backslash escape is
// kept with the character it escapes.
func escapeOutside(md string, code []span) string {
	var b strings.Builder
	b.Grow(len(md) + len(md)/16)
	next := 0 // index into code
	for i := 0; i < len(md); i++ {
		for next < len(code) && code[next].to <= i {
			next++
		}
		if next < len(code) && code[next].from <= i {
			b.WriteString(md[i:code[next].to])
			i = code[next].to - 1
			continue
		}
		c := md[i]
		var after byte
		if i+1 < len(md) {
			after = md[i+1]
		}
		switch {
		case c == '\\' && after != 0 && after != '\n':
			b.WriteByte(c)
			b.WriteByte(after)
			i++
			continue
		case c == '<' && (isASCIILetter(after) || strings.IndexByte("/!?", after) >= 0):
			b.WriteString(`\<`)
			continue
		case c == '!' && after == '[':
			b.WriteString(`!\[`)
			i++
			continue
		case c == ']' && (after == '(' || after == ':'):
			b.WriteString(`\]`)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// viewer parses as a Markdown viewer does (CommonMark with tables and
// strikethrough). GitHub's bare-URL links are left out: they show their
// own address.
var viewer = goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough)).Parser()

// Active lists what a Markdown viewer would load, follow or run in md:
// images, links, autolinks, raw HTML and HTML blocks ("image
// http://host/p.png"). Prose leaves none.
func Active(md string) []string {
	src := []byte(md)
	var found []string
	_ = ast.Walk(viewer.Parse(text.NewReader(src)), func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Image:
			found = append(found, "image "+string(n.Destination))
		case *ast.Link:
			found = append(found, "link "+string(n.Destination))
		case *ast.AutoLink:
			found = append(found, "autolink "+string(n.URL(src)))
		case *ast.RawHTML:
			found = append(found, "raw HTML")
		case *ast.HTMLBlock:
			found = append(found, "HTML block")
		}
		return ast.WalkContinue, nil
	})
	return found
}
