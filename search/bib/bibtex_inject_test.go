package bib

import (
	"cmp"
	"fmt"
	"strings"
	"testing"
)

// What BibTeX 0.99d itself reads from an export, not what the project's
// reader reads: BibTeX counts every brace, escaped or not (\} closes a
// group as } does), and an entry starts at any @ outside one. These tests
// read each export that way and check that every entry holds exactly the
// fields written, with the values intended, however hostile the values.

// countedEntry is an entry as BibTeX reads it: its fields in order, and
// their raw values.
type countedEntry struct {
	typ, key string
	names    []string
	fields   map[string]string
}

// readAsBibTeX reads data as BibTeX 0.99d does: text before an @ is
// skipped, a braced value ends at the brace that balances its opening one
// (backslashes change nothing), a quoted one at a " outside braces, and
// anything else where a comma, a closing delimiter or a # is due is an
// error.
func readAsBibTeX(data string) ([]countedEntry, error) {
	var out []countedEntry
	pos := 0
	skipWhite := func() {
		for pos < len(data) && strings.IndexByte(" \t\n\r\f\v", data[pos]) >= 0 {
			pos++
		}
	}
	ident := func() string { // BibTeX's scan_identifier
		start := pos
		for pos < len(data) && data[pos] > ' ' && data[pos] < 0x7f && strings.IndexByte("\"#%'(),={}", data[pos]) < 0 {
			pos++
		}
		return data[start:pos]
	}
	fail := func(format string, args ...any) error {
		line := strings.Count(data[:min(pos, len(data))], "\n") + 1
		return fmt.Errorf("line %d: %s", line, fmt.Sprintf(format, args...))
	}
	for {
		at := strings.IndexByte(data[pos:], '@')
		if at < 0 {
			return out, nil
		}
		pos += at + 1
		skipWhite()
		typ := strings.ToLower(ident())
		if typ == "" {
			return out, fail("an @ that starts no entry")
		}
		skipWhite()
		if pos >= len(data) || data[pos] != '{' && data[pos] != '(' {
			return out, fail("@%s without { or (", typ)
		}
		closer := byte('}')
		if data[pos] == '(' {
			closer = ')'
		}
		pos++
		skipWhite()
		start := pos
		for pos < len(data) && data[pos] != ',' && data[pos] != closer && strings.IndexByte(" \t\n\r", data[pos]) < 0 {
			pos++
		}
		e := countedEntry{typ: typ, key: data[start:pos], fields: map[string]string{}}
		for {
			skipWhite()
			if pos >= len(data) {
				return out, fail("entry %s not closed", e.key)
			}
			if data[pos] == closer {
				pos++
				break
			}
			if data[pos] != ',' {
				return out, fail("entry %s: expected , or %c, found %q", e.key, closer, data[pos:min(pos+20, len(data))])
			}
			pos++
			skipWhite()
			if pos < len(data) && data[pos] == closer {
				pos++
				break
			}
			name := strings.ToLower(ident())
			if name == "" {
				return out, fail("entry %s: expected a field name, found %q", e.key, data[pos:min(pos+20, len(data))])
			}
			skipWhite()
			if pos >= len(data) || data[pos] != '=' {
				return out, fail("entry %s: expected = after %s", e.key, name)
			}
			pos++
			var value strings.Builder
			for {
				skipWhite()
				if pos >= len(data) {
					return out, fail("entry %s: the value of %s is missing", e.key, name)
				}
				switch c := data[pos]; {
				case c == '{' || c == '"':
					depth, i := 0, pos+1
					for ; i < len(data); i++ {
						if data[i] == '}' && depth == 0 && c == '{' || data[i] == '"' && depth == 0 && c == '"' {
							break
						}
						switch data[i] {
						case '{':
							depth++
						case '}':
							depth--
						}
						if depth < 0 {
							return out, fail("entry %s: a } closes nothing in %s", e.key, name)
						}
					}
					if i >= len(data) {
						return out, fail("entry %s: the value of %s is not closed", e.key, name)
					}
					value.WriteString(data[pos+1 : i])
					pos = i + 1
				case c >= '0' && c <= '9':
					for pos < len(data) && data[pos] >= '0' && data[pos] <= '9' {
						value.WriteByte(data[pos])
						pos++
					}
				default:
					macro := ident()
					if macro == "" {
						return out, fail("entry %s: the value of %s is missing", e.key, name)
					}
					value.WriteString("<macro " + macro + ">")
				}
				skipWhite()
				if pos < len(data) && data[pos] == '#' {
					pos++
					continue
				}
				break
			}
			if _, dup := e.fields[name]; dup {
				return out, fail("entry %s: %s given twice", e.key, name)
			}
			e.names = append(e.names, name)
			e.fields[name] = value.String()
		}
		out = append(out, e)
	}
}

