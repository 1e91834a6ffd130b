package ui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// Key bindings follow terminal habits (README: Keys). Each screen and focus
// has one table of commands (keyTable): a binding and what it does. The
// same table dispatches the keys in Update, draws the footer and the ?
// overlay, so help can never drift from behaviour.

func kb(keys []string, help, desc string) key.Binding {
	return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
}

// command is one key of a screen: its binding, whether the footer shows
// it, and what it does (nil: handled elsewhere, e.g. by a text input, and
// listed for help only).
type command struct {
	b     key.Binding
	short bool
	brief string // the footer's shorter description, if any
	// cond says when a disabled command works ("with a source
	// selected"): the ? overlay lists it with that, so help names every
	// key of the screen, not only those that work right now.
	cond string
	run  func(m *rootModel, msg tea.KeyPressMsg) tea.Cmd
}

// do makes a command; footer puts it in the footer; when disables it.
func do(b key.Binding, run func(m *rootModel, msg tea.KeyPressMsg) tea.Cmd) command {
	return command{b: b, run: run}
}

func (c command) footer() command { c.short = true; return c }

// footerAs puts the command in the footer with a shorter description.
func (c command) footerAs(brief string) command { c.short, c.brief = true, brief; return c }

func (c command) when(on bool) command { c.b.SetEnabled(on); return c }

// whenOr is when, with the words that say when the command works, for
// the help overlay while it is off.
func (c command) whenOr(on bool, cond string) command { c.cond = cond; return c.when(on) }

// keyTable is a screen's commands in groups (the columns of the help).
type keyTable struct {
	title  string // what the help overlay is titled: screen and focus
	groups [][]command
	// legend explains the screen's marks below the keys ("" when none).
	legend string
}

// dispatch runs the first enabled command whose binding matches.
func (t keyTable) dispatch(m *rootModel, msg tea.KeyPressMsg) (tea.Cmd, bool) {
	for _, g := range t.groups {
		for _, c := range g {
			if c.run != nil && key.Matches(msg, c.b) {
				return c.run(m, msg), true
			}
		}
	}
	return nil, false
}

// ShortHelp and FullHelp make the table a help.KeyMap.
func (t keyTable) ShortHelp() []key.Binding {
	var out []key.Binding
	for _, g := range t.groups {
		for _, c := range g {
			if c.short && c.b.Enabled() {
				b := c.b
				if c.brief != "" {
					b.SetHelp(b.Help().Key, c.brief)
				}
				out = append(out, b)
			}
		}
	}
	return out
}

func (t keyTable) FullHelp() [][]key.Binding {
	var out [][]key.Binding
	for _, g := range t.groups {
		var col []key.Binding
		for _, c := range g {
			switch {
			case c.b.Enabled():
				col = append(col, c.b)
			case c.cond != "":
				b := c.b // a copy: the table's own stays off
				b.SetEnabled(true)
				b.SetHelp(b.Help().Key, b.Help().Desc+" ("+c.cond+")")
				col = append(col, b)
			}
		}
		if len(col) > 0 {
			out = append(out, col)
		}
	}
	return out
}

// globalKeys work on every screen unless a text input has focus; ctrl+c
// works everywhere.
type globalKeys struct {
	Quit, QuitNow, Help, HelpF1, Theme, Pull key.Binding
}

var gKeys = globalKeys{
	Quit:    kb([]string{"q"}, "q", "quit"),
	QuitNow: kb([]string{"ctrl+c"}, "ctrl+c", "quit (twice: at once)"),
	Help:    kb([]string{"?", "f1"}, "?", "help"),
	HelpF1:  kb([]string{"f1"}, "f1", "help"),
	Theme:   kb([]string{"t"}, "t", "next theme (saved)"),
	Pull:    kb([]string{"p"}, "p", "download missing models"),
}

type navKeys struct {
	Up, Down, Top, Bottom, PageUp, PageDown key.Binding
}

var nav = navKeys{
	Up:       kb([]string{"up", "k"}, "↑/k", "up"),
	Down:     kb([]string{"down", "j"}, "↓/j", "down"),
	Top:      kb([]string{"g", "home"}, "g", "top"),
	Bottom:   kb([]string{"G", "end"}, "G", "bottom"),
	PageUp:   kb([]string{"pgup", "ctrl+u"}, "pgup", "page up"),
	PageDown: kb([]string{"pgdown", "ctrl+d", "space"}, "pgdn", "page down"),
}

// editKeys are the one-line inputs' editing keys (lineInput.Update).
type editKeys struct {
	Left, Right, Home, End, Backspace, Delete, KillStart, KillEnd, KillWord key.Binding
}

