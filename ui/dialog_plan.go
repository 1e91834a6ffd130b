package ui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/textkit"
	"github.com/researchtui/researchtui/themes"
)

// planDialog puts the research plan to the person before anything is
// searched (--review-plan ask, the form's setting): they edit, delete and
// add sub-questions, rewrite queries, toggle sources, and go on with a;
// esc decides later (the run waits, resumable, as for a review).
type planDialog struct {
	id      string
	plan    pipeline.Plan
	rows    []planRow
	sources map[string]bool
	off     map[string]string // sources this researchtui cannot search, with what each needs
	cursor  int               // a row, or len(rows): the sources line
	srcCur  int
	opened  time.Time
	armed   time.Time
	editing planEdit
	input   lineInput
	err     string
}

// planRow is one sub-question as the person is leaving it.
type planRow struct {
	id       string // the planner's; "" for one the person added
	question string
	queries  []string // nil for an added one: the planner writes them
	deleted  bool
	changed  bool
}

// What the dialog's input is editing.
type planEdit int

const (
	editNone planEdit = iota
	editQuestion
	editQueries
	editAdd
)

func newPlanDialog(id string, p pipeline.Plan, now time.Time, st *themes.Styles, off map[string]string) *planDialog {
	d := &planDialog{id: id, plan: p, sources: map[string]bool{}, off: off, opened: now, armed: now.Add(reviewGrace)}
	for _, sq := range p.SubQuestions {
		d.rows = append(d.rows, planRow{id: sq.ID, question: sq.Question, queries: sq.Queries.List()})
	}
	for _, s := range p.Sources {
		d.sources[s] = true
	}
	d.input = newInput(st, "", 60)
	return d
}

// decision is the plan as the person left it; nil Plan when unchanged.
func (d *planDialog) decision() pipeline.Decision {
	changed := false
	e := &pipeline.PlanEdit{}
	for _, r := range d.rows {
		changed = changed || r.deleted || r.changed || r.id == ""
		if r.deleted {
			continue
		}
		e.SubQuestions = append(e.SubQuestions, pipeline.PlanItem{ID: r.id, Question: r.question, Queries: r.queries})
	}
	for _, s := range runopts.KnownSources {
		if d.sources[s] {
			e.Sources = append(e.Sources, s)
		}
	}
	// The same sources in another order are the same plan: the planner
	// lists them by routing, the dialog in KnownSources' order.
	if !sameSet(e.Sources, d.plan.Sources) {
		changed = true
	}
	if !changed {
		return pipeline.Decision{Approve: true}
	}
	return pipeline.Decision{Approve: true, Plan: e}
}

// sameSet says whether a and b hold the same strings, in any order.
func sameSet(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(slices.Compact(x), slices.Compact(y))
}

func (d *planDialog) live() int {
	n := 0
	for _, r := range d.rows {
		if !r.deleted {
			n++
		}
	}
	return n
}

