package bib

import (
	"strings"
	"unicode/utf8"
)

// BibTeX values are LaTeX: a title reads {The} {DNA} of {\"o}l, a name
// Sch{\"o}rmann, an abstract 17$\alpha$. The decoder below turns that into the
// text a person reads (The DNA of öl, Schörmann, 17α): accents in all their
// spellings become precomposed letters, formatting commands leave their
// text, protective braces go, math keeps its letters. It is not TeX: an
// unknown command's braced argument is read as text, and an unknown command
// without one ({\MP}, a macro of the author's) reads as its name, so no
// word of a title silently disappears.

// decodeTeX decodes a text field (title, name, venue, abstract): dashes,
// quotes and ~ are typeset as LaTeX would.
func decodeTeX(s string) string {
	if !strings.ContainsAny(s, "\\{}$~-`'^_") {
		return s
	}
	d := texDecoder{src: s}
	var b strings.Builder
	b.Grow(len(s))
	d.run(&b, false)
	return b.String()
}

// MathText is a line of plain text (an abstract or a title from a search
// API) with its LaTeX math as the Unicode a person reads: "$\mathcal{O}(n^{2})$
// time" is "O(n²) time", "$\tilde{O}(\sqrt{nk})$" is "Õ(√(nk))". Only
// $…$, $$…$$ and \(…\) spans are touched; a span plain text cannot show
// whole is kept as code (`$x^{ab}$`), never half decoded. "$5 and $10" is
// money, not math: a span must not start or end with a space.
func MathText(s string) string {
	if !strings.ContainsAny(s, "$\\") {
		return s
	}
	var b strings.Builder
	for {
		start, end, inner := mathSpan(s)
		if start < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:start])
		d := texDecoder{src: inner, math: true}
		var m strings.Builder
		d.run(&m, false)
		out := strings.TrimSpace(m.String())
		if d.lossy || strings.ContainsAny(out, "\\{}^_$") || out == "" {
			b.WriteString("`" + strings.ReplaceAll(s[start:end], "`", "'") + "`")
		} else {
			b.WriteString(out)
		}
		s = s[end:]
	}
}

// mathSpan finds the first math span in s: where it starts and ends, and
// what is inside its delimiters; start -1 when there is none.
func mathSpan(s string) (start, end int, inner string) {
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == '(':
			if j := strings.Index(s[i+2:], `\)`); j >= 0 {
				return i, i + 2 + j + 2, s[i+2 : i+2+j]
			}
		case s[i] == '\\':
			i++ // \$ is a dollar sign
		case s[i] == '$':
			open := 1
			if i+1 < len(s) && s[i+1] == '$' {
				open = 2
			}
			close := strings.Index(s[i+open:], strings.Repeat("$", open))
			if close <= 0 {
				return -1, 0, ""
			}
			inner := s[i+open : i+open+close]
			if inner[0] == ' ' || inner[len(inner)-1] == ' ' || len(inner) > 400 {
				i += open + close + open - 1 // money, or not math a person wrote
				continue
			}
			return i, i + open + close + open, inner
		}
	}
	return -1, 0, ""
}

// decodeTeXPath decodes a file path as Mendeley writes it, LaTeX-escaped
// (C$\backslash$:/Users/M{\"{u}}ller/x{\_}1.pdf): accents and escapes are
// decoded but -- ~ and spaces are the path's own, and \: \; stay escaped for
// the file-field splitter.
func decodeTeXPath(s string) string {
	d := texDecoder{src: s, path: true}
	var b strings.Builder
	b.Grow(len(s))
	d.run(&b, false)
	return b.String()
}