// countedItem is the item the project's field mapping makes of the values
// BibTeX read.
func countedItem(e countedEntry) Item {
	var p bibParser
	it := p.item(&bibEntry{typ: e.typ, key: e.key, fields: e.fields}, "")
	it.Clean()
	return it
}

// Titles, names, URLs, DOIs, notes and keys that would close their field
// or their entry if braces were escaped with a backslash (which BibTeX
// does not see) are each one field of their own entry, with the value
// intended, as BibTeX reads them.
func TestWriteBibTeXAsBibTeXReads(t *testing.T) {
	t.Parallel()
	cases := []struct {
		item   Item
		key    string
		fields string
		url    string // the URL as written: percent-encoded
	}{
		{item: Item{ID: "t1", Title: `A survey}, note = "INJECTED", year = 1999}`}, fields: "title"},
		{item: Item{ID: "t2", Title: `x} @misc(evil, title="INJECTED-ENTRY", url="https://evil.example")`}, fields: "title"},
		{item: Item{ID: "t3", Title: `\}\{ }}} {{{ \ { } % # & @x{`, Venue: "}{", Publisher: "{", Volume: "}", Issue: `\{`,
			Pages: "1}–{2", Abstract: "Intro }}}\n\n@misc{y, note = {z}}\n  @misc(w,\n}\n% {"},
			fields: "title journal volume number pages publisher abstract"},
		{item: Item{ID: "a1", Authors: []Name{{Family: "Evil}, title = {INJECTED", Given: "{"}, {Literal: "}} @misc{x,"},
			{Family: "Doe", Given: "J}", Suffix: "Jr{"}}, Editors: []Name{{Family: "}and{"}}}, fields: "author editor"},
		{item: Item{ID: "u1", URL: `https://a.example/},url="https://evil.example"`}, fields: "url",
			url: `https://a.example/%7D,url=%22https://evil.example%22`},
		{item: Item{ID: "u2", URL: "https://a.example/{x} y\"z\\w<>^`|%zz%41#frag", DOI: "10.1000/x},note={INJECTED",
			ISBN: "},isbn={x", ISSN: "{ % #"}, fields: "doi isbn issn url",
			url: "https://a.example/%7Bx%7D%20y%22z%5Cw%3C%3E%5E%60%7C%25zz%41#frag"},
		{item: Item{ID: "d1", DOI: `10.1000/a{b}\c%d"e#f`, Language: "x}{", Tags: []string{"}{", "@misc{t"},
			Collections: []string{"A}/B{"}}, fields: "doi langid keywords groups"},
		{item: Item{ID: "p1", Type: "article", URL: "https://arxiv.org/abs/2101.00001{}},x={"}, fields: "url eprint archiveprefix",
			url: "https://arxiv.org/abs/2101.00001%7B%7D%7D,x=%7B"},
		{item: Item{ID: "f1", Files: []string{"/x/{a.pdf", "/x/}},file={evil.pdf", `C:\a}b.pdf`}}, fields: "file"},
		{item: Item{ID: "k},note={x", Title: "Key"}, key: "knotex", fields: "title"},
		{item: Item{ID: "after", Title: "After"}, fields: "title"},
	}
	var items []Item
	for _, c := range cases {
		if c.item.Type == "" {
			c.item.Type = "article-journal"
		}
		items = append(items, c.item)
	}
	data := string(WriteBibTeX(items))
	entries, err := readAsBibTeX(data)
	if err != nil {
		t.Fatalf("BibTeX cannot read the export: %v\n%s", err, data)
	}
	if len(entries) != len(items) {
		t.Fatalf("BibTeX reads %d entries, want %d:\n%s", len(entries), len(items), data)
	}
	for i, c := range cases {
		e := entries[i]
		eq(t, c.item.ID+" key", e.key, cmp.Or(c.key, c.item.ID))
		eq(t, c.item.ID+" fields", strings.Join(e.names, " "), c.fields)
		want := items[i]
		want.Clean()
		want.ID = e.key
		want.DOI = CleanDOI(want.DOI)
		want.Pages = NormalizePages(want.Pages)
		if c.url != "" {
			want.URL = c.url
		}
		sameFields(t, "as BibTeX reads it", countedItem(e), want)
	}
}

