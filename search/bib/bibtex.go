package bib

import (
	"fmt"
	"strings"
)

// ReadBibTeX reads a BibTeX or BibLaTeX file as Better BibTeX (Zotero),
// JabRef, Mendeley Desktop and people write them. An entry that cannot be
// read is one problem naming its line and citation key, and reading goes
// on at the next entry, so one bad brace does not cost the library.
// Relative attachment paths are resolved against dir (the file's folder;
// "" leaves them relative).
func ReadBibTeX(data []byte, dir string) ([]Item, []error) {
	items, errs := readBibTeXFiles([]File{{Data: data, dir: dir}})
	return items[0], errs[0]
}

// readBibTeXFiles reads BibTeX files given together, as BibTeX reads the
// files of one \bibliography: @string macros carry from a file to the
// next, and crossref and xdata resolve across all of them (a paper in
// krr.bib, its proceedings in procs.bib).
func readBibTeXFiles(files []File) ([][]Item, [][]error) {
	parsers := make([]*bibParser, len(files))
	macros := map[string]string{}
	for i, f := range files {
		if len(f.Data) > MaxInput {
			parsers[i] = &bibParser{}
			parsers[i].errs.add(tooLarge("BibTeX", len(f.Data)))
			continue
		}
		p := &bibParser{src: decodeInput(f.Data), macros: macros, line: 1}
		p.mendeley = strings.Contains(p.src[:min(len(p.src), 4096)], "Mendeley Desktop")
		p.parse()
		parsers[i] = p
	}
	resolveRefs(parsers)
	items, errs := make([][]Item, len(files)), make([][]error, len(files))
	for i, p := range parsers {
		out := make([]Item, 0, len(p.entries))
		var lines []int
		for j := range p.entries {
			e := &p.entries[j]
			if e.typ == "xdata" || e.typ == "set" {
				continue // a container of fields or of entries, not a work
			}
			if len(e.fields) == 0 {
				p.errs.add(&ParseError{Format: "BibTeX", Line: e.line, Key: CleanLine(e.key), Imported: true,
					Msg: "it has no fields: imported with its key as its title"})
			}
			it := p.item(e, files[i].dir)
			it.Clean()
			out = append(out, it)
			lines = append(lines, e.line)
		}
		out = settleIDs(out, lines, "BibTeX", "citation key", &p.errs)
		items[i], errs[i] = out, p.errs.result()
	}
	return items, errs
}

// bibEntry is an entry as written: lower-case type and field names, raw
// (LaTeX) values with macros expanded and # concatenation done.
type bibEntry struct {
	typ, key string
	line     int
	fields   map[string]string
}

type bibParser struct {
	src      string
	pos      int
	macros   map[string]string // @string definitions, lower-case names
	expanded int               // bytes macros have added so far
	entries  []bibEntry
	errs     problems
	mendeley bool              // the file says it is a Mendeley Desktop export
	groups   map[string]string // JabRef group name to its path ("Parent/Child")
	// members are the groups each citation key is filed in by the group
	// tree itself (JabRef 2 and 3's ExplicitGroup lists its keys),
	// lower-case keys
	members map[string][]string

	lineOff, line int // line counting, forward only
}

// lineAt is the 1-based line of offset off; offsets asked for only grow,
// so counting is linear in the file.
func (p *bibParser) lineAt(off int) int {
	if off < p.lineOff {
		p.lineOff, p.line = 0, 1
	}
	p.line += strings.Count(p.src[p.lineOff:off], "\n")
	p.lineOff = off
	return p.line
}

// parse reads the file: text outside entries is a comment, as in BibTeX.
func (p *bibParser) parse() {
	for p.pos < len(p.src) {
		i := strings.IndexByte(p.src[p.pos:], '@')
		if i < 0 {
			return
		}
		at := p.pos + i
		p.pos = at + 1
		typ := p.ident()
		p.skipSpace()
		if typ == "" || p.pos >= len(p.src) || p.src[p.pos] != '{' && p.src[p.pos] != '(' {
			continue // an @ in a comment, an e-mail address
		}
		switch strings.ToLower(typ) {
		case "comment":
			p.comment(at)
		case "preamble":
			line := p.lineAt(at)
			if _, ok := p.delimited(p.src[p.pos]); !ok {
				p.fail(at, line, "", "@preamble is not closed")
			}
		case "string":
			p.stringDef(at)
		default:
			if len(p.entries) == MaxItems {
				p.errs.add(tooMany("BibTeX", p.lineAt(at)))
				return
			}
			p.entry(at, typ)
		}
	}
}

// fail reports the entry whose @ is at offset at, on line line, and skips
// to the next entry.
func (p *bibParser) fail(at, line int, key, msg string) {
	p.errs.add(&ParseError{Format: "BibTeX", Line: line, Key: CleanLine(key), Msg: msg})
	p.recover(at)
}