func (d *planDialog) handle(msg tea.KeyPressMsg, now time.Time) (action, bool, tea.Cmd) {
	if now.Before(d.armed) { // a keystroke meant for the screen before
		if next := now.Add(reviewGrace); next.After(d.armed) {
			d.armed = next
		}
		if limit := d.opened.Add(reviewGraceMax); d.armed.After(limit) {
			d.armed = limit
		}
		return nil, true, nil
	}
	if d.editing != editNone {
		return d.handleInput(msg)
	}
	d.err = ""
	onRow := d.cursor < len(d.rows)
	switch {
	case key.Matches(msg, nav.Up):
		d.cursor = max(d.cursor-1, 0)
	case key.Matches(msg, nav.Down), msg.String() == "tab":
		d.cursor = min(d.cursor+1, len(d.rows))
	case key.Matches(msg, planK.Go):
		dec := d.decision()
		if dec.Plan != nil && len(dec.Plan.Sources) == 0 {
			d.err = "tick at least one source"
			return nil, true, nil
		}
		return actDecide{id: d.id, d: dec}, false, nil
	case key.Matches(msg, vKeys.Later):
		return actLater{id: d.id}, false, nil
	case key.Matches(msg, planK.Cancel):
		// Declined, the plan waits: v on the run screen opens it again.
		return actRestore{d: newConfirmDialog("Cancel this run?", "Nothing has been searched yet. The session is kept as cancelled; R on the sessions screen resumes it at this plan.", actCancelRun{id: d.id}, now)}, false, nil
	case key.Matches(msg, planK.Add):
		return d.startInput(editAdd, "")
	case !onRow:
		_, d.err = toggleSourceRow(d.sources, d.off, &d.srcCur, msg.String())
	case key.Matches(msg, planK.Edit):
		return d.startInput(editQuestion, d.rows[d.cursor].question)
	case key.Matches(msg, planK.Queries):
		return d.startInput(editQueries, strings.Join(d.rows[d.cursor].queries, "; "))
	case key.Matches(msg, planK.Delete):
		r := &d.rows[d.cursor]
		if !r.deleted && d.live() == 1 {
			d.err = "the plan needs at least one sub-question"
			return nil, true, nil
		}
		r.deleted = !r.deleted
	}
	return nil, true, nil
}

// toggleSourceRow moves along a row of sources (←/→) and ticks the one under
// the cursor (space, x); it says whether a tick changed, or why a source
// that this researchtui cannot search (off, with what it needs) cannot be
// ticked.
func toggleSourceRow(sources map[string]bool, off map[string]string, cur *int, k string) (changed bool, refused string) {
	n := len(runopts.KnownSources)
	switch k {
	case "left", "h":
		*cur = (*cur + n - 1) % n
	case "right", "l":
		*cur = (*cur + 1) % n
	case "space", "x":
		s := runopts.KnownSources[*cur]
		if why := off[s]; why != "" && !sources[s] {
			return false, s + " is off: " + why
		}
		sources[s] = !sources[s]
		return true, ""
	}
	return false, ""
}

// sourceBox is a source's tick box: "[-]" for one that cannot be searched
// here (doctor says why), shown unticked.
func sourceBox(ticked bool, off string) string {
	switch {
	case off != "" && !ticked:
		return "[-]"
	case ticked:
		return "[x]"
	}
	return "[ ]"
}

func (d *planDialog) startInput(e planEdit, value string) (action, bool, tea.Cmd) {
	d.editing = e
	d.input.SetValue(value)
	d.input.CursorEnd()
	return nil, true, d.input.Focus()
}

func (d *planDialog) handleInput(msg tea.KeyPressMsg) (action, bool, tea.Cmd) {
	switch msg.String() {
	case "esc":
		d.editing = editNone
		d.input.Blur()
		return nil, true, nil
	case "enter":
		v := strings.TrimSpace(sanitizeLine(d.input.Value()))
		switch {
		case v == "" && d.editing != editQueries:
			d.err = "type some words first (esc leaves it as it was)"
			return nil, true, nil
		case d.editing == editAdd:
			d.rows = append(d.rows, planRow{question: v})
			d.cursor = len(d.rows) - 1
		case d.editing == editQuestion:
			r := &d.rows[d.cursor]
			r.changed = r.changed || v != r.question
			r.question = v
		case d.editing == editQueries:
			var qs []string
			for _, q := range strings.Split(v, ";") {
				if q = strings.TrimSpace(q); q != "" {
					qs = append(qs, q)
				}
			}
			r := &d.rows[d.cursor]
			r.changed = r.changed || strings.Join(qs, ";") != strings.Join(r.queries, ";")
			r.queries = qs
		}
		d.editing = editNone
		d.err = ""
		d.input.Blur()
		return nil, true, nil
	}
	d.input.Update(msg)
	return nil, true, nil
}

