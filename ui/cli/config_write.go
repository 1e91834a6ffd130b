package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"

	"github.com/researchtui/researchtui/ui"
)

// The TUI remembers the theme chosen with t (the top-level `theme`) and the
// last model, depth and sources of its new-research form (`model`, `depth`
// and `sources` under [tui], so they change what the form offers, not what `researchtui
// run` does).
//
// go-toml/v2 cannot do this by decoding and re-encoding: measured with
// v2.4.3, a round trip through a map or a struct drops every comment (and
// through a struct, every key the struct lacks). So the file's text is
// edited in place: the parser (go-toml's unstable package) locates each key,
// only that value's bytes are replaced, and a missing key is inserted after
// the last key of its table. The result is parsed again and must equal the
// old document with exactly the new values, or nothing is written.

// tomlEdit sets one key: key in table ("" is the top level) to value, a
// string or a []string.
type tomlEdit struct {
	table, key string
	value      any
}

// saveSettings writes what the TUI remembers to the config file at path,
// creating the file and its directory when missing.
func saveSettings(path string, s ui.Settings) error {
	var edits []tomlEdit
	if s.Theme != "" {
		edits = append(edits, tomlEdit{key: "theme", value: s.Theme})
	}
	if s.Form != nil {
		srcs := s.Form.Sources
		if srcs == nil {
			srcs = []string{}
		}
		if s.Form.Model != "" {
			edits = append(edits, tomlEdit{table: "tui", key: "model", value: s.Form.Model})
		}
		if s.Form.Kind != "" {
			edits = append(edits, tomlEdit{table: "tui", key: "kind", value: s.Form.Kind})
		}
		if s.Form.Language != "" || s.Form.Kind != "" { // "" is English: written once the form was used
			edits = append(edits, tomlEdit{table: "tui", key: "language", value: s.Form.Language})
		}
		if s.Form.ReviewPlan != "" {
			edits = append(edits, tomlEdit{table: "tui", key: "review_plan", value: s.Form.ReviewPlan})
		}
		edits = append(edits, tomlEdit{table: "tui", key: "depth", value: s.Form.Depth}, tomlEdit{table: "tui", key: "sources", value: srcs})
	}
	if len(edits) == 0 {
		return nil
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real // a dotfile manager's link stays a link
	}
	src, err := os.ReadFile(path)
	mode := fs.FileMode(0o600) // the file may hold an API key
	switch {
	case errors.Is(err, fs.ErrNotExist):
		src = []byte("# researchtui configuration; see `researchtui dirs` and the README.\n")
	case err != nil:
		return err
	default:
		if fi, err := os.Stat(path); err == nil {
			mode = fi.Mode().Perm()
		}
	}
	out, err := editTOML(src, edits)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if bytes.Equal(out, src) {
		return nil
	}
	return writeFileAtomic(path, out, mode)
}

// writeFileAtomic replaces path with data through a temporary file in the
// same directory, so a crash leaves the old file or the new, never half.
func writeFileAtomic(path string, data []byte, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".config-*.toml")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after a successful rename there is nothing to remove
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp, mode); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// tomlTable is where a table's keys are, for inserting new ones.
type tomlTable struct {
	insertAt int  // just after the line of its last key (or of its header)
	dotted   bool // defined only by dotted keys above any header (a.b = …)
}

