package bib

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// ReadCSLJSON reads CSL-JSON as Zotero and Better BibTeX export it: an
// array of items, or one item alone. Values are read leniently, as tools
// disagree (a volume of 28 or "28", date parts of 2019 or "2019"). Bad
// JSON is an error naming its line; an element that is not an item is
// skipped, and the error names the first such element while the items
// read are still returned. An item whose names were cut at the cap is
// named too (Read lists every problem; this joins them).
func ReadCSLJSON(data []byte) ([]Item, error) {
	items, errs := readCSLJSON(data)
	if len(errs) == 1 {
		return items, errs[0]
	}
	return items, errors.Join(errs...)
}

// readCSLJSON checks the file with json.Valid, which allocates nothing,
// then walks it in place (csljson_walk.go), capping every array as it is
// split: a file of a million authors costs about its own size, not the
// twenty times a decoded array of maps of raw values would. A file that
// is not valid JSON is walked element by element with a json.Decoder, so
// that the items before the fault are still read and the fault is named
// by its line.
func readCSLJSON(data []byte) ([]Item, []error) {
	items, errs := readCSLJSONItems(data)
	var notes problems
	items = settleIDs(items, nil, "CSL-JSON", "id", &notes)
	return items, append(errs, notes.result()...)
}

func readCSLJSONItems(data []byte) ([]Item, []error) {
	if len(data) > MaxInput {
		return nil, []error{tooLarge("CSL-JSON", len(data))}
	}
	src := inputBytes(data)
	trimmed := bytes.TrimSpace(src)
	if len(trimmed) == 0 {
		return nil, nil
	}
	if trimmed[0] != '[' && trimmed[0] != '{' {
		return nil, []error{&ParseError{Format: "CSL-JSON", Line: 1, Msg: "expected an array of items ([...]) or one item ({...})"}}
	}
	r := &cslReader{src: src, lines: 1}
	start := skipSpace(src, 0)
	switch {
	case !json.Valid(src):
		return r.invalid(src[start])
	case src[start] == '[':
		items := r.items(start)
		return items, r.errs.result()
	}
	// One item, or {"items": [...]} as some APIs wrap them.
	wrapped, typed := -1, false
	eachMember(src, start, func(key []byte, s, _ int) {
		switch string(jsonKey(key)) {
		case "type":
			typed = true
		case "items":
			wrapped = -1
			if src[s] == '[' {
				wrapped = s
			}
		}
	})
	if wrapped >= 0 && !typed {
		items := r.items(wrapped)
		return items, r.errs.result()
	}
	return []Item{r.item(start)}, r.errs.result()
}

// cslReader reads a CSL-JSON file: its items and the problems found.
type cslReader struct {
	src            []byte
	errs           problems
	skipped        bool // an element that is not an item was named
	lineOff, lines int  // line counting, forward only
}

// items reads the elements of the array at src[start].
func (r *cslReader) items(start int) []Item {
	var items []Item
	n := 0
	eachElement(r.src, start, func(s, _ int) bool {
		n++
		return r.element(&items, n, s)
	})
	return items
}

// element reads the n-th element of an array of items, which starts at
// src[s], into items; an element that is not an object is skipped, the
// first one named. It says whether to go on: past MaxItems the rest is
// named once and not read.
func (r *cslReader) element(items *[]Item, n, s int) bool {
	switch {
	case len(*items) == MaxItems:
		r.errs.add(tooMany("CSL-JSON", r.lineAt(s)))
		return false
	case r.src[s] == '{':
		*items = append(*items, r.item(s))
	case !r.skipped:
		r.skipped = true
		r.errs.add(&ParseError{Format: "CSL-JSON", Line: r.lineAt(s), Msg: fmt.Sprintf("item %d is not an object, and was skipped", n)})
	}
	return true
}

// item reads the item at src[start], and names a list of names that was
// cut at the cap.
func (r *cslReader) item(start int) Item {
	var o cslObject
	b := r.src
	eachMember(b, start, func(key []byte, s, e int) {
		k := jsonKey(key)
		if i, ok := cslTextKeys[string(k)]; ok {
			o.text[i] = jsonText(b, s, e)
			return
		}
		switch string(k) {
		case "author":
			o.authors, o.authorCount = jsonNames(b, s, e)
		case "editor":
			o.editors, o.editorCount = jsonNames(b, s, e)
		case "issued":
			o.year, o.date = jsonDate(b, s, e)
		case "keyword":
			o.tags = jsonKeywords(b, s, e)
		}
	})
	it := cslItem(&o)
	it.Clean()
	for _, c := range []struct {
		what  string
		count int
	}{{"authors", o.authorCount}, {"editors", o.editorCount}} {
		if c.count > maxNames && !r.errs.full() {
			r.errs.add(&ParseError{Format: "CSL-JSON", Line: r.lineAt(start), Key: it.ID,
				Msg: fmt.Sprintf("only the first %d of its %d %s were kept", maxNames, c.count, c.what), Imported: true})
		}
	}
	return it
}

