package ui

import (
	"strings"
	"unicode"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/researchtui/researchtui/themes"
)

// lineInput is a one-line text field. bubbles/textinput would do, but it
// pulls in a clipboard module this build does not carry (go.sum has no
// github.com/atotto/clipboard), and the UI needs only editing, not the
// clipboard: paste arrives as tea.PasteMsg anyway.
type lineInput struct {
	value       []rune
	pos         int
	width       int
	placeholder string
	focused     bool
	limit       int
	text, hint  lipgloss.Style
	cursor      lipgloss.Style
}

func newInput(st *themes.Styles, placeholder string, width int) lineInput {
	cur := lipgloss.NewStyle().Reverse(true)
	return lineInput{placeholder: placeholder, width: width, text: st.Text, hint: st.Subtle, cursor: cur}
}

func (in *lineInput) Value() string  { return string(in.value) }
func (in *lineInput) SetWidth(w int) { in.width = w }
func (in *lineInput) Blur()          { in.focused = false }
func (in *lineInput) CursorEnd()     { in.pos = len(in.value) }
func (in *lineInput) Focus() tea.Cmd { in.focused = true; return nil }
func (in *lineInput) SetValue(s string) {
	in.value = []rune(sanitizeLine(s))
	in.clampLimit()
	in.pos = len(in.value)
}
func (in *lineInput) Insert(s string) { in.insert([]rune(sanitizeLine(s))) }
func (in *lineInput) clampLimit() {
	if in.limit > 0 && len(in.value) > in.limit {
		in.value = in.value[:in.limit]
	}
}

func (in *lineInput) insert(rs []rune) {
	if in.limit > 0 && len(in.value)+len(rs) > in.limit {
		rs = rs[:max(in.limit-len(in.value), 0)]
	}
	v := make([]rune, 0, len(in.value)+len(rs))
	v = append(v, in.value[:in.pos]...)
	v = append(v, rs...)
	v = append(v, in.value[in.pos:]...)
	in.value = v
	in.pos += len(rs)
}

// Update edits the value with the usual readline keys (eKeys); any other
// key with text types it.
func (in *lineInput) Update(msg tea.KeyPressMsg) {
	switch {
	case key.Matches(msg, eKeys.Left):
		in.pos = max(in.pos-1, 0)
	case key.Matches(msg, eKeys.Right):
		in.pos = min(in.pos+1, len(in.value))
	case key.Matches(msg, eKeys.Home):
		in.pos = 0
	case key.Matches(msg, eKeys.End):
		in.pos = len(in.value)
	case key.Matches(msg, eKeys.Backspace):
		if in.pos > 0 {
			in.value = append(in.value[:in.pos-1], in.value[in.pos:]...)
			in.pos--
		}
	case key.Matches(msg, eKeys.Delete):
		if in.pos < len(in.value) {
			in.value = append(in.value[:in.pos], in.value[in.pos+1:]...)
		}
	case key.Matches(msg, eKeys.KillStart):
		in.value = in.value[in.pos:]
		in.pos = 0
	case key.Matches(msg, eKeys.KillEnd):
		in.value = in.value[:in.pos]
	case key.Matches(msg, eKeys.KillWord):
		i := in.pos
		for i > 0 && unicode.IsSpace(in.value[i-1]) {
			i--
		}
		for i > 0 && !unicode.IsSpace(in.value[i-1]) {
			i--
		}
		in.value = append(in.value[:i], in.value[in.pos:]...)
		in.pos = i
	case msg.String() == "space":
		in.insert([]rune{' '})
	default:
		if isText(msg) {
			in.insert([]rune(sanitizeLine(msg.Text)))
		}
	}
}

// isText reports whether a key types text: it has printable text and no
// modifier but shift.
func isText(msg tea.KeyPressMsg) bool {
	if msg.Text == "" || msg.Mod&^tea.ModShift != 0 {
		return false
	}
	for _, r := range msg.Text {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// pastedLine is pasted text made one line: a question pasted from a
// document arrives with line breaks (\r from most terminals), which become
// single spaces.
func pastedLine(s string) string {
	s = strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(s)
	return strings.Join(strings.Fields(sanitize(s)), " ")
}

// restyle takes the colours of a new theme.
func (in *lineInput) restyle(st *themes.Styles) { in.text, in.hint = st.Text, st.Subtle }

// ViewRows draws the value wrapped over up to rows lines of the input's
// width, showing the lines around the cursor; it returns the lines drawn
// (at least one).
func (in *lineInput) ViewRows(rows int) []string {
	if len(in.value) == 0 || rows <= 1 {
		return []string{in.View()}
	}
	return in.cursorRows(rows)
}

// span is one wrapped row of an input's value: runes [from, to).
type span struct{ from, to int }

// spans breaks the value into rows of at most the input's width less a
// cell for the cursor, at spaces where it can.
func (in *lineInput) spans() []span {
	w := max(in.width, 1)
	var spans []span
	from := 0
	for from < len(in.value) {
		to, cells, lastSpace := from, 0, -1
		for to < len(in.value) {
			cw := ansi.StringWidth(string(in.value[to]))
			if cells+cw > w-1 { // keep a cell for the cursor
				break
			}
			if in.value[to] == ' ' {
				lastSpace = to
			}
			cells += cw
			to++
		}
		if to < len(in.value) && lastSpace > from {
			to = lastSpace + 1
		}
		if to == from {
			to++
		}
		spans = append(spans, span{from, to})
		from = to
	}
	return spans
}

func (in *lineInput) cursorRows(rows int) []string {
	spans := in.spans()
	cur := len(spans) - 1
	for i, sp := range spans {
		if in.pos >= sp.from && in.pos < sp.to {
			cur = i
			break
		}
	}
	first := max(min(cur-rows+1, len(spans)-rows), 0)
	if cur < first {
		first = cur
	}
	var out []string
	for i := first; i < len(spans) && len(out) < rows; i++ {
		sp := spans[i]
		var b strings.Builder
		for j := sp.from; j < sp.to; j++ {
			if in.focused && j == in.pos {
				b.WriteString(in.cursor.Render(string(in.value[j])))
			} else {
				b.WriteString(in.text.Render(string(in.value[j])))
			}
		}
		if in.focused && in.pos == len(in.value) && i == len(spans)-1 {
			b.WriteString(in.cursor.Render(" "))
		}
		out = append(out, b.String())
	}
	return out
}

// rowsNeeded is how many lines ViewRows needs to show the whole value.
func (in *lineInput) rowsNeeded() int { return max(len(in.spans()), 1) }

// View draws the visible window of the value, scrolled so the cursor shows.
func (in *lineInput) View() string {
	w := max(in.width, 1)
	if len(in.value) == 0 {
		ph := trunc(in.placeholder, w-1)
		if in.focused {
			return in.cursor.Render(" ") + in.hint.Render(ph)
		}
		return in.hint.Render(ph)
	}
	start := 0
	if in.pos >= w {
		start = in.pos - w + 1
	}
	vis := in.value[start:]
	var b strings.Builder
	for i, r := range vis {
		if ansi.StringWidth(b.String()) >= w {
			break
		}
		if in.focused && start+i == in.pos {
			b.WriteString(in.cursor.Render(string(r)))
			continue
		}
		b.WriteString(in.text.Render(string(r)))
	}
	if in.focused && in.pos == len(in.value) {
		b.WriteString(in.cursor.Render(" "))
	}
	return b.String()
}
