package bib

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// ReadCSLJSON reads CSL-JSON as Zotero and Better BibTeX export it: an
// array of items, or one item alone. Values are read leniently, as tools
// disagree (a volume of 28 or "28", date parts of 2019 or "2019"). Bad
// JSON is an error naming its line; an element that is not an item is
// skipped, and the error names the first such element while the items
// read are still returned.
func ReadCSLJSON(data []byte) ([]Item, error) {
	if len(data) > MaxInput {
		return nil, tooLarge("CSL-JSON", len(data))
	}
	text := decodeInput(data)
	trimmed := strings.TrimSpace(text)
	if trimmed == "" {
		return nil, nil
	}
	if trimmed[0] == '{' {
		var obj map[string]json.RawMessage
		if err := unmarshal(text, &obj); err != nil {
			return nil, err
		}
		if list, ok := obj["items"]; ok && obj["type"] == nil && bytes.HasPrefix(bytes.TrimSpace(list), []byte("[")) {
			return ReadCSLJSON(list) // {"items": [...]}, as some APIs wrap them
		}
		it := cslItem(obj)
		it.Clean()
		return []Item{it}, nil
	}
	if trimmed[0] != '[' {
		return nil, &ParseError{Format: "CSL-JSON", Line: 1, Msg: "expected an array of items ([...]) or one item ({...})"}
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil {
		return nil, jsonError(text, dec.InputOffset(), err)
	}
	var items []Item
	var skipped error
	for n := 1; dec.More(); n++ {
		if len(items) == MaxItems {
			return items, tooMany("CSL-JSON", lineOf(text, int(dec.InputOffset())))
		}
		start := dec.InputOffset()
		var obj map[string]json.RawMessage
		err := dec.Decode(&obj)
		if err == nil && obj == nil {
			err = &json.UnmarshalTypeError{Value: "null"}
		}
		if err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				if skipped == nil {
					skipped = &ParseError{Format: "CSL-JSON", Line: lineOf(text, int(start)+1), Msg: fmt.Sprintf("item %d is not an object, and was skipped", n)}
				}
				continue
			}
			return items, jsonError(text, dec.InputOffset(), err)
		}
		it := cslItem(obj)
		it.Clean()
		items = append(items, it)
	}
	if _, err := dec.Token(); err != nil {
		return items, jsonError(text, dec.InputOffset(), err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return items, &ParseError{Format: "CSL-JSON", Line: lineOf(text, int(dec.InputOffset())), Msg: "not valid JSON: text after the end of the array"}
	}
	return items, skipped
}

func unmarshal(text string, v any) error {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return jsonError(text, dec.InputOffset(), err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return &ParseError{Format: "CSL-JSON", Line: lineOf(text, int(dec.InputOffset())), Msg: "not valid JSON: text after the end of the item"}
	}
	return nil
}

// jsonError says where the JSON broke, as a line a person can go to.
func jsonError(text string, offset int64, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		offset = se.Offset
	}
	msg := err.Error()
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		msg = "the file ends in the middle of the JSON"
	}
	return &ParseError{Format: "CSL-JSON", Line: lineOf(text, int(offset)), Msg: "not valid JSON: " + msg}
}

func lineOf(text string, offset int) int {
	return strings.Count(text[:max(0, min(offset, len(text)))], "\n") + 1
}

// cslItem maps one CSL-JSON item.
func cslItem(obj map[string]json.RawMessage) Item {
	str := func(keys ...string) string {
		for _, k := range keys {
			if v := jsonString(obj[k]); v != "" {
				return v
			}
		}
		return ""
	}
	it := Item{
		ID:        str("id", "citation-key"),
		Type:      strings.ToLower(str("type")),
		Title:     stripMarkup(str("title")),
		Authors:   cslNames(obj["author"]),
		Editors:   cslNames(obj["editor"]),
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
	}
	it.Year, it.Date = cslDate(obj["issued"])
	if kw := obj["keyword"]; len(kw) > 0 && kw[0] == '[' {
		it.Tags = jsonStrings(kw)
	} else {
		it.Tags = splitList(jsonString(kw), ",;")
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

// jsonString reads a string, a number or the first string of an array
// (container-title is an array in some exports) as text.
func jsonString(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	case '[':
		if list := jsonStrings(raw); len(list) > 0 {
			return list[0]
		}
	case 't', 'f', 'n', '{':
		return ""
	default:
		return string(raw) // a number, as written
	}
	return ""
}

func jsonStrings(raw json.RawMessage) []string {
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return nil
	}
	var out []string
	for _, v := range list[:min(len(list), maxList)] {
		if s := jsonString(v); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func cslNames(raw json.RawMessage) []Name {
	var list []map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &list) != nil {
		return nil
	}
	var out []Name
	for _, n := range list[:min(len(list), maxNames)] {
		family := strings.Join(strings.Fields(strings.Join([]string{
			jsonString(n["dropping-particle"]), jsonString(n["non-dropping-particle"]), jsonString(n["family"])}, " ")), " ")
		name := Name{Family: family, Given: jsonString(n["given"]), Suffix: jsonString(n["suffix"]), Literal: jsonString(n["literal"])}
		if name.Literal == "" && name.Family == "" && name.Given == "" {
			name.Literal = jsonString(n["name"])
		}
		out = append(out, name)
	}
	return out
}

// cslDate reads issued: date-parts (of numbers or strings, a range as two
// parts), or else raw, edtf or literal text.
func cslDate(raw json.RawMessage) (int, string) {
	if len(raw) == 0 {
		return 0, ""
	}
	var d struct {
		DateParts [][]json.RawMessage `json:"date-parts"`
		Raw       json.RawMessage     `json:"raw"`
		EDTF      json.RawMessage     `json:"edtf"`
		Literal   json.RawMessage     `json:"literal"`
	}
	if json.Unmarshal(raw, &d) != nil {
		s := jsonString(raw) // "issued": "2019-03-04"
		return ParseDate(s)
	}
	var ends []string
	year := 0
	for _, parts := range d.DateParts[:min(len(d.DateParts), 2)] {
		nums := make([]int, 0, 3)
		for _, p := range parts[:min(len(parts), 3)] {
			n, err := strconv.Atoi(strings.TrimSpace(jsonString(p)))
			if err != nil {
				break
			}
			nums = append(nums, n)
		}
		if len(nums) == 0 || nums[0] <= 0 || nums[0] > 9999 {
			continue
		}
		s := yearString(nums[0])
		if len(nums) > 1 && nums[1] >= 1 && nums[1] <= 12 {
			s += "-" + twoDigits(nums[1])
			if len(nums) > 2 && nums[2] >= 1 && nums[2] <= 31 {
				s += "-" + twoDigits(nums[2])
			}
		}
		if year == 0 {
			year = nums[0]
		}
		ends = append(ends, s)
	}
	switch {
	case len(ends) == 2 && ends[0] != ends[1]:
		return year, ends[0] + "/" + ends[1]
	case len(ends) > 0:
		return year, ends[0]
	}
	for _, r := range []json.RawMessage{d.EDTF, d.Raw, d.Literal} {
		if y, date := ParseDate(jsonString(r)); y > 0 {
			return y, date
		}
	}
	return 0, ""
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
