package bib

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
)

// The values of a CSL-JSON item, read from a json.Decoder token by token:
// an array is read element by element, the elements past its cap skipped
// as they come (each decoded into nothing), so that no array is held
// whole, and an element of the wrong kind is passed over, not an error.

// cslStream reads values from a decoder.
type cslStream struct{ dec *json.Decoder }

func newCSLStream(r io.Reader) cslStream {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	return cslStream{dec}
}

// skipValue is decoded into to pass a value over: the decoder checks its
// syntax and keeps nothing.
type skipValue struct{}

func (*skipValue) UnmarshalJSON([]byte) error { return nil }

// skip passes over the next value.
func (s cslStream) skip() error { return s.dec.Decode(&skipValue{}) }

// skipRest passes over what is left of the array or object whose first
// token was tok (nothing when tok was a whole value).
func (s cslStream) skipRest(tok json.Token) error {
	open, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	for s.dec.More() {
		if open == '{' {
			if _, err := s.dec.Token(); err != nil { // the key
				return err
			}
		}
		if err := s.skip(); err != nil {
			return err
		}
	}
	_, err := s.dec.Token()
	return err
}

// elements reads an array, its [ read: each of the first limit elements
// with read, the rest passed over. It returns how many there were.
func (s cslStream) elements(limit int, read func() error) (int, error) {
	n := 0
	for s.dec.More() {
		var err error
		if n < limit {
			err = read()
		} else {
			err = s.skip()
		}
		if err != nil {
			return n, err
		}
		n++
	}
	_, err := s.dec.Token() // ]
	return n, err
}

// text reads a string, a number (as written) or the first of those in an
// array (container-title is an array in some exports) as text; anything
// else is "".
func (s cslStream) text() (string, error) {
	tok, err := s.dec.Token()
	if err != nil {
		return "", err
	}
	return s.textFrom(tok)
}

func (s cslStream) textFrom(tok json.Token) (string, error) {
	switch v := tok.(type) {
	case string:
		return v, nil
	case json.Number:
		return v.String(), nil
	case json.Delim:
		if v != '[' {
			return "", s.skipRest(v)
		}
		first := ""
		_, err := s.elements(maxList, func() error {
			if first != "" {
				return s.skip()
			}
			var err error
			first, err = s.text()
			return err
		})
		return first, err
	}
	return "", nil // true, false, null
}

// keywords reads keyword: an array of tags, or one string of them
// separated by commas or semicolons.
func (s cslStream) keywords() ([]string, error) {
	tok, err := s.dec.Token()
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('[') {
		text, err := s.textFrom(tok)
		return splitList(text, ",;"), err
	}
	var out []string
	_, err = s.elements(maxList, func() error {
		t, err := s.text()
		if t != "" {
			out = append(out, t)
		}
		return err
	})
	return out, err
}

// names reads an author or editor list: the first maxNames names, and
// how many the list has.
func (s cslStream) names() ([]Name, int, error) {
	tok, err := s.dec.Token()
	if err != nil || tok != json.Delim('[') {
		return nil, 0, errors.Join(err, s.skipRest(tok))
	}
	var out []Name
	n, err := s.elements(maxNames, func() error {
		var v map[string]cslText
		if err := s.dec.Decode(&v); err != nil && !isTypeError(err) {
			return err
		}
		family := strings.Join(strings.Fields(string(v["dropping-particle"]+" "+v["non-dropping-particle"]+" "+v["family"])), " ")
		name := Name{Family: family, Given: string(v["given"]), Suffix: string(v["suffix"]), Literal: string(v["literal"])}
		if name.Literal == "" && name.Family == "" && name.Given == "" {
			name.Literal = string(v["name"])
		}
		out = append(out, name)
		return nil
	})
	return out, n, err
}

// isTypeError says a value was of the wrong kind for what it was decoded
// into: it was read past all the same, so reading can go on.
func isTypeError(err error) bool {
	var te *json.UnmarshalTypeError
	return errors.As(err, &te)
}

// cslText is a value of a name read as text (text's rules).
type cslText string

func (t *cslText) UnmarshalJSON(b []byte) error {
	var s string
	switch b[0] { // b is one valid JSON value: the decoder checked it
	case '"':
		_ = json.Unmarshal(b, &s)
	case '[':
		s, _ = newCSLStream(bytes.NewReader(b)).text()
	case '{', 't', 'f', 'n':
	default:
		s = string(b) // a number, as written
	}
	*t = cslText(s)
	return nil
}

// date reads issued: date parts (of numbers or strings, a range as two
// parts), or else raw, edtf or literal text; a string or an array is read
// as text.
func (s cslStream) date() (int, string, error) {
	tok, err := s.dec.Token()
	if err != nil {
		return 0, "", err
	}
	if tok != json.Delim('{') {
		text, err := s.textFrom(tok)
		y, d := ParseDate(text)
		return y, d, err
	}
	var parts [][]string
	var texts [3]string // edtf, raw, literal, in the order they are tried
	for s.dec.More() {
		tok, err := s.dec.Token()
		if err != nil {
			return 0, "", err
		}
		key, _ := tok.(string)
		switch strings.ToLower(key) {
		case "date-parts":
			parts, err = s.dateParts()
		case "edtf":
			texts[0], err = s.text()
		case "raw":
			texts[1], err = s.text()
		case "literal":
			texts[2], err = s.text()
		default:
			err = s.skip()
		}
		if err != nil {
			return 0, "", err
		}
	}
	if _, err := s.dec.Token(); err != nil { // }
		return 0, "", err
	}
	if y, d := datePartsDate(parts); y > 0 {
		return y, d, nil
	}
	for _, t := range texts {
		if y, date := ParseDate(t); y > 0 {
			return y, date, nil
		}
	}
	return 0, "", nil
}

// dateParts reads the first two parts of date-parts (a range's two ends)
// and the first three numbers of each (year, month, day), as text.
func (s cslStream) dateParts() ([][]string, error) {
	tok, err := s.dec.Token()
	if err != nil || tok != json.Delim('[') {
		return nil, errors.Join(err, s.skipRest(tok))
	}
	var parts [][]string
	_, err = s.elements(2, func() error {
		tok, err := s.dec.Token()
		if err != nil || tok != json.Delim('[') {
			return errors.Join(err, s.skipRest(tok))
		}
		var part []string
		_, err = s.elements(3, func() error {
			t, err := s.text()
			part = append(part, t)
			return err
		})
		parts = append(parts, part)
		return err
	})
	return parts, err
}

// datePartsDate is the year and ISO-like date of date parts; a range
// whose ends differ is "start/end".
func datePartsDate(parts [][]string) (int, string) {
	var ends []string
	year := 0
	for _, p := range parts {
		nums := make([]int, 0, 3)
		for _, f := range p {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				break
			}
			nums = append(nums, n)
		}
		if len(nums) == 0 || nums[0] <= 0 || nums[0] > 9999 {
			continue
		}
		d := yearString(nums[0])
		if len(nums) > 1 && nums[1] >= 1 && nums[1] <= 12 {
			d += "-" + twoDigits(nums[1])
			if len(nums) > 2 && nums[2] >= 1 && nums[2] <= 31 {
				d += "-" + twoDigits(nums[2])
			}
		}
		if year == 0 {
			year = nums[0]
		}
		ends = append(ends, d)
	}
	switch {
	case len(ends) == 2 && ends[0] != ends[1]:
		return year, ends[0] + "/" + ends[1]
	case len(ends) > 0:
		return year, ends[0]
	}
	return 0, ""
}