// invalid reads a file that is not valid JSON: each element of its array
// is checked by a json.Decoder before it is walked, so the items before
// the fault are read; one object alone is all or nothing, as
// json.Unmarshal would have it.
func (r *cslReader) invalid(first byte) ([]Item, []error) {
	dec := json.NewDecoder(bytes.NewReader(r.src))
	if first == '{' {
		err := dec.Decode(&skipValue{})
		if err == nil {
			err = r.end(dec, "item")
		}
		return nil, []error{r.jsonError(dec, err)}
	}
	var items []Item
	if _, err := dec.Token(); err != nil { // [
		return nil, []error{r.jsonError(dec, err)}
	}
	for n := 1; dec.More(); n++ {
		s := skipSpace(r.src, int(dec.InputOffset()))
		if s < len(r.src) && r.src[s] == ',' {
			s = skipSpace(r.src, s+1)
		}
		if err := dec.Decode(&skipValue{}); err != nil {
			r.errs.add(r.jsonError(dec, err))
			return items, r.errs.result()
		}
		if !r.element(&items, n, s) {
			return items, r.errs.result()
		}
	}
	_, err := dec.Token() // ]
	if err == nil {
		err = r.end(dec, "array")
	}
	r.errs.add(r.jsonError(dec, err))
	return items, r.errs.result()
}

// end checks that nothing follows the top-level value.
func (r *cslReader) end(dec *json.Decoder, what string) error {
	if _, err := dec.Token(); err != io.EOF {
		return &ParseError{Format: "CSL-JSON", Line: r.lineAt(int(dec.InputOffset())), Msg: "not valid JSON: text after the end of the " + what}
	}
	return nil
}

// jsonError says where the JSON broke, as a line a person can go to.
func (r *cslReader) jsonError(dec *json.Decoder, err error) error {
	var pe *ParseError
	if errors.As(err, &pe) {
		return err
	}
	offset := dec.InputOffset()
	var se *json.SyntaxError
	if errors.As(err, &se) {
		offset = se.Offset
	}
	msg := err.Error()
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		msg = "the file ends in the middle of the JSON"
	}
	return &ParseError{Format: "CSL-JSON", Line: r.lineAt(int(offset)), Msg: "not valid JSON: " + msg}
}

// lineAt is the 1-based line of offset off; offsets asked for mostly
// grow, so counting is linear in the file.
func (r *cslReader) lineAt(off int) int {
	off = max(0, min(off, len(r.src)))
	if off < r.lineOff {
		r.lineOff, r.lines = 0, 1
	}
	r.lines += bytes.Count(r.src[r.lineOff:off], []byte{'\n'})
	r.lineOff = off
	return r.lines
}

// skipValue is decoded into to check a value and keep nothing.
type skipValue struct{}

func (*skipValue) UnmarshalJSON([]byte) error { return nil }

// cslObject is what an item says, each array already capped.
type cslObject struct {
	text                     [len(cslTextKeyList)]string
	authors, editors         []Name
	authorCount, editorCount int // elements of the arrays, before the cap
	year                     int
	date                     string
	tags                     []string
}

// cslTextKeyList are the keys read as text, cslTextKeys their indexes.
var cslTextKeyList = [...]string{"id", "citation-key", "type", "title", "container-title", "event-title", "volume",
	"issue", "number", "page", "publisher", "DOI", "doi", "ISBN", "isbn", "ISSN", "issn", "URL", "url", "abstract", "language"}

var cslTextKeys = func() map[string]int {
	m := make(map[string]int, len(cslTextKeyList))
	for i, k := range cslTextKeyList {
		m[k] = i
	}
	return m
}()

