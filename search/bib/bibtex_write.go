package bib

import (
	"bytes"
	"cmp"
	"strings"
	"unicode"
)

// WriteBibTeX writes items as BibLaTeX entries that BibTeX reads too, as
// Better BibTeX and JabRef users expect: UTF-8 kept as it is (biber and
// BibTeX read it), LaTeX's special characters escaped, so that each value
// (cleaned first, as a reader cleans it) reads back through ReadBibTeX as
// written and no value, however hostile, can end its entry or start one.
// That holds as BibTeX 0.99d reads a file, which counts every brace,
// escaped or not: every value's braces balance (a brace without its mate
// is \textbraceleft{} or \textbraceright{}), and URLs and DOIs are
// percent-encoded where BibTeX or LaTeX would misread them.
//
// What BibTeX cannot carry: a CSL type with no entry type of its own
// (bibTypesOut), a preprint without an arXiv URL (@misc), a tag or
// collection whose name holds a comma or (tags) a semicolon, as the fields
// are lists; a URL comes back percent-encoded where it held a brace, a
// quote, a space or another character a URL may not hold as it is.
func WriteBibTeX(items []Item) []byte {
	keys := bibKeys(items)
	var b bytes.Buffer
	for i, it := range items {
		it.Clean()
		typ := cmp.Or(bibTypesOut[it.Type], "misc")
		b.WriteString("@" + typ + "{" + keys[i])
		field := func(name, value string) {
			if value != "" {
				b.WriteString(",\n  " + name + " = {" + value + "}")
			}
		}
		if it.Type == "article-magazine" || it.Type == "article-newspaper" {
			field("entrysubtype", strings.TrimPrefix(it.Type, "article-")) // BibLaTeX's way
		}
		field("title", protectCase(texEscape(it.Title, texText)))
		field("author", bibNames(it.Authors))
		field("editor", bibNames(it.Editors))
		// journal (booktitle for a part of a book) whatever the type: what
		// ReadBibTeX reads Venue from; a style with no use for it ignores it
		venue, venueField := texEscape(it.Venue, texText), "journal"
		if typ == "incollection" || typ == "inproceedings" || typ == "inreference" {
			venueField = "booktitle"
		} else if typ == "article" && strings.HasPrefix(strings.TrimLeft(strings.ToLower(venue), "{ "), "arxiv") {
			venue = "{}" + venue // "journal = {arXiv...}" reads back as a preprint
		}
		field(venueField, venue)
		field("volume", texEscape(it.Volume, texText))
		field("number", texEscape(it.Issue, texText))
		field("pages", texEscape(it.Pages, texPages))
		if it.Year != 0 {
			field("year", yearString(it.Year))
		}
		// date when it says more than year (biber warns when both give the
		// year) and reads back (ParseDate keeps it)
		if _, d := ParseDate(it.Date); d == it.Date && d != yearString(it.Year) {
			field("date", verbatimEscape(d))
		}
		publisher := map[string]string{"phdthesis": "school", "techreport": "institution"}[typ]
		field(cmp.Or(publisher, "publisher"), texEscape(it.Publisher, texText))
		field("doi", percentEncode(it.DOI, false))
		field("isbn", verbatimEscape(it.ISBN))
		field("issn", verbatimEscape(it.ISSN))
		url := percentEncode(it.URL, true)
		field("url", url)
		if id := arxivID(url); it.Type == "article" && id != "" {
			field("eprint", id) // what makes @misc a preprint
			field("archivePrefix", "arXiv")
		}
		field("langid", texEscape(langid(it.Language), texText))
		field("keywords", texList(it.Tags))
		field("groups", texList(it.Collections))
		field("file", fileList(it.Files))
		field("abstract", texEscape(it.Abstract, texText))
		b.WriteString("\n}\n\n")
	}
	return b.Bytes()
}