var eKeys = editKeys{
	Left:      kb([]string{"left", "ctrl+b"}, "←", "left"),
	Right:     kb([]string{"right", "ctrl+f"}, "→", "right"),
	Home:      kb([]string{"home", "ctrl+a"}, "ctrl+a", "start of line"),
	End:       kb([]string{"end", "ctrl+e"}, "ctrl+e", "end of line"),
	Backspace: kb([]string{"backspace", "ctrl+h"}, "backspace", "delete left"),
	Delete:    kb([]string{"delete", "ctrl+d"}, "del", "delete right"),
	KillStart: kb([]string{"ctrl+u"}, "ctrl+u", "delete to start"),
	KillEnd:   kb([]string{"ctrl+k"}, "ctrl+k", "delete to end"),
	KillWord:  kb([]string{"ctrl+w", "alt+backspace"}, "ctrl+w", "delete word"),
}

// editHelp lists the editing keys for the help overlay (run: nil, the
// input handles them).
func editHelp() []command {
	var out []command
	for _, b := range []key.Binding{eKeys.Home, eKeys.End, eKeys.KillStart, eKeys.KillEnd, eKeys.KillWord} {
		out = append(out, command{b: b})
	}
	return out
}

type sessionsKeys struct {
	Ask, ToList, ToLine, Options, ClearLine, New, Open, Filter, Delete, Resume, ClearFilter,
	FilterDone, FilterClear, FilterMove, Follow key.Binding
}

var sKeys = sessionsKeys{
	Ask:         kb([]string{"enter"}, "enter", "start research"),
	Options:     kb([]string{"ctrl+o"}, "ctrl+o", "research with options"),
	ToList:      kb([]string{"tab", "down", "shift+tab"}, "tab/↓", "sessions list"),
	ClearLine:   kb([]string{"esc"}, "esc", "clear the line"),
	ToLine:      kb([]string{"tab", "shift+tab"}, "tab", "question line"),
	New:         kb([]string{"n"}, "n", "new research (form)"),
	Open:        kb([]string{"enter"}, "enter", "open"),
	Filter:      kb([]string{"/"}, "/", "filter"),
	Delete:      kb([]string{"d"}, "d", "delete"),
	Resume:      kb([]string{"R"}, "R", "resume"),
	Follow:      kb([]string{"F"}, "F", "follow (weekly updates) / unfollow"),
	ClearFilter: kb([]string{"esc"}, "esc", "clear filter"),
	FilterDone:  kb([]string{"enter"}, "enter", "keep filter"),
	FilterClear: kb([]string{"esc"}, "esc", "clear filter"),
	FilterMove:  kb([]string{"up", "down"}, "↑/↓", "select"),
}

type runKeys struct {
	Cancel, Back, Review, Report, WriteNow, Timeline, RawOutput, Warnings key.Binding
}

var rKeys = runKeys{
	Cancel: kb([]string{"c"}, "c", "cancel run"),
	Back:   kb([]string{"esc"}, "esc", "sessions (run continues)"),
	Review: kb([]string{"v"}, "v", "open review"),
	Report: kb([]string{"enter"}, "enter", "read the report"),
	// s: stop waiting for downloads and research; write from what is analysed.
	WriteNow: kb([]string{"s"}, "s", "skip downloads, write now"),
	// T: where the time and tokens went, from the stored event log.
	Timeline: kb([]string{"T"}, "T", "timeline"),
	// J: the agents' JSON answers as they stream, instead of their outline.
	RawOutput: kb([]string{"J"}, "J", "raw JSON output"),
	// W: every warning whole; the screen shows the newest, cut.
	Warnings: kb([]string{"W"}, "W", "warnings"),
}

type reportKeys struct {
	Tab, Detail, Open, Export, Find, Next, Prev, Back, Cite, NextCite, PrevCite, CopyRef, CopyDOI,
	FindDone, FindCancel, FollowUp, Versions, Timeline, Candidates, Wide, Update, Follow key.Binding
}

var pKeys = reportKeys{
	Tab:        kb([]string{"tab", "shift+tab"}, "tab", "switch pane"),
	Detail:     kb([]string{"enter"}, "enter", "source details"),
	Open:       kb([]string{"o"}, "o", "open the source's URL"),
	Export:     kb([]string{"e"}, "e", "export"),
	Find:       kb([]string{"/"}, "/", "find"),
	Next:       kb([]string{"n"}, "n", "next match"),
	Prev:       kb([]string{"N"}, "N", "previous match"),
	Back:       kb([]string{"esc"}, "esc", "back"),
	Cite:       kb([]string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "0"}, "1-9", "select source [n]"),
	NextCite:   kb([]string{"]"}, "]", "next citation"),
	PrevCite:   kb([]string{"["}, "[", "previous citation"),
	CopyRef:    kb([]string{"y"}, "y", "copy reference (APA)"),
	CopyDOI:    kb([]string{"Y"}, "Y", "copy DOI or URL"),
	FindDone:   kb([]string{"enter"}, "enter", "find"),
	FindCancel: kb([]string{"esc"}, "esc", "cancel"),
	FollowUp:   kb([]string{"f"}, "f", "ask a follow-up"),
	Versions:   kb([]string{"V"}, "V", "versions"),
	// u and F: a living review (living.go).
	Update:   kb([]string{"u"}, "u", "update: search for new work"),
	Follow:   kb([]string{"F"}, "F", "follow (weekly updates) / unfollow"),
	Timeline: kb([]string{"T"}, "T", "timeline"),
	// C: every candidate the run ranked, its scores and why it was read.
	Candidates: kb([]string{"C"}, "C", "candidates"),
	// w: the report over the whole width, the sources pane hidden, so wide
	// tables (a review's studies) fit as tables.
	Wide: kb([]string{"w"}, "w", "report full width"),
}