// cslItem maps one CSL-JSON item.
func cslItem(o *cslObject) Item {
	str := func(keys ...string) string {
		for _, k := range keys {
			if v := o.text[cslTextKeys[k]]; v != "" {
				return v
			}
		}
		return ""
	}
	return Item{
		ID:        str("id", "citation-key"),
		Type:      strings.ToLower(str("type")),
		Title:     stripMarkup(str("title")),
		Authors:   o.authors,
		Editors:   o.editors,
		Venue:     stripMarkup(str("container-title", "event-title")),
		Volume:    str("volume"),
		Issue:     str("issue", "number"),
		Pages:     NormalizePages(str("page")),
		Publisher: str("publisher"),
		DOI:       CleanDOI(str("DOI", "doi")),
		ISBN:      str("ISBN", "isbn"),
		ISSN:      str("ISSN", "issn"),
		URL:       str("URL", "url"),
		Abstract:  str("abstract"),
		Language:  languageTag(str("language")),
		Year:      o.year,
		Date:      o.date,
		Tags:      o.tags,
	}
}

// cslMarkup is the rich text CSL allows in titles (<i>E. coli</i>,
// <span class="nocase">DNA</span>): a title reads without it.
var cslMarkup = regexp.MustCompile(`</?(?:i|b|em|strong|sup|sub|sc|span)(?:\s[^<>]*)?>`)

func stripMarkup(s string) string {
	if !strings.Contains(s, "<") {
		return s
	}
	return cslMarkup.ReplaceAllString(s, "")
}

// WriteCSLJSON writes items as indented CSL-JSON, the format citeproc,
// Pandoc and Zotero read. CSL-JSON has no field for attachments or
// collections: Files and Collections are not written.
func WriteCSLJSON(items []Item) ([]byte, error) {
	out := make([]cslOut, 0, len(items))
	for _, it := range items {
		o := cslOut{
			ID: it.ID, Type: it.Type, Title: it.Title, Author: outNames(it.Authors), Editor: outNames(it.Editors),
			Issued: outDate(it.Year, it.Date), ContainerTitle: it.Venue, Volume: it.Volume, Issue: it.Issue,
			Page: it.Pages, Publisher: it.Publisher, DOI: it.DOI, ISBN: it.ISBN, ISSN: it.ISSN, URL: it.URL,
			Abstract: it.Abstract, Language: it.Language, Keyword: strings.Join(it.Tags, ", "),
		}
		if o.Type == "" {
			o.Type = "document"
		}
		out = append(out, o)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

type cslOut struct {
	ID             string    `json:"id"`
	Type           string    `json:"type"`
	Title          string    `json:"title,omitempty"`
	Author         []cslName `json:"author,omitempty"`
	Editor         []cslName `json:"editor,omitempty"`
	Issued         *cslIssue `json:"issued,omitempty"`
	ContainerTitle string    `json:"container-title,omitempty"`
	Volume         string    `json:"volume,omitempty"`
	Issue          string    `json:"issue,omitempty"`
	Page           string    `json:"page,omitempty"`
	Publisher      string    `json:"publisher,omitempty"`
	DOI            string    `json:"DOI,omitempty"`
	ISBN           string    `json:"ISBN,omitempty"`
	ISSN           string    `json:"ISSN,omitempty"`
	URL            string    `json:"URL,omitempty"`
	Abstract       string    `json:"abstract,omitempty"`
	Language       string    `json:"language,omitempty"`
	Keyword        string    `json:"keyword,omitempty"`
}

type cslName struct {
	Family  string `json:"family,omitempty"`
	Given   string `json:"given,omitempty"`
	Suffix  string `json:"suffix,omitempty"`
	Literal string `json:"literal,omitempty"`
}

type cslIssue struct {
	DateParts [][]int `json:"date-parts,omitempty"`
	Raw       string  `json:"raw,omitempty"`
}

func outNames(names []Name) []cslName {
	var out []cslName
	for _, n := range names {
		if n.Literal != "" {
			out = append(out, cslName{Literal: n.Literal})
			continue
		}
		out = append(out, cslName{Family: n.Family, Given: n.Given, Suffix: n.Suffix})
	}
	return out
}

// outDate writes Date as date parts (a range as two), or the year alone.
func outDate(year int, date string) *cslIssue {
	var parts [][]int
	if date != "" {
		start, end, isRange := strings.Cut(date, "/")
		for i, s := range []string{start, end} {
			if i == 1 && !isRange {
				break
			}
			var p []int
			for _, f := range strings.Split(s, "-")[:min(3, len(strings.Split(s, "-")))] {
				n := atoiSmall(f)
				if n <= 0 {
					break
				}
				p = append(p, n)
			}
			if len(p) == 0 {
				parts = nil
				break
			}
			parts = append(parts, p)
		}
		if len(parts) == 0 {
			return &cslIssue{Raw: date}
		}
		return &cslIssue{DateParts: parts}
	}
	if year > 0 {
		return &cslIssue{DateParts: [][]int{{year}}}
	}
	return nil
}
