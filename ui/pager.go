package ui

import (
	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
)

// pager scrolls a read-only dialog (timeline, candidates) by rows and
// pages; the key that opened the dialog closes it too.
type pager struct {
	offset int
	room   int // rows shown by the last frame, for paging
	close  string
}

// key applies a key; false when it closes the dialog. end is the row
// count (the offset is clamped when drawn).
func (p *pager) key(k string, end int) bool {
	page := max(p.room-1, 1)
	switch k {
	case "esc", "q", p.close:
		return false
	case "down", "j":
		p.offset++
	case "up", "k":
		p.offset--
	case "pgdown", "space", "ctrl+d":
		p.offset += page
	case "pgup", "ctrl+u":
		p.offset -= page
	case "g", "home":
		p.offset = 0
	case "G", "end":
		p.offset = end
	}
	p.offset = max(p.offset, 0)
	return true
}

func (p *pager) keyMap() help.KeyMap {
	return formKeyMap{short: []key.Binding{
		kb([]string{"j", "k", "up", "down"}, "j/k", "scroll"),
		kb([]string{"pgdown", "pgup", "space", "ctrl+d", "ctrl+u"}, "pgdn/pgup", "page"),
		kb([]string{"g", "G", "home", "end"}, "g/G", "top/bottom"),
		kb([]string{"esc", "q", p.close}, "esc", "close"),
	}}
}