// bibTypesOut is the entry type of a CSL type, one bibType reads back as
// that type where there is one; the rest read back as the nearest (a
// magazine article as article-journal, a blog post as webpage, an
// encyclopedia entry as chapter, a bill as legislation), or as document
// from @misc, the type of what BibTeX has no type for (map, hearing, ...).
var bibTypesOut = map[string]string{
	"article-journal": "article", "article-magazine": "article", "article-newspaper": "article",
	"article": "misc", "paper-conference": "inproceedings", "chapter": "incollection",
	"entry-encyclopedia": "inreference", "entry-dictionary": "inreference", "book": "book",
	"thesis": "phdthesis", "report": "techreport", "webpage": "online", "post-weblog": "online",
	"manuscript": "unpublished", "dataset": "dataset", "software": "software", "patent": "patent",
	"periodical": "periodical", "legislation": "legislation", "bill": "legislation",
	"legal_case": "jurisdiction", "standard": "standard", "graphic": "artwork", "song": "audio",
	"motion_picture": "video", "personal_communication": "letter", "speech": "presentation",
	"pamphlet": "booklet",
}

// arxivID is the identifier in an arxiv.org/abs/ URL ("2101.00001v2",
// "hep-th/9901001"), or "".
func arxivID(url string) string {
	i := strings.Index(strings.ToLower(url), "arxiv.org/abs/")
	if i < 0 {
		return ""
	}
	id, _, _ := strings.Cut(url[i+len("arxiv.org/abs/"):], "?")
	id, _, _ = strings.Cut(id, "#")
	return id
}

const (
	texText  = iota
	texName  // a part of a name: a comma or the word "and" would split the name, so they are braced
	texPages // an en dash is --, as page ranges are written
)

// texSpecial is how LaTeX writes the characters that are markup to it,
// each as decodeTeX reads it back. A brace is \{ or \} only when texEscape
// writes its mate too (braceMates).
var texSpecial = map[byte]string{'\\': `\textbackslash{}`, '{': `\textbraceleft{}`, '}': `\textbraceright{}`, '%': `\%`,
	'&': `\&`, '#': `\#`, '_': `\_`, '$': `\$`, '~': `\textasciitilde{}`, '^': `\textasciicircum{}`, '`': `\textasciigrave{}`}

