package ui

import "charm.land/bubbles/v2/key"

// Key bindings follow terminal habits (DESIGN §9). Each screen has its own
// map so the footer and the help overlay show exactly the keys that work
// where the person is.

func kb(keys []string, help, desc string) key.Binding {
	return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
}

// globalKeys work on every screen unless a text input has focus.
type globalKeys struct {
	Quit, Help, Theme key.Binding
}

var gKeys = globalKeys{
	Quit:  kb([]string{"q", "ctrl+c"}, "q", "quit"),
	Help:  kb([]string{"?"}, "?", "help"),
	Theme: kb([]string{"t"}, "t", "theme"),
}

type navKeys struct {
	Up, Down, Top, Bottom, PageUp, PageDown key.Binding
}

var nav = navKeys{
	Up:       kb([]string{"up", "k"}, "↑/k", "up"),
	Down:     kb([]string{"down", "j"}, "↓/j", "down"),
	Top:      kb([]string{"g", "home"}, "g", "top"),
	Bottom:   kb([]string{"G", "end"}, "G", "bottom"),
	PageUp:   kb([]string{"pgup", "ctrl+u", "b"}, "pgup", "page up"),
	PageDown: kb([]string{"pgdown", "ctrl+d", "f", "space"}, "pgdn", "page down"),
}

type sessionsKeys struct {
	New, Open, Filter, Delete, Resume, Back key.Binding
}

var sKeys = sessionsKeys{
	New:    kb([]string{"n"}, "n", "new research"),
	Open:   kb([]string{"enter"}, "enter", "open"),
	Filter: kb([]string{"/"}, "/", "filter"),
	Delete: kb([]string{"d"}, "d", "delete"),
	Resume: kb([]string{"R"}, "R", "resume"),
	Back:   kb([]string{"esc"}, "esc", "clear filter"),
}

type sessionsKeyMap struct{}

func (sessionsKeyMap) ShortHelp() []key.Binding {
	return []key.Binding{sKeys.New, sKeys.Open, sKeys.Filter, sKeys.Delete, sKeys.Resume, gKeys.Help, gKeys.Quit}
}

func (sessionsKeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{nav.Up, nav.Down, nav.Top, nav.Bottom},
		{sKeys.New, sKeys.Open, sKeys.Filter, sKeys.Back},
		{sKeys.Delete, sKeys.Resume, gKeys.Theme, gKeys.Help, gKeys.Quit},
	}
}

type runKeys struct {
	Cancel, Back, Review, Report, WriteNow key.Binding
}

var rKeys = runKeys{
	Cancel: kb([]string{"c"}, "c", "cancel run"),
	Back:   kb([]string{"esc"}, "esc", "sessions (run continues)"),
	Review: kb([]string{"v"}, "v", "open review"),
	Report: kb([]string{"enter"}, "enter", "report (when done)"),
	// s: stop waiting for downloads and research; write from what is analysed.
	WriteNow: kb([]string{"s"}, "s", "skip downloads, write now"),
}

type runKeyMap struct{}

func (runKeyMap) ShortHelp() []key.Binding {
	return []key.Binding{rKeys.Back, rKeys.Cancel, rKeys.Review, gKeys.Help, gKeys.Quit}
}

func (runKeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{rKeys.Back, rKeys.Cancel, rKeys.Review, rKeys.Report, rKeys.WriteNow},
		{nav.Up, nav.Down},
		{gKeys.Theme, gKeys.Help, gKeys.Quit},
	}
}

type reportKeys struct {
	Tab, Detail, Open, Export, Find, Next, Prev, Back key.Binding
}

var pKeys = reportKeys{
	Tab:    kb([]string{"tab", "shift+tab"}, "tab", "switch pane"),
	Detail: kb([]string{"enter"}, "enter", "source details"),
	Open:   kb([]string{"o"}, "o", "open URL"),
	Export: kb([]string{"e"}, "e", "export"),
	Find:   kb([]string{"/"}, "/", "find"),
	Next:   kb([]string{"n"}, "n", "next match"),
	Prev:   kb([]string{"N"}, "N", "previous match"),
	Back:   kb([]string{"esc"}, "esc", "back"),
}

type reportKeyMap struct{}

func (reportKeyMap) ShortHelp() []key.Binding {
	return []key.Binding{pKeys.Tab, pKeys.Find, pKeys.Export, pKeys.Open, pKeys.Back, gKeys.Help}
}

func (reportKeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{nav.Up, nav.Down, nav.Top, nav.Bottom, nav.PageUp, nav.PageDown},
		{pKeys.Tab, pKeys.Detail, pKeys.Open, pKeys.Export},
		{pKeys.Find, pKeys.Next, pKeys.Prev, pKeys.Back},
		{gKeys.Theme, gKeys.Help, gKeys.Quit},
	}
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
	keyEnter  = kb([]string{"enter"}, "enter", "confirm")
	keyEsc    = kb([]string{"esc"}, "esc", "cancel")
	keyTabFwd = kb([]string{"tab", "down"}, "tab", "next field")
	keyTabBck = kb([]string{"shift+tab", "up"}, "shift+tab", "previous field")
	keyYes    = kb([]string{"y"}, "y", "yes")
	keyNo     = kb([]string{"n", "esc"}, "any other key", "no") // a confirmation's yes is y only
)
