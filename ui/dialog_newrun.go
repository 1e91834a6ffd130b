package ui

import (
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/themes"
)

// The new-research form: the question, then a row for each run option
// with a Form label in runopts.RunOptions, in the table's order. A string
// option is a one-of row (its Choices) or a text row, a bool an off/on
// row. Two rows keep widgets of their own, by option name: the sources
// checklist (it marks the sources this researchtui cannot search) and the
// Library row (the library's collections, loaded when the form opens).
const (
	fieldQuestion = 0 // the focus of the question; row i is focus i+1

	optSources = "sources"
	optLibrary = "collection"
)

// formRow is one option's row.
type formRow struct {
	spec   runopts.OptionSpec
	text   bool      // a text row, in input
	input  lineInput // a text row's
	values []string  // a one-of row's values (a bool's: off, on)
	labels []string  // what a one-of row shows for them
	choice int       // a one-of row's chosen index
}

// newRunDialog is the new-research form: the question plus the options a
// run is started with, prefilled from the config.
type newRunDialog struct {
	base     runopts.Options
	question lineInput
	rows     []*formRow
	sources  map[string]bool
	off      map[string]string // sources this researchtui cannot search, with what each needs
	srcCur   int
	library  libraryRow
	focus    int
	err      string
}

func newNewRunDialog(st *themes.Styles, defaults runopts.Options, initial string, off map[string]string) (*newRunDialog, tea.Cmd) {
	d := &newRunDialog{base: defaults, sources: map[string]bool{}, off: off, library: libraryRow{ticked: map[string]bool{}}}
	for _, c := range defaults.Collections {
		d.library.ticked[c] = true
	}
	d.question = newInput(st, "what do you want to know?", 60)
	d.question.limit = runopts.MaxQuestionChars
	d.question.SetValue(initial)
	d.question.CursorEnd()
	for _, s := range runopts.RunOptions {
		if r := newFormRow(st, s, &defaults); r != nil {
			d.rows = append(d.rows, r)
		}
	}
	// No sources ticked means "chosen by the question's topic" (the
	// planner routes by intent); configured sources start ticked.
	if !defaults.AutoSources {
		for _, s := range defaults.Sources {
			d.sources[s] = off[s] == "" // one that cannot be searched here starts unticked
		}
	}
	return d, d.question.Focus()
}

// newFormRow is the row of an option the form shows, with its value from
// defaults; nil when the form does not show it (no Form label, or a type
// only a widget of its own could show).
func newFormRow(st *themes.Styles, s runopts.OptionSpec, defaults *runopts.Options) *formRow {
	if s.Form == "" {
		return nil
	}
	r := &formRow{spec: s}
	switch {
	case s.Name == optSources || s.Name == optLibrary:
	case s.Type == runopts.OptionBool:
		r.values = []string{"off", "on"}
		r.labels = r.values
		if on, _ := s.Get(defaults).(bool); on {
			r.choice = 1
		}
	case s.Type == runopts.OptionString && len(s.Choices) > 0:
		r.values, r.labels = s.Choices, s.Choices
		if len(s.FormChoices) == len(s.Choices) {
			r.labels = s.FormChoices
		}
		def, _ := s.Default.(string)
		r.choice = max(slices.Index(s.Choices, def), 0)
		if i := slices.Index(s.Choices, s.Get(defaults).(string)); i >= 0 {
			r.choice = i
		}
	case s.Type == runopts.OptionString:
		r.text = true
		r.input = newInput(st, s.Placeholder, 30)
		r.input.SetValue(s.Get(defaults).(string))
	default:
		return nil
	}
	return r
}

// rowOf is the focus of the option's row (-1: none).
func (d *newRunDialog) rowOf(name string) int {
	for i, r := range d.rows {
		if r.spec.Name == name {
			return i + 1
		}
	}
	return -1
}

// focused is the focused option's row (nil: the question).
func (d *newRunDialog) focused() *formRow {
	if d.focus == fieldQuestion {
		return nil
	}
	return d.rows[d.focus-1]
}

func (d *newRunDialog) setFocus(f int) tea.Cmd {
	n := len(d.rows) + 1
	d.focus = (f + n) % n
	d.question.Blur()
	for _, r := range d.rows {
		r.input.Blur()
	}
	if r := d.focused(); r == nil {
		return d.question.Focus()
	} else if r.text {
		return r.input.Focus()
	}
	return nil
}

func (d *newRunDialog) options() runopts.Options {
	opt := d.base
	opt.Question = strings.TrimSpace(d.question.Value())
	for _, r := range d.rows {
		switch {
		case r.text:
			v := strings.TrimSpace(r.input.Value())
			if v == "" && r.spec.KeepIfEmpty {
				continue
			}
			r.spec.Set(&opt, v)
		case r.spec.Type == runopts.OptionBool:
			r.spec.Set(&opt, r.choice == 1)
		case r.values != nil:
			r.spec.Set(&opt, r.values[r.choice])
		}
	}
	opt.Sources, opt.AutoSources = nil, false
	for _, s := range runopts.KnownSources {
		if d.sources[s] {
			opt.Sources = append(opt.Sources, s)
		}
	}
	opt.AutoSources = len(opt.Sources) == 0
	opt.Collections = d.library.names()
	if len(opt.Collections) > 0 && !opt.AutoSources && !d.sources["local"] {
		opt.Sources = append(opt.Sources, "local") // a collection is searched
	}
	return opt
}

// setCollections fills the Library row once the collections are read.
func (d *newRunDialog) setCollections(msg collectionsLoadedMsg) {
	if msg.err != nil {
		d.library.err = msg.err.Error()
		return
	}
	d.library.cols = msg.cols
}

