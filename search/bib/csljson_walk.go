package bib

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// CSL-JSON values read from bytes that are valid JSON already (json.Valid
// or a json.Decoder said so), walked in place: an array is split into its
// elements without decoding them, the elements past a cap are only
// stepped over, and just the strings kept are decoded. A file of a
// million authors costs its own bytes and the names kept, no more, and a
// hundred thousand items no decoder tokens (json.Decoder's Token costs
// two allocations a string).

// skipSpace is the index of the first byte at or after i that is not
// JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// valueEnd is the index just after the value that starts at b[i].
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return len(b)
	}
	switch b[i] {
	case '"':
		for i++; i < len(b); i++ {
			switch b[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
	case '[', '{':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = valueEnd(b, i) - 1
			case '[', '{':
				depth++
			case ']', '}':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
	default: // a number, true, false or null
		for i < len(b) && strings.IndexByte(",]} \t\r\n", b[i]) < 0 {
			i++
		}
		return i
	}
	return len(b)
}

// eachElement calls f with the bounds of each element of the array that
// starts at b[i], until f returns false.
func eachElement(b []byte, i int, f func(start, end int) bool) {
	i = skipSpace(b, i+1)
	for i < len(b) && b[i] != ']' {
		end := valueEnd(b, i)
		if !f(i, end) {
			return
		}
		if i = skipSpace(b, end); i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
}

// eachMember calls f with the key (as written, quoted) and the value's
// bounds of each member of the object that starts at b[i].
func eachMember(b []byte, i int, f func(key []byte, start, end int)) {
	i = skipSpace(b, i+1)
	for i < len(b) && b[i] == '"' {
		keyEnd := valueEnd(b, i)
		key := b[i:keyEnd]
		start := skipSpace(b, skipSpace(b, keyEnd)+1) // after the colon
		end := valueEnd(b, start)
		f(key, start, end)
		if i = skipSpace(b, end); i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
}

// jsonKey is an object key unquoted (a slice of raw when it has no
// escapes, as keys have).
func jsonKey(raw []byte) []byte {
	if bytes.IndexByte(raw, '\\') < 0 && len(raw) >= 2 {
		return raw[1 : len(raw)-1]
	}
	var s string
	_ = json.Unmarshal(raw, &s) // valid JSON: it decodes
	return []byte(s)
}

// jsonText reads the value at b[start:end] as text: a string, a number as
// written, or the first of those in an array (container-title is an array
// in some exports); anything else is "".
func jsonText(b []byte, start, end int) string {
	if start >= end {
		return ""
	}
	switch b[start] {
	case '"':
		if end-start < 2 {
			return ""
		}
		inner := b[start+1 : end-1]
		if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
			return string(inner)
		}
		var s string
		_ = json.Unmarshal(b[start:end], &s) // as encoding/json reads it: escapes, U+FFFD for bad UTF-8
		return s
	case '[':
		text, n := "", 0
		eachElement(b, start, func(s, e int) bool {
			text = jsonText(b, s, e)
			n++
			return text == "" && n < maxList
		})
		return text
	case '{', 't', 'f', 'n':
		return ""
	}
	return string(b[start:end])
}

// jsonNames reads an author or editor list: the first maxNames names,
// and how many the list has.
func jsonNames(b []byte, start, end int) ([]Name, int) {
	if start >= end || b[start] != '[' {
		return nil, 0
	}
	var out []Name
	n := 0
	eachElement(b, start, func(s, e int) bool {
		if n++; n > maxNames || b[s] != '{' {
			return true // counted, not read
		}
		var family, particle, dropping, org string
		var name Name
		eachMember(b, s, func(key []byte, s, e int) {
			switch string(jsonKey(key)) {
			case "family":
				family = jsonText(b, s, e)
			case "non-dropping-particle":
				particle = jsonText(b, s, e)
			case "dropping-particle":
				dropping = jsonText(b, s, e)
			case "given":
				name.Given = jsonText(b, s, e)
			case "suffix":
				name.Suffix = jsonText(b, s, e)
			case "literal":
				name.Literal = jsonText(b, s, e)
			case "name":
				org = jsonText(b, s, e) // an organisation, in some exports
			}
		})
		name.Family = strings.Join(strings.Fields(dropping+" "+particle+" "+family), " ")
		if name.Literal == "" && name.Family == "" && name.Given == "" {
			name.Literal = org
		}
		out = append(out, name)
		return true
	})
	return out, n
}

// jsonKeywords reads keyword: an array of tags, or one string of them
// separated by commas or semicolons.
func jsonKeywords(b []byte, start, end int) []string {
	if start >= end || b[start] != '[' {
		return splitList(jsonText(b, start, end), ",;")
	}
	var out []string
	n := 0
	eachElement(b, start, func(s, e int) bool {
		if t := jsonText(b, s, e); t != "" {
			out = append(out, t)
		}
		n++
		return n < maxList
	})
	return out
}

// jsonDate reads issued: date parts (of numbers or strings, a range as two
// parts), or else edtf, raw or literal text; a string or an array is read
// as text.
func jsonDate(b []byte, start, end int) (int, string) {
	if start >= end || b[start] != '{' {
		return ParseDate(jsonText(b, start, end))
	}
	var parts [][]string
	var texts [3]string // edtf, raw, literal: the order they are tried in
	eachMember(b, start, func(key []byte, s, e int) {
		switch strings.ToLower(string(jsonKey(key))) {
		case "date-parts":
			parts = jsonDateParts(b, s, e)
		case "edtf":
			texts[0] = jsonText(b, s, e)
		case "raw":
			texts[1] = jsonText(b, s, e)
		case "literal":
			texts[2] = jsonText(b, s, e)
		}
	})
	if y, d := datePartsDate(parts); y > 0 {
		return y, d
	}
	for _, t := range texts {
		if y, d := ParseDate(t); y != 0 {
			return y, d
		}
	}
	return 0, ""
}

// jsonDateParts reads the first two parts of date-parts (a range's two
// ends) and the first three values of each (year, month, day), as text.
func jsonDateParts(b []byte, start, end int) [][]string {
	if start >= end || b[start] != '[' {
		return nil
	}
	var parts [][]string
	eachElement(b, start, func(s, e int) bool {
		var part []string
		if b[s] == '[' {
			eachElement(b, s, func(s, e int) bool {
				part = append(part, jsonText(b, s, e))
				return len(part) < 3
			})
		}
		parts = append(parts, part)
		return len(parts) < 2
	})
	return parts
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
