package ui

import (
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/themes"
)

// Fields of the new-research form, in tab order.
const (
	fieldQuestion = iota
	fieldModel
	fieldDepth
	fieldSources
	fieldVerify
	fieldKind
	fieldPlan
	fieldLanguage
	fieldLibrary
	fieldCount
)

var depths = []string{pipeline.DepthQuick, pipeline.DepthStandard, pipeline.DepthDeep}

// planChoices are what happens to the plan (--review-plan): the labels
// shown, and the options' values at the same index.
var (
	planChoices = []string{"go straight on", "review it first"}
	planValues  = []string{pipeline.ReviewApprove, pipeline.ReviewAsk}
)

// kinds are the report's shapes (--kind).
var kinds = []string{pipeline.KindStandard, pipeline.KindBrief, pipeline.KindReview}

// verifyModes are the choices of how cited sentences are checked.
var verifyModes = []string{pipeline.VerifyFull, pipeline.VerifyQuick, pipeline.VerifyOff}

// newRunDialog is the new-research form: the question plus the options a
// run is started with (model, depth, sources), prefilled from the config.
type newRunDialog struct {
	base     pipeline.Options
	question lineInput
	model    lineInput
	language lineInput
	depth    int
	kind     int
	plan     int
	verify   int
	sources  map[string]bool
	off      map[string]string // sources this researchtui cannot search, with what each needs
	srcCur   int
	library  libraryRow
	focus    int
	err      string
}

