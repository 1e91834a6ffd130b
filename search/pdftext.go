package search

import (
	"errors"
	"strings"
	"time"
)

// pdfTimeout bounds text extraction of one document: a hostile or broken
// file must not stall a run. Ordinary papers take well under a second.
const pdfTimeout = 30 * time.Second

// ErrPDFTooSlow is returned when extraction exceeds its deadline.
var ErrPDFTooSlow = errors.New("pdf: text extraction took too long")

// PDFPagesWithin extracts the text of every page of a PDF with pdfium (see
// pdfium.go), giving up with ErrPDFTooSlow after d of work on the document.
// Page i of the result is page i+1 of the document; a page pdfium cannot
// read is left empty. The text is cleaned for reading (CleanPDFPages):
// Unicode NFC, words hyphenated across line ends joined, and running
// headers, footers and page numbers that repeat on most pages removed.
//
// A document that breaks or hangs the reader costs only that document: an
// error comes back and the reader is rebuilt for the next one. Safe for
// concurrent use; the first call starts the reader (compiling pdfium, or
// loading it from the compilation cache).
func PDFPagesWithin(data []byte, d time.Duration) ([]string, error) {
	raw, err := pdfReader().pages(data, d)
	if err != nil {
		return nil, err
	}
	return CleanPDFPages(raw), nil
}

// PDFPages is PDFPagesWithin with the default deadline.
func PDFPages(data []byte) ([]string, error) { return PDFPagesWithin(data, pdfTimeout) }

// firstLine keeps an error message to one line (wazero's traps carry a
// WebAssembly stack trace).
func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
