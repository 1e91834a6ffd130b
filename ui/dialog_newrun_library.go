package ui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/researchtui/researchtui/themes"
)

// The new-research form's Library row: the collections of the person's
// library (loaded when the form opens), any of which limit the local
// source; none ticked is all of it.

// collectionsLoadedMsg brings the library's collections to an open form.
type collectionsLoadedMsg struct {
	cols []LibraryCollection
	err  error
}

func loadCollectionsCmd(svc services) tea.Cmd {
	return func() tea.Msg {
		cols, err := svc.Collections()
		return collectionsLoadedMsg{cols: cols, err: err}
	}
}

// libraryRow is the row's state.
type libraryRow struct {
	cols   []LibraryCollection
	ticked map[string]bool
	cur    int
	err    string // the collections could not be read
}

// handle moves the cursor (←/→) or ticks the collection under it (space);
// ticking one none of whose items has its file says what that means.
func (r *libraryRow) handle(k string) (note string) {
	if len(r.cols) == 0 {
		return ""
	}
	switch k {
	case "left", "h":
		r.cur = (r.cur + len(r.cols) - 1) % len(r.cols)
	case "right", "l":
		r.cur = (r.cur + 1) % len(r.cols)
	case "space", "x":
		c := r.cols[r.cur]
		r.ticked[c.Name] = !r.ticked[c.Name]
		if r.ticked[c.Name] && c.Files == 0 {
			return sanitizeLine(c.Name) + ": no item has its file — each is read by its abstract, and one known by its title only cannot be read"
		}
	}
	return ""
}

// names are the ticked collections, in the list's order.
func (r *libraryRow) names() []string {
	var out []string
	for _, c := range r.cols {
		if r.ticked[c.Name] {
			out = append(out, c.Name)
		}
	}
	return out
}

// view draws the collections that fit in w around the cursor, each with
// its count, and what none ticked means.
func (r *libraryRow) view(st *themes.Styles, focused bool, w int) string {
	switch {
	case r.err != "":
		return st.Error.Render(trunc("library: "+r.err, w))
	case len(r.cols) == 0:
		return st.Muted.Render(trunc("nothing imported (researchtui library import)", w))
	}
	items := make([]string, len(r.cols))
	widths := make([]int, len(r.cols))
	for i, c := range r.cols {
		box := "[ ]"
		if r.ticked[c.Name] {
			box = "[x]"
		}
		items[i] = fmt.Sprintf("%s %s (%d, %d with files)", box, sanitizeLine(trunc(c.Name, 28)), c.Items, c.Files)
		if c.Files == c.Items {
			items[i] = fmt.Sprintf("%s %s (%d)", box, sanitizeLine(trunc(c.Name, 28)), c.Items)
		}
		widths[i] = len([]rune(items[i])) + 2
	}
	// a window of whole items around the cursor
	lo, hi, used := r.cur, r.cur+1, widths[r.cur]
	for {
		grew := false
		if hi < len(items) && used+widths[hi] <= w-4 {
			used += widths[hi]
			hi++
			grew = true
		}
		if lo > 0 && used+widths[lo-1] <= w-4 {
			lo--
			used += widths[lo]
			grew = true
		}
		if !grew {
			break
		}
	}
	var out []string
	if lo > 0 {
		out = append(out, st.Muted.Render("‹"))
	}
	for i := lo; i < hi; i++ {
		style := st.Text
		if focused && i == r.cur {
			style = st.Selected
		}
		out = append(out, style.Render(items[i]))
	}
	if hi < len(items) {
		out = append(out, st.Muted.Render("›"))
	}
	return strings.Join(out, "  ")
}