func (d *planDialog) paste(s string) tea.Cmd {
	if d.editing != editNone {
		d.input.Insert(pastedLine(s))
	}
	return nil
}

func (d *planDialog) view(st *themes.Styles, w, h int) string {
	dw := dialogWidth(w, 96)
	inner := dw - st.Dialog.GetHorizontalFrameSize()
	d.input.SetWidth(max(inner-14, 10))
	lines := []string{st.Muted.Render(trunc(textkit.Plural(d.live(), "sub-question", "sub-questions")+" · nothing is searched until you go on", inner)), ""}
	budget := max(h-14, 4)
	used := 0
	for i, r := range d.rows {
		marker, hs := "  ", st.Heading
		if i == d.cursor {
			marker, hs = st.Cursor.Render("▸ "), st.Selected
		}
		head := fmt.Sprintf("%d. %s", i+1, sanitizeLine(r.question))
		qs := "queries: " + sanitizeLine(strings.Join(r.queries, " · "))
		switch {
		case r.deleted:
			head, hs = fmt.Sprintf("%d. (deleted) %s", i+1, sanitizeLine(r.question)), st.Subtle
		case r.id == "":
			head = fmt.Sprintf("%d. + %s", i+1, sanitizeLine(r.question))
		}
		if r.queries == nil {
			qs = "queries: the planner writes them"
		}
		block := []string{marker + hs.Render(trunc(head, inner-2))}
		if !r.deleted {
			block = append(block, "     "+st.Muted.Render(trunc(qs, inner-5)))
		}
		if used+len(block) > budget && i != d.cursor {
			continue
		}
		lines = append(lines, block...)
		used += len(block)
	}
	lines = append(lines, "", d.sourcesLine(st, inner))
	switch {
	case d.editing != editNone:
		label := map[planEdit]string{editQuestion: "Question: ", editQueries: "Queries: ", editAdd: "New: "}[d.editing]
		lines = append(lines, "", st.Accent.Render(padRight(label, 10))+d.input.View())
		if d.editing == editQueries {
			lines = append(lines, st.Subtle.Render("          separate queries with ;"))
		}
	case d.err != "":
		lines = append(lines, "", st.Error.Render(d.err))
	}
	foot := helpLines(st, d.keyMap().ShortHelp(), inner)
	if d.editing != editNone {
		foot = st.HelpDesc.Render("enter keep · esc leave as it was")
	}
	return dialogBox(st, dw, "The research plan", strings.Join(lines, "\n"), foot)
}

// sourcesLine is the sources row, ticked ones marked, the cursor's
// highlighted when the row has the focus.
func (d *planDialog) sourcesLine(st *themes.Styles, inner int) string {
	label := st.Muted.Render("  Sources ")
	if d.cursor == len(d.rows) {
		label = st.Cursor.Render("▸ Sources ")
	}
	var items []string
	for i, s := range runopts.KnownSources {
		box := sourceBox(d.sources[s], d.off[s])
		style := st.Text
		if d.off[s] != "" {
			style = st.Muted
		}
		if d.cursor == len(d.rows) && i == d.srcCur {
			style = st.Selected
		}
		items = append(items, style.Render(box+" "+s))
	}
	return label + wrapStyled(items, inner-10, strings.Repeat(" ", 10))
}

// wrapStyled joins styled items with two spaces, wrapping to width;
// continuation lines start with indent.
func wrapStyled(items []string, width int, indent string) string {
	var b strings.Builder
	w := 0
	for _, it := range items {
		iw := lipgloss.Width(it)
		if w > 0 && w+2+iw > width {
			b.WriteString("\n" + indent)
			w = 0
		} else if w > 0 {
			b.WriteString("  ")
			w += 2
		}
		b.WriteString(it)
		w += iw
	}
	return b.String()
}

func (d *planDialog) keyMap() help.KeyMap { return planKeyMap{} }
