package search

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	readability "codeberg.org/readeck/go-readability"
	"golang.org/x/net/html"

	"github.com/researchtui/researchtui/textkit"
)

// ErrBlockedAddress is returned (wrapped) when a download would connect to a
// loopback, private, link-local or unspecified address.
var ErrBlockedAddress = errors.New("refusing to connect to a private, loopback or link-local address")

// ErrNoText means a document was fetched but no text could be extracted
// (scanned PDF, empty page); the caller falls back to the abstract.
var ErrNoText = errors.New("no text could be extracted")

// ErrUnsupportedType means the document is neither PDF, HTML nor text.
var ErrUnsupportedType = errors.New("unsupported document type")

// FetchOptions configure a Fetcher. Zero values mean the defaults.
type FetchOptions struct {
	// AllowPrivate permits loopback/private/link-local targets (the caller
	// sets it from RESEARCHTUI_ALLOW_PRIVATE_FETCH=1).
	AllowPrivate bool
	MaxBytes     int64 // default 50 MB
	// Timeout is a ceiling on one download (default 10 min); downloads are
	// judged by their progress (Progress) well before it.
	Timeout      time.Duration
	Progress     ProgressRule // zero: DefaultProgress
	MaxRedirects int          // default 5
	// Transport, when set, replaces the guarded dialer: for tests and
	// benchmarks that simulate the hosts documents come from. The private
	// address guard then applies only to literal addresses.
	Transport http.RoundTripper
	// clock, when set, is the clock Progress is judged by: a test's, so
	// that the time between the bytes it sends does not depend on the
	// machine's load. Nil is the real clock.
	clock clock
}

// Document is a fetched document's text.
type Document struct {
	URL         string   // final URL after redirects
	ContentType string   // sniffed: application/pdf, text/html or text/plain
	Title       string   // HTML title (readability); empty for PDF and text
	Text        string   // cleaned text; for PDFs the pages joined by blank lines
	Pages       []string // PDF only: Pages[i] is page i+1
}

// Fetcher downloads documents (PDF, HTML, text) and extracts their text. It
// shares the Client's rate limits, retries and User-Agent, but dials through
// a guard that refuses private addresses at connect time, so redirects and
// DNS answers are checked too.
type Fetcher struct {
	c   *Client
	opt FetchOptions
	hc  *http.Client
}

// NewFetcher builds a Fetcher on c.
func NewFetcher(c *Client, opt FetchOptions) *Fetcher {
	if opt.MaxBytes <= 0 {
		opt.MaxBytes = 50 << 20
	}
	if opt.Timeout <= 0 {
		opt.Timeout = 10 * time.Minute
	}
	opt.Progress = opt.Progress.withDefaults()
	if opt.MaxRedirects <= 0 {
		opt.MaxRedirects = 5
	}
	dialer := &net.Dialer{Timeout: 15 * time.Second, KeepAlive: 30 * time.Second}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if !opt.AllowPrivate {
		dialer.Control = guardControl
		// A proxy would make the guard check the proxy's address instead of
		// the target's, so guarded fetches connect directly.
		tr.Proxy = nil
	}
	tr.DialContext = dialer.DialContext
	maxRedir := opt.MaxRedirects
	var rt http.RoundTripper = tr
	if opt.Transport != nil {
		rt = opt.Transport
	}
	hc := &http.Client{
		Transport: rt,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxRedir {
				return fmt.Errorf("stopped after %d redirects", maxRedir)
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return fmt.Errorf("redirect to unsupported scheme %q", req.URL.Scheme)
			}
			return nil
		},
	}
	return &Fetcher{c: c, opt: opt, hc: hc}
}

// guardControl runs after DNS resolution, on the address actually dialled.
func guardControl(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot parse %q", ErrBlockedAddress, address)
	}
	if blockedAddr(ap.Addr()) {
		return fmt.Errorf("%w: %s", ErrBlockedAddress, ap.Addr())
	}
	return nil
}

func blockedAddr(a netip.Addr) bool {
	a = a.Unmap()
	if a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsUnspecified() || a.IsMulticast() || a.IsInterfaceLocalMulticast() {
		return true
	}
	// carrier-grade NAT 100.64/10, "this network" 0/8, benchmarking 198.18/15
	for _, p := range []string{"100.64.0.0/10", "0.0.0.0/8", "198.18.0.0/15", "64:ff9b::/96"} {
		if netip.MustParsePrefix(p).Contains(a) {
			return true
		}
	}
	return false
}

// Fetch downloads url and extracts its text. The content type is sniffed
// from the bytes, not taken from the headers. Empty text gives ErrNoText.
func (f *Fetcher) Fetch(ctx context.Context, rawURL string) (Document, error) {
	return f.FetchGated(ctx, rawURL, nil)
}