// texEscape writes text as LaTeX. Braces it writes are always balanced as
// BibTeX counts them (every brace, escaped or not: \} closes a group as }
// does), so a value cannot end its field or its entry early: a brace of
// the text is \{ or \} when its mate is in the text too, and
// \textbraceleft{} or \textbraceright{} when it is alone. Two hyphens or
// two apostrophes are kept apart by an empty group, as LaTeX (and
// decodeTeX) would read them as a dash or a closing quote; an @ that
// starts a line is braced, as a line "@misc{" would read as the start of
// an entry to a reader that recovers from errors line by line.
func texEscape(s string, mode int) string {
	var b strings.Builder
	var last byte
	lineStart := false
	mates := braceMates(s)
	for i := 0; i < len(s); i++ {
		c, out := s[i], s[i:i+1]
		switch {
		case (c == '{' || c == '}') && mates[i]:
			out = `\` + out
		case texSpecial[c] != "":
			out = texSpecial[c]
		case mode == texPages && strings.HasPrefix(s[i:], "–"):
			out = "--"
			i += len("–") - 1
		case c == '@' && lineStart:
			out = "{@}"
		case mode == texName && c == ',':
			out = "{,}"
		case mode == texName && len(s) >= i+3 && strings.EqualFold(s[i:i+3], "and") &&
			(i == 0 || isSpace(s[i-1])) && (i+3 == len(s) || isSpace(s[i+3])):
			out = "{" + s[i:i+3] + "}"
			i += 2
		}
		if (out[0] == '-' || out[0] == '\'') && last == out[0] {
			b.WriteString("{}")
		}
		b.WriteString(out)
		last = out[len(out)-1]
		lineStart = c == '\n' || lineStart && (c == ' ' || c == '\t')
	}
	return b.String()
}

// protectCase braces the words of an escaped title whose capitals are
// not just a first letter ("{GUI}", "{GPT-3}", "{ChatGPT}"), as Zotero
// and Better BibTeX do: a style that sets titles in sentence case
// lower-cases every other letter, and "gui" or "gpt-3" is wrong. A word
// holding LaTeX (a backslash or a brace) is left as it is.
func protectCase(title string) string {
	words := strings.Split(title, " ")
	for i, w := range words {
		if needsCaseProtection(w) {
			words[i] = "{" + w + "}"
		}
	}
	return strings.Join(words, " ")
}

// needsCaseProtection: w has an upper-case letter after its first letter,
// and no LaTeX of its own.
func needsCaseProtection(w string) bool {
	if strings.ContainsAny(w, "\\{}") {
		return false
	}
	first := true
	for _, r := range w {
		if !unicode.IsLetter(r) {
			continue
		}
		if !first && unicode.IsUpper(r) {
			return true
		}
		first = false
	}
	return false
}

// braceMates marks the braces of s that have their mate in s (a { and
// the } that closes it); nil when s has no braces.
func braceMates(s string) []bool {
	if !strings.ContainsAny(s, "{}") {
		return nil
	}
	mates := make([]bool, len(s))
	var open []int
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{':
			open = append(open, i)
		case '}':
			if n := len(open); n > 0 {
				mates[open[n-1]], mates[i] = true, true
				open = open[:n-1]
			}
		}
	}
	return mates
}

// verbatimEscape writes an identifier (ISBN, ISSN, a date) as
// decodeVerbatim reads it back: a backslash as $\backslash$, braces
// balanced as texEscape balances them, and what LaTeX would take for
// markup (a % would comment out the rest of the line) escaped.
func verbatimEscape(s string) string {
	if !strings.ContainsAny(s, "\\{}%&#$_~^") {
		return s
	}
	var b strings.Builder
	mates := braceMates(s)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b.WriteString(`$\backslash$`)
		case (c == '{' || c == '}') && mates[i]:
			b.WriteString(`\` + s[i:i+1])
		case c == '{':
			b.WriteString(`\textbraceleft{}`)
		case c == '}':
			b.WriteString(`\textbraceright{}`)
		case c == '~':
			b.WriteString(`\textasciitilde{}`)
		case c == '^':
			b.WriteString(`\^{}`)
		case strings.IndexByte("%&#$_", c) >= 0:
			b.WriteString(`\` + s[i:i+1])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// percentEncode writes a URL (url) or DOI so that neither BibTeX nor
// LaTeX misreads it and biblatex's verbatim fields keep it as a link:
// controls, spaces and the characters a URL may not hold as they are
// (" < > \ ^ ` { | }) are percent-encoded, as a browser would send them.
// A URL keeps its # and its %-escapes (a % that starts none is %25); in
// a DOI, where # and % are the name's own characters, they are encoded
// too, and the reader decodes them (percentDecode). Letters beyond ASCII
// stay UTF-8, as the rest of the file is.
func percentEncode(s string, url bool) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		keep := c > ' ' && c != 0x7f && strings.IndexByte("\"<>\\^`{|}", c) < 0
		switch c {
		case '%':
			keep = url && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2])
		case '#':
			keep = url
		}
		if keep {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// texList writes tags or collections as a comma list.
func texList(list []string) string { return texEscape(strings.Join(list, ", "), texText) }

// fileList writes attachments as Better BibTeX does and JabRef reads,
// paths separated by ; with \ : ; escaped. A brace in a path would
// unbalance the entry: such a list is written in Mendeley's LaTeX, which
// fileField decodes first ("{\" tells it the dialect), each brace as
// {\textbraceleft} or {\textbraceright}, balanced as BibTeX counts
// braces (it counts the one after a backslash too).
func fileList(paths []string) string {
	r := strings.NewReplacer(`\`, `\\`, ":", `\:`, ";", `\;`)
	if strings.ContainsAny(strings.Join(paths, ""), "{}") {
		r = strings.NewReplacer(`\`, `$\backslash\backslash$`, ":", `\:`, ";", `\;`, "{", `{\textbraceleft}`, "}", `{\textbraceright}`, "$", `\$`)
	}
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = r.Replace(p)
	}
	return strings.Join(out, ";")
}

// bibNames writes names as "Family, Given" or "Family, Suffix, Given",
// joined by "and": particles stay in the family, as no reading of "Given
// von Family" can promise; an organisation is braced whole, so that it is
// not split into given and family names. Each form is checked with
// parseNames and, where it would read back otherwise ("Ludwig Wittgenstein"
// as a family name alone, a given name that looks like a suffix), the
// safer form after it is written.
func bibNames(names []Name) string {
	out := make([]string, len(names))
	for i, n := range names {
		fam, given, suffix := texEscape(n.Family, texName), texEscape(n.Given, texName), texEscape(n.Suffix, texName)
		forms := []string{fam, fam + ","}
		switch {
		case n.Literal != "":
			forms = []string{"{" + texEscape(n.Literal, texText) + "}"}
		case n.Suffix != "":
			forms = []string{fam + ", " + suffix + ", " + given, fam + ", " + suffix + ", {" + given + "}"}
		case n.Given != "":
			forms = []string{fam + ", " + given}
		}
		out[i] = forms[len(forms)-1]
		for _, f := range forms[:len(forms)-1] {
			if got := parseNames(f); len(got) == 1 && got[0] == n {
				out[i] = f
				break
			}
		}
	}
	return strings.Join(out, " and ")
}

// langid is the babel name BibLaTeX's langid takes for a BCP 47 tag, one
// that languageTag reads back as the tag; where languageTags has two for a
// tag, the current one (ngerman, not german) is listed first, so that the
// output does not depend on map order. A tag without a name is written as
// it is.
func langid(tag string) string {
	for _, name := range strings.Fields("american british ngerman naustrian nswissgerman french portuguese brazilian norsk magyar") {
		if languageTags[name] == tag {
			return name
		}
	}
	for name, t := range languageTags {
		if t == tag {
			return name
		}
	}
	return tag
}

// bibKeys gives each item a citation key: its ID when that is one BibTeX
// and biber read (letters, digits and -_:./), else the ID with accents
// dropped and other characters left out ("item" when nothing is left). A
// key already given, compared without case as BibTeX does, gets a, b, ...
// aa, ... appended. Valid IDs are given first, so an item keeps its ID as
// its key whenever it can, and a document citing it still finds it.
func bibKeys(items []Item) []string {
	keys := make([]string, len(items))
	used, next := map[string]bool{}, map[string]int{}
	for i, it := range items {
		if k := keyOf(it.ID); k == CleanLine(it.ID) && k != "" && !used[strings.ToLower(k)] {
			keys[i], used[strings.ToLower(k)] = k, true
		}
	}
	for i, it := range items {
		base := cmp.Or(keyOf(it.ID), "item")
		for k := base; keys[i] == ""; {
			if !used[strings.ToLower(k)] {
				keys[i], used[strings.ToLower(k)] = k, true
				break
			}
			next[strings.ToLower(base)]++ // a suffix tried is not tried again
			k = base + letters(next[strings.ToLower(base)])
		}
	}
	return keys
}

// keyOf is id with accents dropped (é is e) and what a key may not hold
// left out, short enough for ReadBibTeX to read whole with a suffix.
func keyOf(id string) string {
	var b strings.Builder
	for _, r := range id {
		for base, ok := unaccented[r]; ok; base, ok = unaccented[r] {
			r = base // Ǖ is Ü is U
		}
		if r < 0x80 && (isASCIILetter(byte(r)) || r >= '0' && r <= '9' || strings.ContainsRune("-_:./", r)) {
			b.WriteRune(r)
		}
	}
	return Truncate(b.String(), maxLine-16)
}

// unaccented is the letter under each accented letter of the decoder's table.
var unaccented = func() map[rune]rune {
	m := make(map[rune]rune, len(composed))
	for letter, c := range composed {
		m[c] = letter[0]
	}
	return m
}()

// letters is the n-th suffix, from 1: a ... z, aa, ab, ...
func letters(n int) string {
	s := ""
	for ; n > 0; n = (n - 1) / 26 {
		s = string(rune('a'+(n-1)%26)) + s
	}
	return s
}