// editTOML returns src with every edit applied and nothing else changed.
func editTOML(src []byte, edits []tomlEdit) ([]byte, error) {
	nl := "\n"
	if bytes.Contains(src, []byte("\r\n")) {
		nl = "\r\n"
	}
	type span struct{ start, end int }
	found := make([]*span, len(edits))
	tables := map[string]*tomlTable{}
	rootEnd, firstHeader := -1, -1
	current := ""
	inArray := false // under a [[array]] header: nothing there is ours

	var p unstable.Parser
	p.Reset(src)
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			parts, last := keyParts(e.Key())
			start := lineStart(src, bytes.LastIndexByte(src[:last], '['))
			if firstHeader < 0 {
				firstHeader = start
			}
			current, inArray = strings.Join(parts, "."), e.Kind == unstable.ArrayTable
			if !inArray {
				tables[current] = &tomlTable{insertAt: lineEnd(src, last)}
			}
		case unstable.KeyValue:
			parts, last := keyParts(e.Key())
			end := int(e.Raw.Offset + e.Raw.Length)
			if inArray {
				continue
			}
			if current == "" {
				rootEnd = lineEnd(src, end)
				if len(parts) > 1 {
					name := strings.Join(parts[:len(parts)-1], ".")
					if tables[name] == nil {
						tables[name] = &tomlTable{dotted: true}
					}
					if t := tables[name]; t.dotted {
						t.insertAt = lineEnd(src, end)
					}
				}
			} else {
				tables[current].insertAt = lineEnd(src, end)
			}
			path := strings.Join(parts, ".")
			if current != "" {
				path = current + "." + path
			}
			for i, ed := range edits {
				if path == joinPath(ed.table, ed.key) {
					found[i] = &span{start: valueStart(src, last), end: end}
				}
			}
		}
	}
	if err := p.Error(); err != nil {
		return nil, fmt.Errorf("not valid TOML, left as it is: %w", err)
	}

	// Insertions, grouped by offset so keys of one table stay in order.
	type insertion struct {
		at   int
		text string
	}
	var ins []insertion
	add := func(at int, text string) {
		for i := range ins {
			if ins[i].at == at {
				ins[i].text += text
				return
			}
		}
		ins = append(ins, insertion{at: at, text: text})
	}
	var newTables []string
	newKeys := map[string][]string{}
	for i, ed := range edits {
		val := tomlValue(ed.value)
		if found[i] != nil {
			ins = append(ins, insertion{at: found[i].start, text: val})
			continue
		}
		line := ed.key + " = " + val + nl
		switch t := tables[ed.table]; {
		case ed.table == "" && rootEnd >= 0:
			add(rootEnd, line)
		case ed.table == "" && firstHeader >= 0:
			// Above the first header and the comment block that belongs to it.
			add(commentBlockStart(src, firstHeader), line+nl)
		case ed.table == "":
			add(len(src), line)
		case t != nil && t.dotted:
			add(t.insertAt, ed.table+"."+line)
		case t != nil:
			add(t.insertAt, line)
		default:
			if newKeys[ed.table] == nil {
				newTables = append(newTables, ed.table)
			}
			newKeys[ed.table] = append(newKeys[ed.table], line)
		}
	}
	for _, name := range newTables {
		add(len(src), nl+"["+name+"]"+nl+strings.Join(newKeys[name], ""))
	}

	// Apply from the end so earlier offsets stay valid.
	replaced := map[int]int{}
	for i := range edits {
		if found[i] != nil {
			replaced[found[i].start] = found[i].end
		}
	}
	sort.SliceStable(ins, func(i, j int) bool { return ins[i].at > ins[j].at })
	out := append([]byte(nil), src...)
	for _, in := range ins {
		end := in.at
		if e, ok := replaced[in.at]; ok {
			end = e
		}
		text := in.text
		if end == in.at && in.at == len(out) && in.at > 0 && out[in.at-1] != '\n' {
			text = nl + text // the file did not end with a newline
		}
		out = append(out[:in.at], append([]byte(text), out[end:]...)...)
	}
	if err := checkEdited(src, out, edits); err != nil {
		return nil, err
	}
	return out, nil
}

// checkEdited parses both versions: the new one must be the old one with
// exactly the edits applied.
func checkEdited(before, after []byte, edits []tomlEdit) error {
	var want, got map[string]any
	if err := toml.Unmarshal(before, &want); err != nil {
		return fmt.Errorf("not valid TOML, left as it is: %w", err)
	}
	if want == nil {
		want = map[string]any{}
	}
	for _, ed := range edits {
		tbl := want
		if ed.table != "" {
			for _, part := range strings.Split(ed.table, ".") {
				sub, ok := tbl[part].(map[string]any)
				if !ok {
					sub = map[string]any{}
					tbl[part] = sub
				}
				tbl = sub
			}
		}
		switch v := ed.value.(type) {
		case []string:
			arr := make([]any, len(v))
			for i, s := range v {
				arr[i] = s
			}
			tbl[ed.key] = arr
		default:
			tbl[ed.key] = v
		}
	}
	if err := toml.Unmarshal(after, &got); err != nil {
		return fmt.Errorf("could not edit it safely (%v); left as it is", err)
	}
	if got == nil {
		got = map[string]any{}
	}
	if !reflect.DeepEqual(want, got) {
		return errors.New("could not edit it safely (its layout is unusual); left as it is")
	}
	return nil
}

// keyParts returns a key's parts (unquoted) and the offset just past it.
func keyParts(it unstable.Iterator) ([]string, int) {
	var parts []string
	end := 0
	for it.Next() {
		n := it.Node()
		parts = append(parts, string(n.Data))
		end = int(n.Raw.Offset + n.Raw.Length)
	}
	return parts, end
}

func joinPath(table, key string) string {
	if table == "" {
		return key
	}
	return table + "." + key
}

// valueStart is where a value begins: past the key's end, `=` and blanks.
func valueStart(src []byte, keyEnd int) int {
	i := keyEnd
	for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
		i++
	}
	if i < len(src) && src[i] == '=' {
		i++
	}
	for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
		i++
	}
	return i
}

// lineEnd is the offset just past the newline that ends the line holding
// offset (a trailing comment included), or the end of the input.
func lineEnd(src []byte, offset int) int {
	if i := bytes.IndexByte(src[offset:], '\n'); i >= 0 {
		return offset + i + 1
	}
	return len(src)
}

func lineStart(src []byte, offset int) int {
	return bytes.LastIndexByte(src[:offset], '\n') + 1
}

// commentBlockStart moves up from a line start over the comment lines
// directly above it.
func commentBlockStart(src []byte, start int) int {
	for start > 0 {
		prev := lineStart(src, start-1)
		if !bytes.HasPrefix(bytes.TrimLeft(src[prev:start], " \t"), []byte("#")) {
			break
		}
		start = prev
	}
	return start
}

// tomlValue writes a string or a list of strings as TOML.
func tomlValue(v any) string {
	switch v := v.(type) {
	case string:
		return tomlString(v)
	case []string:
		q := make([]string, len(v))
		for i, s := range v {
			q[i] = tomlString(s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	}
	panic(fmt.Sprintf("tomlValue: %T", v))
}

// tomlString is a TOML basic string: quotes and backslashes escaped, control
// characters as \u escapes.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			b.WriteString(`\u` + fmt.Sprintf("%04x", r))
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