// Whatever the values, BibTeX reads one entry with exactly the fields
// written, and each value it reads is the one intended.
func FuzzWriteBibTeXAsBibTeXReads(f *testing.F) {
	f.Add("A survey}, note = \"INJECTED\", year = 1999}", "Evil}, title = {INJECTED", "https://a.example/},url=\"x\"",
		"x},note={y", "}}}\n@misc{y,\n", "k},note={x")
	f.Add(`x} @misc(evil, title="INJECTED-ENTRY", url="https://evil.example")`, "}} @misc{x,", "{x} y\"z\\w%zz",
		`a{b}\c%d"e#f`, "% @ { \\", "@misc{")
	f.Add(`\}\{`, `\`, "%41%", "\x00\t\n", "{{{", "}")
	f.Fuzz(func(t *testing.T, title, name, url, doi, note, key string) {
		path := strings.NewReplacer("\n", "", "\r", "").Replace(name)
		it := Item{ID: key, Type: "article-journal", Title: "t" + title,
			Authors: []Name{{Family: "f" + name, Given: note}, {Literal: "l" + name}}, Editors: []Name{{Family: "e" + note, Given: title}},
			Venue: "v" + note, Volume: "1" + title, Issue: "2" + name, Pages: "p" + url, Year: 2019, Publisher: "p" + note,
			DOI: "10.1000/" + doi, ISBN: "i" + doi, ISSN: "s" + url, URL: "https://e.org/" + url, Abstract: "a" + note,
			Language: "x" + title, Tags: []string{"t" + title}, Collections: []string{"c" + note}, Files: []string{"/f/" + path}}
		data := string(WriteBibTeX([]Item{it}))
		entries, err := readAsBibTeX(data)
		if err != nil {
			t.Fatalf("BibTeX cannot read the export: %v\n%s", err, data)
		}
		if len(entries) != 1 {
			t.Fatalf("BibTeX reads %d entries:\n%s", len(entries), data)
		}
		e := entries[0]
		eq(t, "key", e.key, bibKeys([]Item{it})[0])
		eq(t, "fields", strings.Join(e.names, " "),
			"title author editor journal volume number pages year publisher doi isbn issn url langid keywords groups file abstract")
		it.Clean()
		got := countedItem(e)
		eq(t, "title", got.Title, it.Title)
		eq(t, "authors", got.Authors, it.Authors)
		eq(t, "editors", got.Editors, it.Editors)
		eq(t, "venue", got.Venue, it.Venue)
		eq(t, "publisher", got.Publisher, it.Publisher)
		eq(t, "volume", got.Volume, it.Volume)
		eq(t, "issue", got.Issue, it.Issue)
		eq(t, "abstract", got.Abstract, it.Abstract)
		eq(t, "DOI", got.DOI, CleanDOI(it.DOI))
		eq(t, "ISBN", got.ISBN, it.ISBN)
		eq(t, "ISSN", got.ISSN, it.ISSN)
		eq(t, "files", got.Files, it.Files)
	})
}