// FetchGated is Fetch for a run that remembers unreachable hosts in gate:
// a host in it is not asked (an *UnreachableError), and one that can't be
// reached is added to it.
func (f *Fetcher) FetchGated(ctx context.Context, rawURL string, gate *HostSet) (Document, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Document{}, fmt.Errorf("fetch %q: not an http(s) URL", rawURL)
	}
	if !f.opt.AllowPrivate {
		// early, clearer refusal of literal addresses and localhost; the
		// dial-time guard covers names that resolve to private addresses
		if a, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil && blockedAddr(a) {
			return Document{}, fmt.Errorf("fetch %s: %w: %s", rawURL, ErrBlockedAddress, a)
		}
		if h := strings.ToLower(u.Hostname()); h == "localhost" || strings.HasSuffix(h, ".localhost") {
			return Document{}, fmt.Errorf("fetch %s: %w: %s", rawURL, ErrBlockedAddress, h)
		}
	}
	hdr := http.Header{"Accept": {"application/pdf, text/html;q=0.9, text/plain;q=0.8, */*;q=0.5"}}
	resp, err := f.c.get(ctx, u.String(), hdr, getOptions{
		hc: f.hc, maxBody: f.opt.MaxBytes, timeout: f.opt.Timeout, gate: gate, progress: &f.opt.Progress, clock: f.opt.clock,
		// A download that broke off, stalled or outgrew the cap is not
		// tried again: it would cost as much and most likely end the same.
		noRetry: func(err error) bool {
			var se *StalledError
			return errors.Is(err, ErrBlockedAddress) || errors.Is(err, ErrBodyTooLarge) || errors.Is(err, errMidBody) || errors.As(err, &se)
		},
	})
	if err != nil {
		return Document{}, fmt.Errorf("fetch: %w", err)
	}
	return ExtractDocument(resp.URL, resp.Body)
}

// ExtractDocument turns downloaded bytes into a Document, sniffing the type.
func ExtractDocument(pageURL string, body []byte) (Document, error) {
	doc := Document{URL: pageURL}
	ct := sniff(body)
	doc.ContentType = ct
	switch ct {
	case "application/pdf":
		pages, err := PDFPagesWithin(body, pdfTimeout)
		if err != nil {
			return doc, err
		}
		doc.Pages = pages
		doc.Text = strings.TrimSpace(strings.Join(pages, "\n\n"))
	case "text/html":
		pu, _ := url.Parse(pageURL)
		art, err := readability.FromReader(bytes.NewReader(body), pu)
		if err != nil {
			return doc, fmt.Errorf("html: %w", err)
		}
		doc.Title = textkit.CleanLine(art.Title)
		text := art.TextContent
		if art.Node != nil {
			var b strings.Builder
			renderText(&b, art.Node)
			text = b.String()
		}
		doc.Text = strings.TrimSpace(textkit.CleanText(text))
	case "text/plain":
		doc.Text = strings.TrimSpace(textkit.CleanText(string(body)))
	default:
		return doc, fmt.Errorf("%w: %s", ErrUnsupportedType, ct)
	}
	if strings.TrimSpace(doc.Text) == "" {
		return doc, ErrNoText
	}
	return doc, nil
}

func sniff(body []byte) string {
	head := body[:min(len(body), 1024)]
	if bytes.Contains(head, []byte("%PDF-")) {
		return "application/pdf"
	}
	ct := http.DetectContentType(body)
	mt, _, _ := strings.Cut(ct, ";")
	switch {
	case mt == "text/html":
		return "text/html"
	case mt == "text/plain":
		lower := bytes.ToLower(head)
		if bytes.Contains(lower, []byte("<html")) || bytes.Contains(lower, []byte("<body")) || bytes.Contains(lower, []byte("<article")) {
			return "text/html"
		}
		return "text/plain"
	case mt == "text/xml" || mt == "application/xml":
		if bytes.Contains(bytes.ToLower(head), []byte("<html")) {
			return "text/html"
		}
		return mt
	case mt == "application/octet-stream" && utf8.Valid(body):
		return "text/plain"
	}
	return mt
}

// renderText writes an HTML tree's text with a blank line after each block
// element, so paragraphs survive for the chunker.
func renderText(b *strings.Builder, n *html.Node) {
	switch n.Type {
	case html.TextNode:
		b.WriteString(n.Data)
		return
	case html.ElementNode:
		switch n.Data {
		case "script", "style", "noscript", "template", "svg":
			return
		case "br":
			b.WriteByte('\n')
			return
		}
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		renderText(b, c)
	}
	if n.Type == html.ElementNode {
		switch n.Data {
		case "p", "div", "section", "article", "h1", "h2", "h3", "h4", "h5", "h6", "li", "tr",
			"blockquote", "pre", "figcaption", "table", "ul", "ol", "dd", "dt", "header", "footer":
			b.WriteString("\n\n")
		case "td", "th":
			b.WriteByte(' ')
		}
	}
}