// recover moves to the next line that starts an entry after offset after:
// exporters start every entry on its own line, so that is where reading
// can safely go on.
func (p *bibParser) recover(after int) {
	i := strings.LastIndexByte(p.src[:min(p.pos, len(p.src))], '\n') + 1
	for {
		if j, ok := entryAt(p.src, i); ok && j > after {
			p.pos = j
			return
		}
		k := strings.IndexByte(p.src[i:], '\n')
		if k < 0 {
			p.pos = len(p.src)
			return
		}
		i += k + 1
	}
}

// entryAt reports whether the line starting at i starts an entry
// ("@article{", "  @Book (") and where its @ is.
func entryAt(s string, i int) (int, bool) {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	if i >= len(s) || s[i] != '@' {
		return 0, false
	}
	j := i + 1
	for j < len(s) && isASCIILetter(s[j]) {
		j++
	}
	if j == i+1 {
		return 0, false
	}
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	return i, j < len(s) && (s[j] == '{' || s[j] == '(')
}

func (p *bibParser) entry(at int, typ string) {
	closer := byte('}')
	if p.src[p.pos] == '(' {
		closer = ')'
	}
	p.pos++
	p.skipSpace()
	keyStart := p.pos
	key := p.key(closer)
	keyless := false
	if j := skipSpaces(p.src, p.pos); j < len(p.src) && p.src[j] == '=' {
		// EndNote's `@article{` with no key: what was read is a field name
		p.pos, key, keyless = keyStart, "", true
	}
	e := bibEntry{typ: strings.ToLower(typ), key: key, line: p.lineAt(at)}
	fail := func(format string, args ...any) {
		if p.errs.full() {
			p.errs.dropped++
			p.recover(at)
			return
		}
		msg := fmt.Sprintf(format, args...)
		if l := p.lineAt(min(p.pos, len(p.src))); l != e.line {
			msg += fmt.Sprintf(" (line %d)", l)
		}
		p.fail(at, e.line, key, msg)
	}
	p.skipSpace()
	switch {
	case p.pos >= len(p.src):
		fail("the entry is not closed: a %c is missing at its end", closer)
		return
	case p.src[p.pos] == closer:
		p.pos++
		p.entries = append(p.entries, e)
		return
	case p.src[p.pos] != ',' && !keyless:
		fail("expected a comma after the citation key")
		return
	}
	for {
		p.skipSpaceAndComments()
		if p.pos >= len(p.src) {
			fail("the entry is not closed: a %c is missing at its end", closer)
			return
		}
		switch p.src[p.pos] {
		case closer:
			p.pos++
			p.entries = append(p.entries, e)
			return
		case ',':
			p.pos++
			continue
		case '@':
			fail("the entry is not closed: a %c is missing before the next entry", closer)
			return
		}
		name := p.ident()
		if name == "" {
			fail("expected a field name, found %q", p.src[p.pos])
			return
		}
		p.skipSpace()
		if p.pos >= len(p.src) || p.src[p.pos] != '=' {
			fail("expected = after the field name %s", name)
			return
		}
		p.pos++
		value, problem := p.value()
		if problem != "" {
			fail("the value of %s %s", name, problem)
			return
		}
		name = strings.ToLower(name)
		if e.fields == nil {
			e.fields = map[string]string{}
		}
		if _, dup := e.fields[name]; !dup && len(e.fields) < maxFields {
			e.fields[name] = value
		}
		p.skipSpaceAndComments()
		switch {
		case p.pos < len(p.src) && p.src[p.pos] == '@':
			// the value took the entry's own closing brace
			fail("the value of %s has unbalanced braces: it runs on to the next entry", name)
			return
		case p.pos >= len(p.src) || p.src[p.pos] != ',' && p.src[p.pos] != closer:
			fail("expected a comma or %c after the value of %s", closer, name)
			return
		}
	}
}

// key reads a citation key: everything up to the comma (keys hold colons,
// slashes, dots and, from Mendeley, nothing at all).
func (p *bibParser) key(closer byte) string {
	start := p.pos
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if c == ',' || c == closer || isSpace(c) || c == '{' || c == '}' || c == '@' {
			break
		}
		p.pos++
	}
	return Truncate(p.src[start:p.pos], maxLine)
}