type reviewKeys struct {
	Toggle, Accept, Reject, Note, Later key.Binding
}

var vKeys = reviewKeys{
	Toggle: kb([]string{"space", "x"}, "space", "toggle request"),
	Accept: kb([]string{"a"}, "a", "accept selected"),
	Reject: kb([]string{"r"}, "r", "reject all, finalise"),
	Note:   kb([]string{"e"}, "e", "note for the writer"),
	Later:  kb([]string{"esc"}, "esc", "decide later"),
}

// planKeys are the plan review's keys (esc: vKeys.Later).
type planKeys struct {
	Go, Edit, Queries, Delete, Add, Cancel key.Binding
}

var planK = planKeys{
	Go:      kb([]string{"a", "enter"}, "a", "go on with this plan"),
	Edit:    kb([]string{"e"}, "e", "edit the sub-question"),
	Queries: kb([]string{"q"}, "q", "edit its queries"),
	Delete:  kb([]string{"d"}, "d", "delete (again: undo)"),
	Add:     kb([]string{"n"}, "n", "add a sub-question"),
	Cancel:  kb([]string{"c"}, "c", "cancel the run (asks first)"),
}

type planKeyMap struct{}

var planShort = func() []key.Binding {
	short := []struct {
		b    key.Binding
		desc string
	}{
		{planK.Go, "go on"}, {planK.Edit, "edit"}, {planK.Queries, "queries"}, {planK.Delete, "delete"},
		{planK.Add, "add"}, {vKeys.Later, "later"}, {planK.Cancel, "cancel"},
	}
	out := make([]key.Binding, len(short))
	for i, s := range short {
		out[i] = s.b
		out[i].SetHelp(s.b.Help().Key, s.desc)
	}
	return out
}()

func (planKeyMap) ShortHelp() []key.Binding { return planShort }

func (planKeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{nav.Up, nav.Down}, {planK.Go, planK.Edit, planK.Queries}, {planK.Delete, planK.Add, vKeys.Later, planK.Cancel}}
}

type reviewKeyMap struct{}

// reviewShort are the review keys with the short labels of the footers,
// so all five fit in one line at 80 columns; the help overlay keeps the
// long ones.
var reviewShort = func() []key.Binding {
	short := []struct {
		b    key.Binding
		desc string
	}{
		{vKeys.Toggle, "toggle"}, {vKeys.Accept, "accept selected"}, {vKeys.Reject, "reject all"},
		{vKeys.Note, "note"}, {vKeys.Later, "later"},
	}
	out := make([]key.Binding, len(short))
	for i, s := range short {
		out[i] = s.b
		out[i].SetHelp(s.b.Help().Key, s.desc)
	}
	return out
}()

func (reviewKeyMap) ShortHelp() []key.Binding { return reviewShort }

func (reviewKeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{nav.Up, nav.Down}, {vKeys.Toggle, vKeys.Accept, vKeys.Reject}, {vKeys.Note, vKeys.Later}}
}

// formKeys are the keys of small dialogs with inputs.
type formKeyMap struct{ short []key.Binding }

func (f formKeyMap) ShortHelp() []key.Binding  { return f.short }
func (f formKeyMap) FullHelp() [][]key.Binding { return [][]key.Binding{f.short} }

var (
	keyEsc    = kb([]string{"esc"}, "esc", "cancel")
	keyTabFwd = kb([]string{"tab", "down"}, "tab", "next field")
	keyYes    = kb([]string{"y"}, "y", "yes")
	keyNo     = kb([]string{"n", "esc"}, "any other key", "no") // a confirmation's yes is y only
)

// globalGroup is the last help column of screens without a focused input;
// quitInFooter: the footer has room for q.
func (m *rootModel) globalGroup(quitInFooter bool) []command {
	quit := do(gKeys.Quit, (*rootModel).quitKey)
	if quitInFooter {
		quit = quit.footer()
	}
	return []command{
		do(gKeys.Theme, (*rootModel).cycleTheme),
		do(gKeys.Pull, (*rootModel).pullKey).when(m.canPull()),
		do(gKeys.Help, (*rootModel).openHelp).footer(),
		quit,
		{b: gKeys.QuitNow},
	}
}

// typingGroup is the last help column while an input has the keys.
func typingGroup() []command {
	return []command{do(gKeys.HelpF1, (*rootModel).openHelp).footer(), {b: gKeys.QuitNow, short: true, brief: "quit"}}
}
