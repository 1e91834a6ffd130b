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

// readCSLJSON streams the file: arrays (names, keywords, date parts, the
// items themselves) are read element by element and capped as they are
// read, so a file of a million authors costs about its own size, not the
// twenty times a decoded array of maps of raw values would.
func readCSLJSON(data []byte) ([]Item, []error) {
	if len(data) > MaxInput {
		return nil, []error{tooLarge("CSL-JSON", len(data))}
	}
	text := decodeInput(data)
	trimmed := strings.TrimSpace(text)
	if trimmed == "" {
		return nil, nil
	}
	if trimmed[0] != '[' && trimmed[0] != '{' {
		return nil, []error{&ParseError{Format: "CSL-JSON", Line: 1, Msg: "expected an array of items ([...]) or one item ({...})"}}
	}
	r := &cslReader{cslStream: newCSLStream(strings.NewReader(text)), src: text, lines: 1}
	tok, err := r.dec.Token()
	if err != nil {
		return nil, []error{r.jsonError(err)}
	}
	var items []Item
	if tok == json.Delim('[') {
		items, err = r.items()
		if err == nil {
			err = r.end("array")
		}
		if err != nil {
			r.errs.add(err)
		}
		return items, r.errs.result()
	}
	o, err := r.object(true)
	if err == nil {
		err = r.end("item")
	}
	if err != nil {
		return nil, []error{r.jsonError(err)} // as json.Unmarshal would: one object, all or nothing
	}
	if o.items != nil && !o.hasType { // {"items": [...]}, as some APIs wrap them
		return o.items, r.errs.result()
	}
	return []Item{r.toItem(o, 1)}, r.errs.result()
}

// cslReader reads a CSL-JSON file: its items and the problems found.
type cslReader struct {
	cslStream
	src            string // the file, for line numbers
	errs           problems
	lineOff, lines int // line counting, forward only
}

// items reads the elements of an array of items, its [ read; an element
// that is not an object is skipped, and the first one named. Past
// MaxItems the elements are skipped unread, and that is named once.
func (r *cslReader) items() ([]Item, error) {
	var items []Item
	skipped, cut := false, false
	for n := 1; r.dec.More(); n++ {
		start := int(r.dec.InputOffset())
		if len(items) == MaxItems {
			if !cut {
				cut = true
				r.errs.add(tooMany("CSL-JSON", r.lineAt(start)))
			}
			if err := r.skip(); err != nil {
				return items, r.jsonError(err)
			}
			continue
		}
		tok, err := r.dec.Token()
		if err != nil {
			return items, r.jsonError(err)
		}
		if tok == json.Delim('{') {
			o, err := r.object(false)
			if err != nil {
				return items, r.jsonError(err)
			}
			items = append(items, r.toItem(o, start+1))
			continue
		}
		if err := r.skipRest(tok); err != nil {
			return items, r.jsonError(err)
		}
		if !skipped {
			skipped = true
			r.errs.add(&ParseError{Format: "CSL-JSON", Line: r.lineAt(start + 1), Msg: fmt.Sprintf("item %d is not an object, and was skipped", n)})
		}
	}
	if _, err := r.dec.Token(); err != nil { // ]
		return items, r.jsonError(err)
	}
	return items, nil
}

// end checks that nothing follows the top-level value.
func (r *cslReader) end(what string) error {
	if _, err := r.dec.Token(); err != io.EOF {
		return &ParseError{Format: "CSL-JSON", Line: r.lineAt(int(r.dec.InputOffset())), Msg: "not valid JSON: text after the end of the " + what}
	}
	return nil
}

// cslObject is what an item says, each array already capped.
type cslObject struct {
	text                     map[string]string
	authors, editors         []Name
	authorCount, editorCount int // elements of the arrays, before the cap
	year                     int
	date                     string
	tags                     []string
	hasType                  bool
	items                    []Item // the items of {"items": [...]}, at the top
}

// cslTextKeys are the keys read as text.
var cslTextKeys = setOf("id", "citation-key", "type", "title", "container-title", "event-title", "volume", "issue",
	"number", "page", "publisher", "DOI", "doi", "ISBN", "isbn", "ISSN", "issn", "URL", "url", "abstract", "language")

// object reads an item, its { read. At the top, an "items" array is read
// as the items it wraps.
func (r *cslReader) object(top bool) (cslObject, error) {
	o := cslObject{text: map[string]string{}}
	for r.dec.More() {
		tok, err := r.dec.Token()
		if err != nil {
			return o, err
		}
		key, _ := tok.(string)
		switch {
		case cslTextKeys[key]:
			o.text[key], err = r.text()
			o.hasType = o.hasType || key == "type"
		case key == "author":
			o.authors, o.authorCount, err = r.names()
		case key == "editor":
			o.editors, o.editorCount, err = r.names()
		case key == "issued":
			o.year, o.date, err = r.date()
		case key == "keyword":
			o.tags, err = r.keywords()
		case key == "items" && top:
			if tok, err = r.dec.Token(); err == nil {
				if tok == json.Delim('[') {
					o.items, err = r.items()
					if o.items == nil && err == nil {
						o.items = []Item{}
					}
				} else {
					err = r.skipRest(tok)
				}
			}
		default:
			err = r.skip()
		}
		if err != nil {
			return o, err
		}
	}
	_, err := r.dec.Token() // }
	return o, err
}

// toItem maps an item read at offset off, and names a list of names that
// was cut.
func (r *cslReader) toItem(o cslObject, off int) Item {
	it := cslItem(o)
	it.Clean()
	for _, c := range []struct {
		what  string
		count int
	}{{"authors", o.authorCount}, {"editors", o.editorCount}} {
		if c.count > maxNames && !r.errs.full() {
			r.errs.add(&ParseError{Format: "CSL-JSON", Line: r.lineAt(off), Key: it.ID,
				Msg: fmt.Sprintf("only the first %d of its %d %s were kept", maxNames, c.count, c.what)})
		}
	}
	return it
}

// lineAt is the 1-based line of offset off; offsets asked for only grow,
// so counting is linear in the file.
func (r *cslReader) lineAt(off int) int {
	off = max(0, min(off, len(r.src)))
	if off < r.lineOff {
		r.lineOff, r.lines = 0, 1
	}
	r.lines += strings.Count(r.src[r.lineOff:off], "\n")
	r.lineOff = off
	return r.lines
}

// jsonError says where the JSON broke, as a line a person can go to.
func (r *cslReader) jsonError(err error) error {
	var pe *ParseError
	if errors.As(err, &pe) {
		return err
	}
	offset := r.dec.InputOffset()
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

// cslItem maps one CSL-JSON item.
func cslItem(o cslObject) Item {
	str := func(keys ...string) string {
		for _, k := range keys {
			if v := o.text[k]; v != "" {
				return v
			}
		}
		return ""
	}
	it := Item{
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
	return it
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
