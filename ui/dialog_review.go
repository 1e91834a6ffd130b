package ui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/textkit"
	"github.com/researchtui/researchtui/themes"
)

// Grace period: a keystroke typed for the previous screen must not decide a
// review. Keys are ignored for reviewGrace after the dialog opens; each
// ignored key extends the quiet period (a burst of typing is absorbed
// whole), but never past reviewGraceMax (crush's permission dialog).
const (
	reviewGrace    = 400 * time.Millisecond
	reviewGraceMax = 1500 * time.Millisecond
)

// reviewDialog puts the reviewer's revision requests to the person.
type reviewDialog struct {
	id       string
	req      pipeline.ReviewRequest
	selected []bool
	cursor   int
	opened   time.Time
	armed    time.Time
	note     string
	editing  bool
	input    lineInput
	// dropping: r was pressed with a note typed; rejecting finalises
	// without revising, so the note would go unused: r again confirms.
	dropping bool
	// empty: a was pressed with nothing ticked and no note, which
	// finalises without revising: a again confirms.
	empty bool
}

func newReviewDialog(id string, req pipeline.ReviewRequest, now time.Time, st *themes.Styles) *reviewDialog {
	d := &reviewDialog{id: id, req: req, opened: now, armed: now.Add(reviewGrace)}
	d.selected = make([]bool, len(req.Requests))
	for i := range d.selected {
		d.selected[i] = true // accepting everything is the common path
	}
	d.input = newInput(st, "a note for the writer", 60)
	return d
}

func (d *reviewDialog) decision(approve bool) pipeline.Decision {
	dec := pipeline.Decision{Approve: approve, Note: strings.TrimSpace(d.note)}
	if !approve {
		dec.Note = "" // finalising revises nothing: no note is used
		return dec
	}
	for i, sel := range d.selected {
		if sel {
			dec.Accepted = append(dec.Accepted, d.req.Requests[i].ID)
		}
	}
	if len(dec.Accepted) == 0 && dec.Note == "" {
		// Nothing to revise with: accepting nothing is finalising.
		dec.Approve = false
	}
	return dec
}

func (d *reviewDialog) handle(msg tea.KeyPressMsg, now time.Time) (action, bool, tea.Cmd) {
	if now.Before(d.armed) {
		if next := now.Add(reviewGrace); next.After(d.armed) {
			d.armed = next
		}
		if limit := d.opened.Add(reviewGraceMax); d.armed.After(limit) {
			d.armed = limit
		}
		return nil, true, nil
	}
	if d.editing {
		switch msg.String() {
		case "enter":
			d.note = sanitize(d.input.Value())
			d.editing = false
			d.input.Blur()
			return nil, true, nil
		case "esc":
			d.editing = false
			d.input.Blur()
			d.input.SetValue(d.note)
			return nil, true, nil
		}
		d.input.Update(msg)
		return nil, true, nil
	}
	dropping, empty := d.dropping, d.empty
	d.dropping, d.empty = false, false
	switch {
	case key.Matches(msg, nav.Up):
		d.cursor = max(d.cursor-1, 0)
	case key.Matches(msg, nav.Down):
		d.cursor = min(d.cursor+1, max(len(d.req.Requests)-1, 0))
	case key.Matches(msg, vKeys.Toggle):
		if d.cursor < len(d.selected) {
			d.selected[d.cursor] = !d.selected[d.cursor]
		}
	case key.Matches(msg, vKeys.Accept):
		if dec := d.decision(true); !dec.Approve && !empty {
			d.empty = true // nothing to revise with: say so before finalising
			return nil, true, nil
		}
		return actDecide{id: d.id, d: d.decision(true)}, false, nil
	case key.Matches(msg, vKeys.Reject):
		if strings.TrimSpace(d.note) != "" && !dropping {
			d.dropping = true
			return nil, true, nil
		}
		return actDecide{id: d.id, d: d.decision(false)}, false, nil
	case key.Matches(msg, vKeys.Note):
		d.editing = true
		d.input.SetValue(d.note)
		d.input.CursorEnd()
		return nil, true, d.input.Focus()
	case key.Matches(msg, vKeys.Later):
		return actLater{id: d.id}, false, nil
	}
	return nil, true, nil
}

