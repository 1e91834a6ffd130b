package ui

import (
	"strings"
	"unicode"

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

// Update edits the value with the usual readline keys.
func (in *lineInput) Update(msg tea.KeyPressMsg) {
	switch msg.String() {
	case "left", "ctrl+b":
		in.pos = max(in.pos-1, 0)
	case "right", "ctrl+f":
		in.pos = min(in.pos+1, len(in.value))
	case "home", "ctrl+a":
		in.pos = 0
	case "end", "ctrl+e":
		in.pos = len(in.value)
	case "backspace", "ctrl+h":
		if in.pos > 0 {
			in.value = append(in.value[:in.pos-1], in.value[in.pos:]...)
			in.pos--
		}
	case "delete", "ctrl+d":
		if in.pos < len(in.value) {
			in.value = append(in.value[:in.pos], in.value[in.pos+1:]...)
		}
	case "ctrl+u":
		in.value = in.value[in.pos:]
		in.pos = 0
	case "ctrl+k":
		in.value = in.value[:in.pos]
	case "ctrl+w", "alt+backspace":
		i := in.pos
		for i > 0 && unicode.IsSpace(in.value[i-1]) {
			i--
		}
		for i > 0 && !unicode.IsSpace(in.value[i-1]) {
			i--
		}
		in.value = append(in.value[:i], in.value[in.pos:]...)
		in.pos = i
	case "space":
		in.insert([]rune{' '})
	default:
		if msg.Text != "" && msg.Mod&^(tea.ModShift) == 0 {
			in.insert([]rune(sanitizeLine(msg.Text)))
		}
	}
}

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