func (d *newRunDialog) handle(msg tea.KeyPressMsg, _ time.Time) (action, bool, tea.Cmd) {
	switch msg.String() {
	case "esc":
		return actFormClosed{question: d.question.Value()}, false, nil
	case "enter":
		opt := d.options()
		if opt.Question == "" {
			d.err = "type a question first"
			return nil, true, d.setFocus(fieldQuestion)
		}
		for i, r := range d.rows {
			if !r.text || r.spec.Check == nil {
				continue
			}
			if _, err := r.spec.Check(r.input.Value()); err != nil {
				d.err = r.spec.Invalid
				if d.err == "" {
					d.err = err.Error()
				}
				return nil, true, d.setFocus(i + 1)
			}
		}
		return actStart{opt: opt, form: true}, false, nil
	case "tab", "down":
		return nil, true, d.setFocus(d.focus + 1)
	case "shift+tab", "up":
		return nil, true, d.setFocus(d.focus - 1)
	}
	r := d.focused()
	switch {
	case r == nil:
		d.question.Update(msg)
		d.err = ""
	case r.text:
		r.input.Update(msg)
		if r.spec.Check != nil {
			d.err = ""
		}
	case r.values != nil:
		r.choice = cycle(r.choice, len(r.values), msg.String())
	case r.spec.Name == optSources:
		if changed, refused := toggleSourceRow(d.sources, d.off, &d.srcCur, msg.String()); changed || refused != "" {
			d.err = refused
		}
	case r.spec.Name == optLibrary:
		d.err = d.library.handle(msg.String())
	}
	return nil, true, nil
}

func (d *newRunDialog) paste(s string) tea.Cmd {
	if r := d.focused(); r == nil {
		d.question.Insert(pastedLine(s))
	} else if r.text {
		r.input.Insert(pastedLine(s))
	}
	return nil
}

func (d *newRunDialog) view(st *themes.Styles, w, _ int) string {
	dw := dialogWidth(w, 90)
	inner := dw - st.Dialog.GetHorizontalFrameSize()
	d.question.SetWidth(max(inner-12, 10))
	label := func(f int, s string) string {
		if d.focus == f {
			return st.Cursor.Render(padRight("▸ "+s, 11))
		}
		return st.Muted.Render(padRight("  "+s, 11))
	}
	var lines []string
	lines = append(lines, label(fieldQuestion, "Question")+" "+d.question.View())
	for i, r := range d.rows {
		f := i + 1
		switch {
		case r.text:
			r.input.SetWidth(max(inner-12, 10))
			lines = append(lines, label(f, r.spec.Form)+" "+r.input.View())
		case r.values != nil:
			lines = append(lines, label(f, r.spec.Form)+" "+choices(st, r.labels, r.choice))
		case r.spec.Name == optSources:
			lines = append(lines, d.sourceLines(st, label(f, r.spec.Form), f, inner)...)
		case r.spec.Name == optLibrary:
			lines = append(lines, label(f, r.spec.Form)+" "+d.library.view(st, d.focus == f, inner-12))
		}
	}
	if d.err != "" {
		lines = append(lines, "", st.Error.Render(d.err))
	}
	// The keys on as many lines as they need, never cut ("source …").
	return dialogBox(st, dw, "New research", strings.Join(lines, "\n"), helpLines(st, d.keyMap().ShortHelp(), inner))
}

// sourceLines draw the sources checklist (its row at focus f, labelled
// prefix), wrapped to the width, and what none ticked means.
func (d *newRunDialog) sourceLines(st *themes.Styles, prefix string, f, inner int) []string {
	var lines, row []string
	rowW := 0
	for i, s := range runopts.KnownSources {
		item := sourceBox(d.sources[s], d.off[s]) + " " + s
		style := st.Text
		if d.off[s] != "" {
			style = st.Muted
		}
		if d.focus == f && i == d.srcCur {
			style = st.Selected
		}
		if rowW+len(item)+2 > inner-12 && rowW > 0 {
			lines = append(lines, prefix+" "+strings.Join(row, "  "))
			row, rowW, prefix = nil, 0, strings.Repeat(" ", 11)
		}
		row = append(row, style.Render(item))
		rowW += len(item) + 2
	}
	lines = append(lines, prefix+" "+strings.Join(row, "  "))
	if len(d.options().Sources) == 0 {
		lines = append(lines, strings.Repeat(" ", 12)+st.Muted.Render("none ticked: the best for the question's topic"))
	}
	return lines
}

func (d *newRunDialog) keyMap() help.KeyMap {
	return formKeyMap{short: []key.Binding{
		kb([]string{"enter"}, "enter", "start"), keyTabFwd,
		kb([]string{"left", "right"}, "←/→", "choose"), kb([]string{"space"}, "space", "toggle source"), keyEsc,
	}}
}

// cycle moves a one-of row's choice i (of n) by a key: left back, right
// or space on, round.
func cycle(i, n int, k string) int {
	switch k {
	case "left", "h":
		return (i + n - 1) % n
	case "right", "l", "space":
		return (i + 1) % n
	}
	return i
}

// choices draws a one-of row, the chosen one selected.
func choices(st *themes.Styles, vs []string, chosen int) string {
	var out []string
	for i, v := range vs {
		if i == chosen {
			out = append(out, st.Selected.Render(" "+v+" "))
		} else {
			out = append(out, st.Muted.Render(" "+v+" "))
		}
	}
	return strings.Join(out, "")
}
