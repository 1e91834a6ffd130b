package history

import (
	"net/url"
	"strings"

	nethtml "golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// The exported page must make no request and hide no destination: the
// README promises that "no request leaves the page". Goldmark already
// escapes raw HTML, but Markdown's own images and links survive it, and
// the body is model text that may quote titles and abstracts from the
// open web ("![x](http://host/track.png)", "[the paper](https://evil)").
// So, before the code adds its own citation links, every image becomes
// its alternative text and every link becomes its text with the address
// written beside it, except the references' http(s) addresses, which are
// shown in full and so cannot be disguised. A Content-Security-Policy
// forbids every fetch besides, as a second wall.

// htmlCSP allows the inline style sheet and nothing else: no image,
// font, frame, script or connection, wherever a tag came from.
const htmlCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

// makeInert rewrites the rendered report under main in place; refs is the
// References heading (or nil), after which http(s) links whose text is
// their own address may stay.
func makeInert(main, refs *nethtml.Node) {
	inReferences := false
	for c := main.FirstChild; c != nil; c = c.NextSibling {
		if c == refs {
			inReferences = true
		}
		inertNode(c, inReferences)
	}
}

func inertNode(n *nethtml.Node, inReferences bool) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		inertNode(c, inReferences)
		c = next
	}
	if n.Type != nethtml.ElementNode || n.Parent == nil {
		return
	}
	switch n.DataAtom {
	case atom.Img:
		alt, _ := attrOf(n, "alt")
		replaceWith(n, textNode(alt))
	case atom.A:
		href, _ := attrOf(n, "href")
		if inReferences && plainWebLink(href, nodeText(n)) {
			n.Attr = []nethtml.Attribute{{Key: "href", Val: href}, {Key: "rel", Val: "noreferrer"}}
			return
		}
		label := nodeText(n)
		unwrap(n)
		if href != "" && href != label && !strings.HasPrefix(href, "#") {
			n.Parent.InsertBefore(textNode(" ("+href+")"), n)
		}
		n.Parent.RemoveChild(n)
	}
}

// plainWebLink is an http(s) address shown as itself (goldmark's autolink
// of a reference's URL or DOI), so the reader sees where it goes.
func plainWebLink(href, text string) bool {
	u, err := url.Parse(href)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false
	}
	return strings.TrimSpace(text) == href
}

// unwrap moves n's children before n (n itself stays for the caller to
// remove).
func unwrap(n *nethtml.Node) {
	for c := n.FirstChild; c != nil; c = n.FirstChild {
		n.RemoveChild(c)
		n.Parent.InsertBefore(c, n)
	}
}

func replaceWith(n, with *nethtml.Node) {
	n.Parent.InsertBefore(with, n)
	n.Parent.RemoveChild(n)
}

func attrOf(n *nethtml.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}