// decodeVerbatim undoes the escaping exporters add to URLs, DOIs and
// identifiers ({\_}, \%, $\backslash$, \~{}, \textbraceleft{}) without
// reading them as LaTeX, so http://a.org/~x_y survives.
func decodeVerbatim(s string) string {
	if !strings.ContainsAny(s, "\\{}$") {
		return s
	}
	s = strings.ReplaceAll(s, "$\\backslash$", "\x00")
	s = strings.ReplaceAll(s, "\\textasciitilde", "~")
	s = strings.ReplaceAll(s, "\\textunderscore", "_")
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '{', '}':
		case 0:
			b.WriteByte('\\')
		case '\\':
			switch rest := s[i+1:]; {
			case strings.HasPrefix(rest, "textbraceleft"):
				b.WriteByte('{')
				i += len("textbraceleft")
				continue
			case strings.HasPrefix(rest, "textbraceright"):
				b.WriteByte('}')
				i += len("textbraceright")
				continue
			}
			if i+1 < len(s) && strings.IndexByte("_%&#$~{}^ ", s[i+1]) >= 0 {
				i++
				b.WriteByte(s[i])
				continue
			}
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

type texDecoder struct {
	src   string
	pos   int
	path  bool // a Mendeley file path: no typesetting
	math  bool // between $ signs
	depth int  // groups and arguments being decoded, at most maxDepth
	skip  int  // groups opened beyond maxDepth, closed without recursion
	// lossy: math was read that plain text cannot show (a superscript
	// Unicode has no character for, a command it does not know)
	lossy bool
}

func isTeXSpecial(c byte) bool {
	return strings.IndexByte("{}\\$~^_-`'", c) >= 0
}

// run decodes until the end of the text or, in a group, its closing brace.
func (d *texDecoder) run(b *strings.Builder, group bool) {
	for d.pos < len(d.src) {
		c := d.src[d.pos]
		switch c {
		case '}':
			d.pos++
			if d.skip > 0 {
				d.skip--
				continue
			}
			if group {
				return
			}
		case '{':
			d.pos++
			if d.depth >= maxDepth {
				d.skip++
				continue
			}
			d.depth++
			d.run(b, true)
			d.depth--
		case '\\':
			d.command(b)
		case '$':
			d.pos++
			d.math = !d.math
		case '~':
			d.pos++
			if d.path {
				b.WriteByte('~')
			} else {
				b.WriteByte(' ') // a non-breaking space reads as a space
			}
		case '^', '_':
			d.pos++
			if !d.math {
				b.WriteByte(c)
				continue
			}
			arg := d.arg()
			out := script(arg, c == '^')
			if out == arg && arg != "" && !strings.ContainsAny(arg, "′″*°") {
				d.lossy = true // x^{ab} is not xab
			}
			b.WriteString(out)
		case '-':
			n := 1
			for n < 3 && d.pos+n < len(d.src) && d.src[d.pos+n] == '-' {
				n++
			}
			d.pos += n
			switch {
			case d.path || d.math || n == 1:
				b.WriteString(strings.Repeat("-", n))
			case n == 2:
				b.WriteString("–")
			default:
				b.WriteString("—")
			}
		case '`', '\'':
			double := d.pos+1 < len(d.src) && d.src[d.pos+1] == c
			switch {
			case d.path:
				b.WriteByte(c)
				d.pos++
			case double && c == '`':
				b.WriteString("“")
				d.pos += 2
			case double:
				b.WriteString("”")
				d.pos += 2
			case c == '`':
				b.WriteString("‘")
				d.pos++
			default:
				b.WriteByte(c)
				d.pos++
			}
		default:
			j := d.pos + 1
			for j < len(d.src) && !isTeXSpecial(d.src[j]) {
				j++
			}
			b.WriteString(d.src[d.pos:j])
			d.pos = j
		}
	}
}

// command decodes the control sequence whose backslash is at d.pos.
func (d *texDecoder) command(b *strings.Builder) {
	d.pos++
	if d.pos >= len(d.src) {
		return
	}
	c := d.src[d.pos]
	if isASCIILetter(c) {
		j := d.pos
		for j < len(d.src) && isASCIILetter(d.src[j]) {
			j++
		}
		name := d.src[d.pos:j]
		d.pos = j
		if d.pos < len(d.src) && d.src[d.pos] == '*' {
			d.pos++
		}
		if !d.math {
			d.skipSpaces() // TeX eats the spaces after a control word
		}
		d.word(b, name)
		return
	}
	_, size := utf8.DecodeRuneInString(d.src[d.pos:])
	sym := d.src[d.pos : d.pos+size]
	d.pos += size
	if mark, ok := symbolAccents[c]; ok {
		b.WriteString(accent(d.arg(), mark))
		return
	}
	switch c {
	case '\\':
		if d.path {
			b.WriteByte('\\')
		} else {
			b.WriteByte(' ') // a line break
		}
	case ' ', '\n', '\t', '\r', ',', '>':
		b.WriteByte(' ')
	case ';', ':':
		if d.path {
			b.WriteString("\\" + sym) // an escaped separator of the file field
		} else {
			b.WriteByte(' ')
		}
	case '!', '-', '/', '@':
		// negative space, discretionary hyphen, italic correction, spacing hint
	default:
		b.WriteString(sym) // \& \% \$ \# \_ \{ \} and the rest: the character itself
	}
}

// word decodes a control word (its name read, d.pos after its spaces).
func (d *texDecoder) word(b *strings.Builder, name string) {
	if s, ok := texSymbols[name]; ok {
		b.WriteString(s)
		return
	}
	if mark, ok := wordAccents[name]; ok {
		b.WriteString(accent(d.arg(), mark))
		return
	}
	switch {
	case keepArg[name] && (strings.HasPrefix(name, "text") || name == "mbox" || name == "hbox"):
		math := d.math
		d.math = false // text inside math: its spaces are words' spaces
		b.WriteString(d.arg())
		d.math = math
	case keepArg[name]:
		b.WriteString(d.arg())
	case dropArg[name]:
		d.arg()
	case name == "url" || name == "path" || name == "nolinkurl":
		b.WriteString(decodeVerbatim(d.rawArg()))
	case name == "href" || name == "textcolor" || name == "foreignlanguage" || name == "colorbox":
		d.rawArg() // the link, colour or language; the text is the second argument
		b.WriteString(d.arg())
	case name == "enquote" || name == "mkbibquote" || name == "textquote":
		b.WriteString("“" + d.arg() + "”")
	case name == "textsuperscript" || name == "mkbibsuperscript":
		b.WriteString(script(d.arg(), true))
	case name == "textsubscript" || name == "mkbibsubscript":
		b.WriteString(script(d.arg(), false))
	case name == "frac" || name == "tfrac" || name == "dfrac":
		num := d.arg()
		b.WriteString(num + "/" + d.arg())
	case name == "sqrt":
		if arg := d.arg(); utf8.RuneCountInString(arg) > 1 {
			b.WriteString("√(" + arg + ")") // √(nk), not √nk
		} else {
			b.WriteString("√" + arg)
		}
	case name == "par":
		if !d.path {
			b.WriteString("\n\n")
		}
	case name == "newline" || name == "linebreak":
		b.WriteByte('\n')
	case switches[name]:
		// a font switch or spacing command: nothing to read
	case d.pos < len(d.src) && d.src[d.pos] == '{':
		// an unknown command with an argument: the argument is read as a
		// group, so its text stays
		d.lossy = d.lossy || d.math
	default:
		// an unknown command alone (\MP, \BibTeXstyle): its name is the
		// nearest thing to what it typesets, and better than a lost word
		d.lossy = d.lossy || d.math
		b.WriteString(name)
		if d.pos < len(d.src) && d.src[d.pos-1] == ' ' && !d.math {
			b.WriteByte(' ') // the space TeX ate after the name
		}
	}
}

// arg decodes a command's argument: a group, a control sequence or one
// character.
func (d *texDecoder) arg() string {
	d.skipSpaces()
	if d.pos >= len(d.src) || d.src[d.pos] == '}' {
		return ""
	}
	if d.depth >= maxDepth {
		return stripTeX(d.rawArg())
	}
	d.depth++
	defer func() { d.depth-- }()
	var b strings.Builder
	switch c := d.src[d.pos]; c {
	case '{':
		d.pos++
		d.run(&b, true)
	case '\\':
		d.command(&b)
	default:
		_, size := utf8.DecodeRuneInString(d.src[d.pos:])
		b.WriteString(d.src[d.pos : d.pos+size])
		d.pos += size
	}
	return b.String()
}

// rawArg is an argument's text undecoded: a balanced group without its
// braces, or one character. It never recurses.
func (d *texDecoder) rawArg() string {
	d.skipSpaces()
	if d.pos >= len(d.src) || d.src[d.pos] == '}' {
		return ""
	}
	if d.src[d.pos] != '{' {
		_, size := utf8.DecodeRuneInString(d.src[d.pos:])
		d.pos += size
		return d.src[d.pos-size : d.pos]
	}
	start, depth := d.pos+1, 0
	for d.pos < len(d.src) {
		switch d.src[d.pos] {
		case '\\':
			d.pos++
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				d.pos++
				return d.src[start : d.pos-1]
			}
		}
		d.pos++
	}
	d.pos = len(d.src)
	return d.src[start:]
}

