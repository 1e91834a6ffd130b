package search

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/ledongthuc/pdf"
)

// pdfTimeout bounds text extraction: the PDF library has no deadline of its
// own, and a hostile or broken file must not stall a run.
const pdfTimeout = 60 * time.Second

// ErrPDFTooSlow is returned when extraction exceeds pdfTimeout.
var ErrPDFTooSlow = errors.New("pdf: text extraction took too long")

// PDFPagesWithin is PDFPages with a deadline. On timeout the extraction is
// abandoned (its goroutine finishes in the background; the library cannot be
// interrupted) and the caller falls back to the abstract.
func PDFPagesWithin(data []byte, d time.Duration) ([]string, error) {
	type result struct {
		pages []string
		err   error
	}
	done := make(chan result, 1)
	go func() {
		p, err := PDFPages(data)
		done <- result{p, err}
	}()
	select {
	case r := <-done:
		return r.pages, r.err
	case <-time.After(d):
		return nil, fmt.Errorf("%w (over %s)", ErrPDFTooSlow, d)
	}
}

// PDFPages extracts the text of every page of a PDF. It rebuilds word spaces
// and line breaks from glyph positions (pdfTeX output has no space glyphs, so
// the library's GetPlainText glues words together), expands ligatures and
// recovers from the library's panics on malformed files. Page i of the result
// is page i+1 of the document; a page that fails is left empty.
func PDFPages(data []byte) (pages []string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("pdf: malformed document: %v", r)
		}
	}()
	rd, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("pdf: %w", err)
	}
	n := rd.NumPage()
	if n <= 0 {
		return nil, errors.New("pdf: no pages")
	}
	pages = make([]string, n)
	for i := 1; i <= n; i++ {
		pages[i-1] = pdfPageText(rd, i)
	}
	return pages, nil
}

func pdfPageText(rd *pdf.Reader, num int) (text string) {
	defer func() {
		if r := recover(); r != nil {
			text = ""
		}
	}()
	p := rd.Page(num)
	if p.V.IsNull() {
		return ""
	}
	glyphs := p.Content().Text
	fixTeXGlyphs(p, glyphs)
	return CleanText(ligatures.Replace(layoutGlyphs(glyphs)))
}

// fixTeXGlyphs repairs the OT1 encoding of TeX's Type 1 fonts (pdfTeX embeds
// them without /Encoding or /ToUnicode, so the library decodes them as
// PDFDocEncoding): the ligatures ff, fi, ffi, ffl (codes 11, 12, 14, 15 all
// decode to U+FFFD; they are told apart by their glyph widths), fl (code 13
// decodes as CR), the curly quotes (\ and ") and the dashes ({ and |).
func fixTeXGlyphs(p pdf.Page, glyphs []pdf.Text) {
	var fonts map[string]pdf.Font
	for i := range glyphs {
		g := &glyphs[i]
		if g.S != "\ufffd" && g.S != "\r" && g.S != "\\" && g.S != "\"" && g.S != "{" && g.S != "|" {
			continue
		}
		if !isTeXTextFont(g.Font) {
			continue
		}
		switch g.S {
		case "\r":
			g.S = "fl"
			continue
		case "\\":
			g.S = "\u201c"
			continue
		case "\"":
			g.S = "\u201d"
			continue
		case "{":
			g.S = "\u2013"
			continue
		case "|":
			g.S = "\u2014"
			continue
		}
		if fonts == nil {
			fonts = map[string]pdf.Font{}
			for _, name := range p.Fonts() {
				f := p.Font(name)
				base := f.BaseFont()
				if j := strings.Index(base, "+"); j >= 0 {
					base = base[j+1:]
				}
				fonts[base] = f
			}
		}
		f, ok := fonts[g.Font]
		if !ok || g.FontSize == 0 {
			continue
		}
		w := g.W / g.FontSize * 1000
		best, bestD := "", math.Inf(1)
		for _, c := range []struct {
			code int
			s    string
		}{{11, "ff"}, {12, "fi"}, {14, "ffi"}, {15, "ffl"}} {
			if d := math.Abs(f.Width(c.code) - w); d < bestD {
				best, bestD = c.s, d
			}
		}
		if bestD < 1 {
			g.S = best
		}
	}
}

// isTeXTextFont reports Computer Modern / EC text fonts that use OT1-like
// layouts (not the math, symbol or typewriter fonts).
func isTeXTextFont(name string) bool {
	for _, p := range []string{"CMR", "CMBX", "CMTI", "CMSL", "CMSS", "CMCSC", "CMB", "CMDUNH", "CMFIB", "CMU"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// layoutGlyphs joins glyphs in content-stream order (which is reading order
// for TeX and most producers), starting a new line when the baseline moves
// and inserting a space when the horizontal gap is wider than a fraction of
// the font size.
func layoutGlyphs(glyphs []pdf.Text) string {
	var b strings.Builder
	have := false
	var prev pdf.Text
	for _, g := range glyphs {
		if g.S == "" || g.S == "\n" {
			continue
		}
		if strings.TrimSpace(g.S) == "" {
			if have {
				b.WriteByte(' ')
			}
			continue
		}
		if have {
			fs := math.Max(math.Max(prev.FontSize, g.FontSize), 1)
			dy := math.Abs(g.Y - prev.Y)
			gap := g.X - (prev.X + prev.W)
			switch {
			case dy > 0.6*fs:
				b.WriteByte('\n')
			case dy > 0.15*fs:
				// superscript/subscript on the same line: no space
			case gap > 0.12*fs || gap < -2*fs:
				b.WriteByte(' ')
			}
		}
		b.WriteString(g.S)
		prev, have = g, true
	}
	return b.String()
}

var ligatures = strings.NewReplacer(
	"\ufb00", "ff", "\ufb01", "fi", "\ufb02", "fl", "\ufb03", "ffi", "\ufb04", "ffl", "\ufb05", "st", "\ufb06", "st",
)
