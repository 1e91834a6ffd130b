package bib

import (
	"fmt"
	"strconv"
)

// Limits on one read. A library file is untrusted input: these keep a huge
// or hostile file (50 MB of macros that double, a million authors, braces
// nested a million deep) to bounded memory and time, and they sit far above
// what a real library holds (the largest Zotero libraries have some 50,000
// items; a physics paper some 3,000 authors).
const (
	// MaxInput is the largest file Read accepts: the cap the command line
	// reads a library file with (100,000 entries are some 100 MB of BibTeX).
	MaxInput = 256 << 20
	// MaxItems is the most items one read returns; the rest of the file is
	// reported as one problem and not read.
	MaxItems = 100_000

	maxProblems  = 100      // problems listed; the rest are counted in one
	maxValue     = 1 << 20  // bytes of one raw field value
	maxExpansion = 64 << 20 // bytes @string macros may add to a BibTeX file
	maxMacros    = 10_000   // @string definitions kept
	maxFields    = 1_000    // fields of one BibTeX entry
	maxNames     = 10_000   // authors (or editors) of one item
	maxList      = 1_000    // tags, collections or files of one item
	maxLine      = 4 << 10  // runes kept of a one-line field (title, venue)
	maxText      = 64 << 10 // runes kept of an abstract
	maxDepth     = 64       // brace groups and arguments the LaTeX decoder nests
)

// ParseError is one problem with one entry (BibTeX), record (RIS) or item
// (CSL-JSON): the rest of the file is still read, so the person is told
// which entry to fix rather than losing the library.
type ParseError struct {
	Format string // "BibTeX", "RIS" or "CSL-JSON"
	Line   int    // where the entry starts, 1-based; 0 when unknown
	Key    string // its citation key or ID, when it has one
	Msg    string
	// Imported: the entry was read, with part of it cut (names past the
	// cap) or a key given; the problem is a note, not a skipped entry.
	Imported bool
	// Count is how many entries the problem stands for when it is the
	// summary of those not listed (0 is one).
	Count int
	// Crossref is the key an entry's crossref names when no entry of the
	// files read has it: another file, given too, would resolve it.
	Crossref string
}

func (e *ParseError) Error() string {
	if e.Count > 0 || e.Format == "" { // about the file, not one entry
		return e.Msg
	}
	s := e.Format
	if e.Line > 0 {
		s += " line " + strconv.Itoa(e.Line)
	}
	if e.Key != "" {
		s += " (" + e.Key + ")"
	}
	return s + ": " + e.Msg
}

// problems collects errors up to maxProblems, so a file of a million broken
// entries gives a readable report and bounded memory.
type problems struct {
	list    []error
	dropped int // entries skipped past the cap
	notes   int // notes past the cap
}

func (p *problems) add(err error) {
	if len(p.list) < maxProblems {
		p.list = append(p.list, err)
		return
	}
	if pe, ok := err.(*ParseError); ok && pe.Imported {
		p.notes++
		return
	}
	p.dropped++
}

// full says a further problem would only be counted, so the caller can
// skip composing its message.
func (p *problems) full() bool { return len(p.list) >= maxProblems }

func (p *problems) result() []error {
	out := p.list
	if p.dropped > 0 {
		out = append(out, &ParseError{Msg: fmt.Sprintf("%d more entries that could not be read, not listed", p.dropped), Count: p.dropped})
	}
	if p.notes > 0 {
		out = append(out, &ParseError{Msg: fmt.Sprintf("%d more notes, not listed", p.notes), Count: p.notes, Imported: true})
	}
	return out
}

// tooLarge is the problem of a file over MaxInput, read not at all.
func tooLarge(format string, size int) error {
	return &ParseError{Format: format, Msg: fmt.Sprintf("the file has %d MB, more than the %d MB a library file may have", size>>20, MaxInput>>20)}
}

// tooMany is the problem of a file with more than MaxItems entries.
func tooMany(format string, line int) error {
	return &ParseError{Format: format, Line: line, Msg: fmt.Sprintf("more than %d entries: the rest of the file is not read", MaxItems)}
}