// stripTeX is the text of LaTeX nested too deep to decode: commands and
// braces dropped, without recursion.
func stripTeX(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			j := i + 1
			for j < len(s) && isASCIILetter(s[j]) {
				j++
			}
			if j == i+1 && j < len(s) {
				b.WriteByte(s[j]) // \& and the like: the character
				j++
			}
			i = j - 1
		case c == '{' || c == '}' || c == '$':
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func (d *texDecoder) skipSpaces() {
	for d.pos < len(d.src) && strings.IndexByte(" \t\n\r", d.src[d.pos]) >= 0 {
		d.pos++
	}
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// accent puts a combining mark on the first letter of arg, precomposed
// when Unicode has the letter ({\'\i} is í, as LaTeX means it); an empty
// argument ({\~{}}) is the accent itself.
func accent(arg string, mark rune) string {
	r, size := utf8.DecodeRuneInString(arg)
	if size == 0 {
		if s, ok := spacingAccents[mark]; ok {
			return s
		}
		return ""
	}
	switch r {
	case 'ı':
		r = 'i'
	case 'ȷ':
		r = 'j'
	}
	if c, ok := composed[[2]rune{r, mark}]; ok {
		return string(c) + arg[size:]
	}
	return string(r) + string(mark) + arg[size:]
}

// script writes a math super- or subscript with Unicode's superscript and
// subscript characters when it has them all (H$_2$O is H₂O, 10$^{-3}$ is
// 10⁻³), and as plain text otherwise.
func script(arg string, super bool) string {
	table := subscripts
	if super {
		table = superscripts
	}
	var b strings.Builder
	for _, r := range arg {
		s, ok := table[r]
		if !ok {
			return arg
		}
		b.WriteRune(s)
	}
	return b.String()
}