func newNewRunDialog(st *themes.Styles, defaults pipeline.Options, initial string, off map[string]string) (*newRunDialog, tea.Cmd) {
	d := &newRunDialog{base: defaults, sources: map[string]bool{}, off: off, library: libraryRow{ticked: map[string]bool{}}}
	for _, c := range defaults.Collections {
		d.library.ticked[c] = true
	}
	d.question = newInput(st, "what do you want to know?", 60)
	d.question.limit = pipeline.MaxQuestionBytes
	d.question.SetValue(initial)
	d.question.CursorEnd()
	d.model = newInput(st, "qwen3:8b", 30)
	d.model.SetValue(defaults.Model)
	d.language = newInput(st, "English (or de, German, pt-BR, …)", 30)
	d.language.SetValue(defaults.Language)
	d.depth = 1
	for i, v := range depths {
		if v == defaults.Depth {
			d.depth = i
		}
	}
	for i, v := range verifyModes {
		if v == defaults.Verify {
			d.verify = i
		}
	}
	for i, v := range kinds {
		if v == defaults.Kind {
			d.kind = i
		}
	}
	for i, v := range planValues {
		if v == defaults.ReviewPlan {
			d.plan = i
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

func (d *newRunDialog) setFocus(f int) tea.Cmd {
	d.focus = (f + fieldCount) % fieldCount
	d.question.Blur()
	d.model.Blur()
	d.language.Blur()
	switch d.focus {
	case fieldQuestion:
		return d.question.Focus()
	case fieldModel:
		return d.model.Focus()
	case fieldLanguage:
		return d.language.Focus()
	}
	return nil
}

func (d *newRunDialog) options() pipeline.Options {
	opt := d.base
	opt.Question = strings.TrimSpace(d.question.Value())
	if m := strings.TrimSpace(d.model.Value()); m != "" {
		opt.Model = m
	}
	opt.Depth = depths[d.depth]
	opt.Kind = kinds[d.kind]
	opt.ReviewPlan = planValues[d.plan]
	opt.Language = strings.TrimSpace(d.language.Value())
	opt.Verify = verifyModes[d.verify]
	opt.Sources, opt.AutoSources = nil, false
	for _, s := range pipeline.KnownSources {
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
		if _, err := pipeline.LanguageTag(opt.Language); err != nil {
			d.err = "unknown language: type a tag such as de or pt-BR, or a name such as German"
			return nil, true, d.setFocus(fieldLanguage)
		}
		return actStart{opt: opt, form: true}, false, nil
	case "tab", "down":
		return nil, true, d.setFocus(d.focus + 1)
	case "shift+tab", "up":
		return nil, true, d.setFocus(d.focus - 1)
	}
	var cmd tea.Cmd
	switch d.focus {
	case fieldQuestion:
		d.question.Update(msg)
		d.err = ""
	case fieldModel:
		d.model.Update(msg)
	case fieldLanguage:
		d.language.Update(msg)
		d.err = ""
	case fieldDepth:
		d.depth = cycle(d.depth, len(depths), msg.String())
	case fieldKind:
		d.kind = cycle(d.kind, len(kinds), msg.String())
	case fieldPlan:
		d.plan = cycle(d.plan, len(planChoices), msg.String())
	case fieldVerify:
		d.verify = cycle(d.verify, len(verifyModes), msg.String())
	case fieldSources:
		if changed, refused := toggleSourceRow(d.sources, d.off, &d.srcCur, msg.String()); changed || refused != "" {
			d.err = refused
		}
	case fieldLibrary:
		d.err = d.library.handle(msg.String())
	}
	return nil, true, cmd
}

func (d *newRunDialog) paste(s string) tea.Cmd {
	switch d.focus {
	case fieldQuestion:
		d.question.Insert(pastedLine(s))
	case fieldModel:
		d.model.Insert(pastedLine(s))
	case fieldLanguage:
		d.language.Insert(pastedLine(s))
	}
	return nil
}

func (d *newRunDialog) view(st *themes.Styles, w, _ int) string {
	dw := dialogWidth(w, 90)
	inner := dw - st.Dialog.GetHorizontalFrameSize()
	d.question.SetWidth(max(inner-12, 10))
	d.model.SetWidth(max(inner-12, 10))
	d.language.SetWidth(max(inner-12, 10))
	label := func(f int, s string) string {
		if d.focus == f {
			return st.Cursor.Render(padRight("▸ "+s, 11))
		}
		return st.Muted.Render(padRight("  "+s, 11))
	}
	var lines []string
	lines = append(lines, label(fieldQuestion, "Question")+" "+d.question.View())
	lines = append(lines, label(fieldModel, "Model")+" "+d.model.View())
	lines = append(lines, label(fieldDepth, "Depth")+" "+choices(st, depths, d.depth))
	var row []string
	rowW := 0
	first := true
	for i, s := range pipeline.KnownSources {
		item := sourceBox(d.sources[s], d.off[s]) + " " + s
		style := st.Text
		if d.off[s] != "" {
			style = st.Muted
		}
		if d.focus == fieldSources && i == d.srcCur {
			style = st.Selected
		}
		if rowW+len(item)+2 > inner-12 && rowW > 0 {
			prefix := label(fieldSources, "Sources")
			if !first {
				prefix = strings.Repeat(" ", 11)
			}
			lines = append(lines, prefix+" "+strings.Join(row, "  "))
			row, rowW, first = nil, 0, false
		}
		row = append(row, style.Render(item))
		rowW += len(item) + 2
	}
	prefix := label(fieldSources, "Sources")
	if !first {
		prefix = strings.Repeat(" ", 11)
	}
	lines = append(lines, prefix+" "+strings.Join(row, "  "))
	if len(d.options().Sources) == 0 {
		lines = append(lines, strings.Repeat(" ", 12)+st.Muted.Render("none ticked: the best for the question's topic"))
	}
	lines = append(lines, label(fieldVerify, "Verify")+" "+choices(st, verifyModes, d.verify))
	lines = append(lines, label(fieldKind, "Report")+" "+choices(st, kinds, d.kind))
	lines = append(lines, label(fieldPlan, "Plan")+" "+choices(st, planChoices, d.plan))
	lines = append(lines, label(fieldLanguage, "Language")+" "+d.language.View())
	lines = append(lines, label(fieldLibrary, "Library")+" "+d.library.view(st, d.focus == fieldLibrary, inner-12))
	if d.err != "" {
		lines = append(lines, "", st.Error.Render(d.err))
	}
	hm := help.New()
	hm.Styles = help.Styles{ShortKey: st.HelpKey, ShortDesc: st.HelpDesc, ShortSeparator: st.HelpSep, Ellipsis: st.HelpSep}
	hm.SetWidth(inner)
	return dialogBox(st, dw, "New research", strings.Join(lines, "\n"), hm.ShortHelpView(d.keyMap().ShortHelp()))
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