// value reads a field value: pieces ({...}, "...", a number, a macro)
// joined with #. problem says what is wrong when it cannot be read.
func (p *bibParser) value() (value, problem string) {
	var b strings.Builder
	pieces := 0
	for {
		p.skipSpace()
		if p.pos >= len(p.src) {
			return "", "is missing"
		}
		var piece string
		switch c := p.src[p.pos]; {
		case c == '{' || c == '"':
			s, ok := p.delimited(c)
			switch {
			case !ok && c == '{':
				return "", "has unbalanced braces (a } is missing)"
			case !ok:
				return "", "has an unclosed quote"
			}
			piece = s
		case c >= '0' && c <= '9':
			start := p.pos
			for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
				p.pos++
			}
			piece = p.src[start:p.pos]
		case isIdentChar(c):
			name := p.ident()
			m, ok := p.macros[strings.ToLower(name)]
			if !ok {
				m, ok = monthMacros[strings.ToLower(name)]
			}
			if !ok {
				m = name // an undefined macro reads as its name, not as nothing
			}
			p.expanded += len(m)
			if p.expanded > maxExpansion {
				return "", "expands @string macros past the 64 MB limit"
			}
			piece = m
		default:
			return "", fmt.Sprintf("is missing (found %q)", c)
		}
		if pieces == 1 {
			b.WriteString(value)
		}
		if pieces > 0 {
			b.WriteString(piece)
		} else {
			value = piece
		}
		pieces++
		if len(value) > maxValue || b.Len() > maxValue {
			return "", "is longer than 1 MB"
		}
		p.skipSpace()
		if p.pos < len(p.src) && p.src[p.pos] == '#' {
			p.pos++
			continue
		}
		if pieces > 1 {
			value = b.String()
		}
		return value, ""
	}
}

// delimited reads a braced or quoted piece (p.pos at its opening
// character) and returns its text without the delimiters. \{ and \} do not
// count, as exporters escape literal braces that way. A line that starts
// a new entry ends a piece left open, so an unbalanced brace costs one
// entry, not the rest of the file.
func (p *bibParser) delimited(open byte) (string, bool) {
	closer := open
	switch open {
	case '{':
		closer = '}'
	case '(':
		closer = ')'
	}
	start, depth := p.pos+1, 0
	for i := start; i < len(p.src); i++ {
		switch c := p.src[i]; c {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			if depth == 0 && closer == '}' {
				p.pos = i + 1
				return p.src[start:i], true
			}
			depth--
			if depth < 0 {
				p.pos = i
				return "", false
			}
		case '"', ')':
			if c == closer && depth == 0 {
				p.pos = i + 1
				return p.src[start:i], true
			}
		case '\n':
			if _, ok := entryAt(p.src, i+1); ok {
				p.pos = i + 1
				return "", false
			}
		}
	}
	p.pos = len(p.src)
	return "", false
}

// stringDef reads @string{name = value}.
func (p *bibParser) stringDef(at int) {
	line := p.lineAt(at)
	closer := byte('}')
	if p.src[p.pos] == '(' {
		closer = ')'
	}
	p.pos++
	p.skipSpace()
	name := p.ident()
	p.skipSpace()
	if name == "" || p.pos >= len(p.src) || p.src[p.pos] != '=' {
		p.fail(at, line, "@string", "expected name = value")
		return
	}
	p.pos++
	value, problem := p.value()
	if problem != "" {
		p.fail(at, line, "@string "+name, "the value "+problem)
		return
	}
	p.skipSpace()
	if p.pos < len(p.src) && p.src[p.pos] == ',' {
		p.pos++
		p.skipSpace()
	}
	if p.pos >= len(p.src) || p.src[p.pos] != closer {
		p.fail(at, line, "@string "+name, fmt.Sprintf("expected %c after the value", closer))
		return
	}
	p.pos++
	if len(p.macros) < maxMacros {
		p.macros[strings.ToLower(name)] = value
	}
}

// skipSpaceAndComments skips spaces and, between fields, %-comments to
// the end of their line, which biber reads as comments.
func (p *bibParser) skipSpaceAndComments() {
	for {
		p.skipSpace()
		if p.pos >= len(p.src) || p.src[p.pos] != '%' {
			return
		}
		if i := strings.IndexByte(p.src[p.pos:], '\n'); i >= 0 {
			p.pos += i + 1
		} else {
			p.pos = len(p.src)
		}
	}
}

func (p *bibParser) skipSpace() {
	for p.pos < len(p.src) && isSpace(p.src[p.pos]) {
		p.pos++
	}
}

// ident reads an entry type, field name or macro name: BibTeX allows any
// printable character but "#%'(),={} (and @ here, to find the next entry).
func (p *bibParser) ident() string {
	start := p.pos
	for p.pos < len(p.src) && isIdentChar(p.src[p.pos]) {
		p.pos++
	}
	return p.src[start:p.pos]
}

func isIdentChar(c byte) bool {
	return c > ' ' && c != 0x7f && strings.IndexByte("\"#%'(),={}@\\", c) < 0
}

// monthMacros are BibTeX's predefined month macros.
var monthMacros = map[string]string{"jan": "January", "feb": "February", "mar": "March", "apr": "April", "may": "May",
	"jun": "June", "jul": "July", "aug": "August", "sep": "September", "oct": "October", "nov": "November", "dec": "December"}

func skipSpaces(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}