func (d *reviewDialog) paste(s string) tea.Cmd {
	if d.editing {
		d.input.SetValue(d.input.Value() + sanitizeLine(s))
	}
	return nil
}

var kindLabels = map[string]string{
	pipeline.KindMissingEvidence:  "missing evidence",
	pipeline.KindUnsupportedClaim: "unsupported claim",
	pipeline.KindStructure:        "structure",
	pipeline.KindClarity:          "clarity",
}

func (d *reviewDialog) view(st *themes.Styles, w, h int) string {
	dw := dialogWidth(w, 96)
	inner := dw - st.Dialog.GetHorizontalFrameSize()
	var lines []string
	verdict := fmt.Sprintf("Round %d · %s", d.req.Round, textkit.Plural(len(d.req.Requests), "revision request", "revision requests"))
	lines = append(lines, st.Warning.Render(verdict))
	if s := sanitize(d.req.Summary); s != "" {
		for _, l := range strings.Split(wrapText(s, inner), "\n") {
			lines = append(lines, st.Muted.Render(l))
		}
	}
	lines = append(lines, "")
	// Leave room for the frame, title, note (and what it means) and footer.
	budget := max(h-14, 4)
	if d.editing || d.note != "" {
		budget = max(budget-1, 4)
	}
	used := 0
	for i, r := range d.req.Requests {
		box := "[ ]"
		if d.selected[i] {
			box = "[x]"
		}
		kind := kindLabels[r.Kind]
		if kind == "" {
			kind = sanitizeLine(r.Kind)
		}
		head := fmt.Sprintf("%s %d. %s", box, i+1, kind)
		if sec := sanitizeLine(r.Section); sec != "" {
			head += " · " + sec
		}
		marker := "  "
		hs := st.Heading
		if i == d.cursor {
			marker = st.Cursor.Render("▸ ")
			hs = st.Selected
		}
		text := strings.Split(wrapText(sanitizeLine(r.Text), inner-6), "\n")
		if used+1+len(text) > budget && i != d.cursor {
			if used < budget {
				lines = append(lines, st.Subtle.Render(fmt.Sprintf("  … %d more (j/k)", len(d.req.Requests)-i)))
				used++
			}
			if i > d.cursor {
				break
			}
			continue
		}
		lines = append(lines, marker+hs.Render(trunc(head, inner-2)))
		for _, t := range text {
			lines = append(lines, "      "+st.Text.Render(t))
		}
		used += 1 + len(text)
	}
	lines = append(lines, "")
	switch {
	case d.editing:
		lines = append(lines, st.Accent.Render("Note: ")+d.input.View())
	case d.note != "":
		lines = append(lines, st.Accent.Render("Note: ")+st.Text.Render(trunc(d.note, inner-6)))
	}
	switch {
	case d.empty:
		lines = append(lines, st.Warning.Render(wrapText("nothing is ticked and there is no note, so accepting finalises the report as it is: a again to finalise, space to tick a request", inner)))
	case d.dropping:
		lines = append(lines, st.Warning.Render(wrapText("rejecting finalises the report as it is, and your note goes unused: r again to reject, a to accept with the note", inner)))
	case d.editing || d.note != "":
		// a note may ask for anything, so the writer gets the whole report
		// to revise, not only the sections of the ticked requests
		lines = append(lines, st.Muted.Render(trunc("with a note the writer may revise every section", inner)))
	}
	foot := helpLines(st, d.keyMap().ShortHelp(), inner)
	return dialogBox(st, dw, "The reviewer asks for revisions", strings.Join(lines, "\n"), foot)
}

// noteKeys are the keys while a note is typed: the review's keys type
// letters then, so the dialog and the screen's footer both say these.
var noteKeys = formKeyMap{short: []key.Binding{kb([]string{"enter"}, "enter", "save note"), kb([]string{"esc"}, "esc", "discard")}}

func (d *reviewDialog) keyMap() help.KeyMap {
	if d.editing {
		return noteKeys
	}
	return reviewKeyMap{}
}
