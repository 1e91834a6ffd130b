package ui

import (
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/themes"
)

// dialog is a modal overlay. Like crush's dialogs it returns an action
// value instead of doing anything: the root decides what an action means,
// so dialogs stay testable with a key and an assertion.
type dialog interface {
	// handle processes a key at time now; keep=false closes the dialog.
	handle(msg tea.KeyPressMsg, now time.Time) (a action, keep bool, cmd tea.Cmd)
	paste(s string) tea.Cmd
	view(st *themes.Styles, w, h int) string
	keyMap() help.KeyMap
}

// action is what a dialog asks the root to do.
type action interface{}

type (
	actDecide struct {
		id string
		d  pipeline.Decision
	}
	actLater struct{ id string }
	// actStart starts a run; form: from the new-research form, whose
	// choice is remembered.
	actStart struct {
		opt  runopts.Options
		form bool
	}
	// actFormClosed: the form was closed without starting; its question
	// goes back to the question line.
	actFormClosed struct{ question string }
	actRestore    struct{ d dialog } // reopen a dialog a question had covered
	actQuit       struct{}
	actDelete     struct{ id string }
	// actResume resumes a stored session, answering its pending review.
	actResume struct {
		s store.Session
		d *pipeline.Decision
	}
	actCancelRun struct{ id string }
	actExport    struct{ format string }
	actOpenURL   struct{ url string }
	actCopy      struct{ text, what string } // to the clipboard
)

// dialogBox draws a dialog frame of width w with a title, a body and a
// footer of key hints.
func dialogBox(st *themes.Styles, w int, title, body, footer string) string {
	inner := w - st.Dialog.GetHorizontalFrameSize()
	if inner < 10 {
		inner = 10
	}
	parts := []string{st.Title.Render(trunc(title, inner)), ""}
	parts = append(parts, body)
	if footer != "" {
		parts = append(parts, "", footer)
	}
	return st.Dialog.Width(w).Render(strings.Join(parts, "\n"))
}

// helpLines lays key hints out in as many lines of width w as they need:
// unlike help.Model's short view, which cuts the last keys off with an
// ellipsis, every key stays visible.
func helpLines(st *themes.Styles, bs []key.Binding, w int) string {
	const sep = " • "
	var lines []string
	var cur strings.Builder
	curW := 0
	for _, b := range bs {
		if !b.Enabled() {
			continue
		}
		h := b.Help()
		item := st.HelpKey.Render(h.Key) + st.HelpDesc.Render(" "+h.Desc)
		itemW := ansi.StringWidth(h.Key + " " + h.Desc)
		if itemW > w {
			item, itemW = ansi.Truncate(item, w, "…"), w
		}
		sepW := ansi.StringWidth(sep)
		if curW > 0 && curW+sepW+itemW > w {
			lines = append(lines, cur.String())
			cur.Reset()
			curW = 0
		}
		if curW > 0 {
			cur.WriteString(st.HelpSep.Render(sep))
			curW += sepW
		}
		cur.WriteString(item)
		curW += itemW
	}
	if curW > 0 {
		lines = append(lines, cur.String())
	}
	return strings.Join(lines, "\n")
}

// dialogWidth is the width dialogs use on a screen of width w.
func dialogWidth(w, want int) int {
	if w-4 < want {
		return max(w-4, 20)
	}
	return want
}

// confirmDialog asks a yes/no question; yes carries out onYes. It guards
// against keys typed in flow: a question typed on the sessions screen that
// starts with d ("does …") opens the delete confirmation, so
//
//   - keys are ignored for confirmGrace after it opens, and each ignored key
//     extends the quiet period (a burst of typing is absorbed whole; unlike
//     the review dialog there is no cap, since yes here can be destructive);
//   - after that, only y is yes: any other key closes the dialog as no.
type confirmDialog struct {
	title, text string
	onYes       action
	armed       time.Time // keys before this are ignored
}

