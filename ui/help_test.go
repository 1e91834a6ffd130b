package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestHelpShowsTheKeysThatWork: the help overlay of each screen and focus
// lists every key of the table that screen dispatches with (so it can't
// drift), and only those: on the question line q, t and ? type, so they
// are not offered as commands there. A key that works only in another
// state of the screen (y with a source selected) is listed with it.
func TestHelpShowsTheKeysThatWork(t *testing.T) {
	states := []struct {
		name          string
		setup         func(t *testing.T, m *rootModel)
		title         string
		want, wantNot []string
	}{
		{"question line", func(t *testing.T, m *rootModel) {}, "Sessions · question line",
			[]string{"enter start research", "ctrl+o research with options", "tab/↓ sessions list", "ctrl+w delete word", "f1 help", "ctrl+c quit"},
			[]string{"q quit", "t next theme", "? help", "d delete"}},
		{"list", func(t *testing.T, m *rootModel) { toList(t, m) }, "Sessions · list",
			[]string{"enter open", "n new research", "/ filter", "d delete", "R resume", "t next theme (saved)", "? help", "q quit", "tab question line",
				"↻ followed", "● an update wrote a new version you have not opened yet"},
			[]string{"esc clear filter", "p download"}},
		{"filter", func(t *testing.T, m *rootModel) { toList(t, m); press(t, m, "/") }, "Sessions · filter",
			[]string{"enter keep filter", "esc clear filter", "f1 help"},
			[]string{"q quit", "d delete"}},
		{"report", func(t *testing.T, m *rootModel) { openFixtureReport(t, m) }, "Report · report pane",
			[]string{"1-9 select source [n]", "] next citation", "[ previous citation", "/ find", "e export", "esc sessions", "enter sources pane",
				// keys that work in another state are named with it (issue 47)
				"y copy reference (APA) (a source selected)", "Y copy DOI or URL (a source selected)", "o open the source's URL (a source selected)",
				"n next match (after a find)", "N previous match (after a find)"},
			[]string{"y copy reference (APA) y", "n next match n"}},
		{"report, a citation selected", func(t *testing.T, m *rootModel) { openFixtureReport(t, m); press(t, m, "2") }, "Report · report pane",
			[]string{"y copy reference (APA)", "Y copy DOI or URL", "o open the source's URL", "enter source details", "esc clear selection"},
			nil},
		{"report, find", func(t *testing.T, m *rootModel) { openFixtureReport(t, m); press(t, m, "/") }, "Report · find",
			[]string{"enter find", "esc cancel", "f1 help"},
			[]string{"e export"}},
	}
	for _, s := range states {
		t.Run(s.name, func(t *testing.T) {
			m, _ := newTestModel(t, 120, 40, "dark", false)
			s.setup(t, m)
			table := m.keys()
			press(t, m, "f1")
			if !m.showHelp {
				t.Fatal("f1 did not open the help")
			}
			out := strings.Join(strings.Fields(ansi.Strip(m.render())), " ")
			if !strings.Contains(out, "Keys — "+s.title) {
				t.Errorf("help title: want %q in\n%s", s.title, out)
			}
			for _, col := range table.FullHelp() {
				for _, b := range col {
					h := b.Help()
					if kd := h.Key + " " + strings.Join(strings.Fields(h.Desc), " "); !strings.Contains(out, kd) {
						t.Errorf("the help lacks %q of the key table", kd)
					}
				}
			}
			for _, w := range s.want {
				if !strings.Contains(out, w) {
					t.Errorf("the help lacks %q", w)
				}
			}
			for _, w := range s.wantNot {
				if strings.Contains(out, w) {
					t.Errorf("the help offers %q, which doesn't work here", w)
				}
			}
			press(t, m, "esc")
			if m.showHelp {
				t.Error("esc did not close the help")
			}
		})
	}
}

// TestFooterKeepsHelp: at 80 columns a crowded footer drops hints from its
// middle, never the way back and the help.
func TestFooterKeepsHelp(t *testing.T) {
	m, _ := newTestModel(t, 80, 24, "dark", false)
	openFixtureReport(t, m)
	press(t, m, "2")
	lines := strings.Split(ansi.Strip(m.render()), "\n")
	foot := lines[len(lines)-1]
	if !strings.Contains(foot, "esc back") || !strings.Contains(foot, "? help") || strings.Contains(foot, "…") {
		t.Errorf("footer at 80 columns: %q", foot)
	}
}
