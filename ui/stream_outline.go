package ui

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// An agent that answers in JSON (planner, analysts, screener, reflector,
// reviewer) streams braces, quotes and escapes a person cannot read while
// they arrive. outlineJSON turns such an answer, cut off wherever the
// stream has got to, into indented text: a key and its scalar on one line
// ("confidence: 0.82"), a list as bullets, an object in a list as one
// bullet of its values ("clarity · Executive summary · State how…").
// It never fails: whatever has arrived is shown, the rest waits for the
// next token. Text that does not start as JSON is left to be shown raw.

// outlineJSON renders s as an outline; false when s is not a JSON answer.
func outlineJSON(s string) (string, bool) {
	t := strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(t, "```"); ok { // a fenced answer
		t = strings.TrimSpace(strings.TrimPrefix(rest, "json"))
	}
	if t == "" || (t[0] != '{' && t[0] != '[') {
		return "", false
	}
	o := &outliner{s: t}
	o.value(0, "", false)
	return strings.Join(o.lines, "\n"), true
}

type outliner struct {
	s     string
	i     int
	lines []string
}

func (o *outliner) emit(indent int, text string) {
	o.lines = append(o.lines, strings.Repeat("  ", indent)+text)
}

func (o *outliner) skipSpace() {
	for o.i < len(o.s) && strings.IndexByte(" \t\r\n", o.s[o.i]) >= 0 {
		o.i++
	}
}

func (o *outliner) eof() bool { return o.i >= len(o.s) }

// value renders one value: under label when it is an object's field, as a
// bullet when it is a list's element.
func (o *outliner) value(indent int, label string, inList bool) {
	o.skipSpace()
	if o.eof() {
		if label != "" {
			o.emit(indent, label+":")
		}
		return
	}
	switch o.s[o.i] {
	case '{':
		o.i++
		if inList {
			o.listedObject(indent)
			return
		}
		child := indent
		if label != "" {
			o.emit(indent, label)
			child++
		}
		o.fields(child, nil)
	case '[':
		o.i++
		child := indent
		if label != "" {
			o.emit(indent, label)
			child++
		}
		o.elements(child)
	default:
		v, ok := o.scalar()
		if !ok {
			return
		}
		switch {
		case inList:
			o.emit(indent, "• "+v)
		case label != "":
			o.emit(indent, label+": "+v)
		default:
			o.emit(indent, v)
		}
	}
}

// fields renders an object's fields after its '{' up to its '}' or the end
// of what has arrived. With parts set (an object in a list), scalar fields
// are collected there instead of shown one per line.
func (o *outliner) fields(indent int, parts *[]string) {
	for {
		o.skipSpace()
		if o.eof() {
			return
		}
		switch o.s[o.i] {
		case '}':
			o.i++
			return
		case ',':
			o.i++
			continue
		case '"':
		default:
			o.i++ // junk between fields: skipped
			continue
		}
		key, done := o.str()
		if !done {
			return // the key is still arriving
		}
		o.skipSpace()
		if !o.eof() && o.s[o.i] == ':' {
			o.i++
		}
		label := humanKey(key)
		o.skipSpace()
		if parts != nil && o.eof() {
			return // the bullet shows what has arrived; the field is still to come
		}
		if parts != nil && !o.eof() && o.s[o.i] != '{' && o.s[o.i] != '[' {
			if v, ok := o.scalar(); ok && v != "" {
				*parts = append(*parts, v)
			}
			continue
		}
		if parts != nil && len(*parts) > 0 {
			o.emit(indent-1, "• "+strings.Join(*parts, " · "))
			*parts = nil
		}
		o.value(indent, label, false)
	}
}

// listedObject renders an object that is a list's element as one bullet
// of its scalar values (its nested lists and objects below it).
// A model may write an object's lists before its scalars ("queries"
// before "question"): the bullet then still comes first, above the lists
// that belong to it.
func (o *outliner) listedObject(indent int) {
	var parts []string
	start := len(o.lines)
	o.fields(indent+1, &parts)
	if len(parts) == 0 {
		return
	}
	bullet := strings.Repeat("  ", indent) + "• "
	for _, l := range o.lines[start:] {
		if strings.HasPrefix(l, bullet) {
			o.emit(indent, "• "+strings.Join(parts, " · ")) // the rest of a bullet shown above
			return
		}
	}
	o.lines = append(o.lines[:start], append([]string{bullet + strings.Join(parts, " · ")}, o.lines[start:]...)...)
}

// elements renders a list's elements after its '[' up to its ']' or the
// end of what has arrived.
func (o *outliner) elements(indent int) {
	for {
		o.skipSpace()
		if o.eof() {
			return
		}
		switch o.s[o.i] {
		case ']':
			o.i++
			return
		case ',':
			o.i++
			continue
		}
		before := o.i
		o.value(indent, "", true)
		if o.i == before {
			o.i++ // a byte no value starts with: skipped
		}
	}
}

// scalar reads a string, number, true, false or null as the text to show
// (false when nothing could be read).
func (o *outliner) scalar() (string, bool) {
	if o.s[o.i] == '"' {
		v, _ := o.str() // a string still arriving is shown as far as it goes
		return v, true
	}
	start := o.i
	for o.i < len(o.s) && strings.IndexByte(",}] \t\r\n", o.s[o.i]) < 0 {
		o.i++
	}
	switch lit := o.s[start:o.i]; lit {
	case "":
		return "", false
	case "true":
		return "yes", true
	case "false":
		return "no", true
	case "null":
		return "—", true
	default:
		return lit, true
	}
}

// str reads a JSON string at o.i (its opening quote) with its escapes
// decoded; done is false when its closing quote has not arrived yet.
func (o *outliner) str() (s string, done bool) {
	o.i++ // the opening quote
	var b strings.Builder
	for o.i < len(o.s) {
		c := o.s[o.i]
		switch {
		case c == '"':
			o.i++
			return b.String(), true
		case c == '\\':
			if o.i+1 >= len(o.s) {
				o.i = len(o.s)
				return b.String(), false
			}
			esc := o.s[o.i+1]
			o.i += 2
			switch esc {
			case 'n', 'r', 't':
				b.WriteByte(' ')
			case 'u':
				if o.i+4 > len(o.s) {
					o.i = len(o.s)
					return b.String(), false
				}
				if r, err := strconv.ParseUint(o.s[o.i:o.i+4], 16, 32); err == nil && utf8.ValidRune(rune(r)) {
					b.WriteRune(rune(r))
				}
				o.i += 4
			default: // \" \\ \/ and anything else: the character itself
				b.WriteByte(esc)
			}
		default:
			b.WriteByte(c)
			o.i++
		}
	}
	return b.String(), false
}

// humanKey turns a schema key into words: "key_findings" → "key findings".
func humanKey(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "_", " "), "-", " ")
}