// confirmGrace is how long a confirmation ignores keys after it opens.
const confirmGrace = reviewGrace

func newConfirmDialog(title, text string, onYes action, now time.Time) *confirmDialog {
	return &confirmDialog{title: title, text: text, onYes: onYes, armed: now.Add(confirmGrace)}
}

func (d *confirmDialog) handle(msg tea.KeyPressMsg, now time.Time) (action, bool, tea.Cmd) {
	if now.Before(d.armed) {
		d.armed = now.Add(confirmGrace)
		return nil, true, nil
	}
	if key.Matches(msg, keyYes) {
		return d.onYes, false, nil
	}
	return nil, false, nil // anything else is no
}

func (d *confirmDialog) paste(string) tea.Cmd { return nil }

func (d *confirmDialog) view(st *themes.Styles, w, _ int) string {
	dw := dialogWidth(w, 56)
	body := st.Text.Render(wrapText(d.text, dw-4))
	return dialogBox(st, dw, d.title, body, st.HelpKey.Render("y")+st.HelpDesc.Render(" yes  ")+st.HelpKey.Render("any other key")+st.HelpDesc.Render(" no"))
}

func (d *confirmDialog) keyMap() help.KeyMap { return formKeyMap{short: []key.Binding{keyYes, keyNo}} }

// quitDialog asks before quitting while runs are going: it names each run
// and where it is. y quits (after the grace period, like every
// confirmation); ctrl+c quits at once (handled by the root); any other key
// keeps working and reopens the dialog it covered (a review, say).
type quitDialog struct {
	runs  []string // "title — what it is doing"
	prev  dialog
	armed time.Time
}

func newQuitDialog(live []*runView, prev dialog, now time.Time) *quitDialog {
	d := &quitDialog{prev: prev, armed: now.Add(confirmGrace)}
	for _, rs := range live {
		d.runs = append(d.runs, "“"+rs.title+"” — "+rs.doing())
	}
	return d
}

func (d *quitDialog) handle(msg tea.KeyPressMsg, now time.Time) (action, bool, tea.Cmd) {
	if now.Before(d.armed) {
		d.armed = now.Add(confirmGrace)
		return nil, true, nil
	}
	if key.Matches(msg, keyYes) {
		return actQuit{}, false, nil
	}
	if d.prev != nil {
		return actRestore{d: d.prev}, false, nil
	}
	return nil, false, nil
}

func (d *quitDialog) paste(string) tea.Cmd { return nil }

func (d *quitDialog) view(st *themes.Styles, w, _ int) string {
	dw := dialogWidth(w, 64)
	inner := dw - st.Dialog.GetHorizontalFrameSize()
	head, them := "1 run is still going:", "it"
	if n := len(d.runs); n > 1 {
		head, them = itoa(n)+" runs are still going:", "them"
	}
	lines := []string{st.Text.Render(head)}
	for _, r := range d.runs {
		for i, l := range strings.Split(wrapText(r, max(inner-4, 10)), "\n") {
			if i == 0 {
				lines = append(lines, st.Accent.Render("  • ")+st.Text.Render(l))
			} else {
				lines = append(lines, "    "+st.Text.Render(l))
			}
		}
	}
	lines = append(lines, "", st.Muted.Render(wrapText("Quitting stops "+them+": finished stages are kept, and R on the sessions list resumes "+them+" later; a run waiting for your review stays awaiting review.", inner)))
	foot := helpLines(st, d.keyMap().ShortHelp(), inner)
	return dialogBox(st, dw, "Quit researchtui?", strings.Join(lines, "\n"), foot)
}

func (d *quitDialog) keyMap() help.KeyMap {
	yes, now, no := keyYes, gKeys.QuitNow, keyNo
	yes.SetHelp("y", "quit")
	now.SetHelp("ctrl+c", "quit now")
	no.SetHelp("any other key", "keeps working")
	return formKeyMap{short: []key.Binding{yes, now, no}}
}

// exportDialog picks an export format.
type exportDialog struct{}

var exportChoices = []struct{ key, format, label string }{
	{"m", "md", "Markdown"}, {"h", "html", "HTML"}, {"j", "json", "JSON"}, {"b", "bibtex", "BibTeX"}, {"r", "ris", "RIS"}, {"c", "csljson", "CSL-JSON"},
}

func (d *exportDialog) handle(msg tea.KeyPressMsg, _ time.Time) (action, bool, tea.Cmd) {
	for _, c := range exportChoices {
		if msg.String() == c.key {
			return actExport{format: c.format}, false, nil
		}
	}
	if msg.String() == "esc" || msg.String() == "q" {
		return nil, false, nil
	}
	return nil, true, nil
}

func (d *exportDialog) paste(string) tea.Cmd { return nil }

func (d *exportDialog) view(st *themes.Styles, w, _ int) string {
	var b strings.Builder
	for _, c := range exportChoices {
		b.WriteString(st.HelpKey.Render(c.key) + "  " + st.Text.Render(c.label) + "\n")
	}
	return dialogBox(st, dialogWidth(w, 40), "Export report", strings.TrimRight(b.String(), "\n"), st.HelpDesc.Render("esc cancel"))
}

func (d *exportDialog) keyMap() help.KeyMap {
	return formKeyMap{short: []key.Binding{kb([]string{"m", "h", "j", "b", "r", "c"}, "m/h/j/b/r/c", "format"), keyEsc}}
}

// sourceDialog shows one cited source in full.
type sourceDialog struct{ src report.CitedSource }

func (d *sourceDialog) handle(msg tea.KeyPressMsg, _ time.Time) (action, bool, tea.Cmd) {
	switch {
	case key.Matches(msg, pKeys.Open):
		if u := sourceURL(d.src); u != "" {
			return actOpenURL{url: u}, true, nil
		}
	case key.Matches(msg, pKeys.CopyRef):
		return copyRefAction(d.src), true, nil
	case key.Matches(msg, pKeys.CopyDOI):
		return copyDOIAction(d.src), true, nil
	case key.Matches(msg, keyEsc, pKeys.Detail, gKeys.Quit):
		return nil, false, nil
	}
	return nil, true, nil
}

func (d *sourceDialog) paste(string) tea.Cmd { return nil }

func (d *sourceDialog) view(st *themes.Styles, w, h int) string {
	dw := dialogWidth(w, 84)
	body := strings.Join(sourceLines(st, d.src, dw-4, true, true, ""), "\n")
	lines := strings.Split(body, "\n")
	if len(lines) > h-8 && h > 10 {
		lines = append(lines[:h-9], st.Subtle.Render("…"))
	}
	return dialogBox(st, dw, "Source ["+itoa(d.src.N)+"]", strings.Join(lines, "\n"),
		helpLines(st, d.keyMap().ShortHelp(), dw-st.Dialog.GetHorizontalFrameSize()))
}

func (d *sourceDialog) keyMap() help.KeyMap {
	o, y, yy, esc := pKeys.Open, pKeys.CopyRef, pKeys.CopyDOI, keyEsc
	o.SetHelp("o", "open URL")
	y.SetHelp("y", "copy reference")
	yy.SetHelp("Y", "copy DOI")
	esc.SetHelp("esc", "close")
	return formKeyMap{short: []key.Binding{o, y, yy, esc}}
}

// overlay draws a dialog centred over the base view.
func overlay(base, top string, w, h int) string {
	tw, th := lipgloss.Width(top), lipgloss.Height(top)
	x, y := max((w-tw)/2, 0), max((h-th)/2, 0)
	c := lipgloss.NewCanvas(w, h)
	c.Compose(lipgloss.NewCompositor(lipgloss.NewLayer(base), lipgloss.NewLayer(top).X(x).Y(y).Z(1)))
	return c.Render()
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
