package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/themes"
)

// screens builds each screen and dialog from fixed data; the goldens are
// View() at a fixed size with a fixed clock. `go test ./ui/ -update`
// regenerates them.
var screens = []struct {
	name  string
	setup func(t *testing.T, m *rootModel, svc *fakeServices, c *clock)
}{
	{"sessions", func(t *testing.T, m *rootModel, svc *fakeServices, c *clock) {}},
	{"sessions_question", func(t *testing.T, m *rootModel, svc *fakeServices, c *clock) {
		typeText(t, m, "quantum dots in solar cells: do they beat perovskites on stability and cost per watt today?")
	}},
	{"sessions_list", func(t *testing.T, m *rootModel, svc *fakeServices, c *clock) {
		toList(t, m)
		press(t, m, "j")
	}},
	{"sessions_filter", func(t *testing.T, m *rootModel, svc *fakeServices, c *clock) {
		toList(t, m)
		press(t, m, "/", "c", "o", "m")
	}},
	{"sessions_living", func(t *testing.T, m *rootModel, svc *fakeServices, c *clock) {
		svc.sessions = livingSessions()
		m.Update(listLoaded(m, livingSessions()...))
		toList(t, m)
		press(t, m, "g", "down", "down")
	}},
	{"report_updated", func(t *testing.T, m *rootModel, svc *fakeServices, c *clock) {
		svc.reports["s4"] = updatedReport()
		openFixtureReport(t, m)
	}},
	{"sessions_empty", func(t *testing.T, m *rootModel, svc *fakeServices, c *clock) {
		m.Update(listLoaded(m))
	}},
	{"sessions_banner", func(t *testing.T, m *rootModel, svc *fakeServices, c *clock) {}},
	{"confirm_delete", func(t *testing.T, m *rootModel, svc *fakeServices, c *clock) {
		toList(t, m)
		press(t, m, "G", "d")
	}},
	{"new_research", func(t *testing.T, m *rootModel, svc *fakeServices, c *clock) {
		press(t, m, "H", "o", "w", "ctrl+o")
	}},
	{"help_sessions", func(t *testing.T, m *rootModel, svc *fakeServices, c *clock) {
		toList(t, m)
		press(t, m, "?")
	}},
	{"help_line", func(t *testing.T, m *rootModel, svc *fakeServices, c *clock) {
		press(t, m, "f1")
	}},
	{"quit_confirm", func(t *testing.T, m *rootModel, svc *fakeServices, c *clock) {
		startScripted(t, m, svc, c, false)
		press(t, m, "q")
	}},
	{"run", func(t *testing.T, m *rootModel, svc *fakeServices, c *clock) {
		startScripted(t, m, svc, c, false)
	}},
	{"run_streaming_analyst", func(t *testing.T, m *rootModel, svc *fakeServices, c *clock) {
		r := startScripted(t, m, svc, c, false)
		feedRun(t, m, r, streamingAnswer(pipeline.StageAnalyse, "analyst · Perovskite humidity", analystStream)...)
	}},
	{"run_streaming_reviewer", func(t *testing.T, m *rootModel, svc *fakeServices, c *clock) {
		r := startScripted(t, m, svc, c, false)
		feedRun(t, m, r, streamingAnswer(pipeline.StageReview, "reviewer", reviewerStream)...)
	}},
	{"review", func(t *testing.T, m *rootModel, svc *fakeServices, c *clock) {
		startScripted(t, m, svc, c, true)
	}},
	{"plan_review", func(t *testing.T, m *rootModel, svc *fakeServices, c *clock) {
		startPlanReview(t, m, svc, c)
		press(t, m, "down", "d", "n")
		typeText(t, m, "What do field tests show?")
		press(t, m, "enter", "down")
	}},
	{"report", func(t *testing.T, m *rootModel, svc *fakeServices, c *clock) {
		openFixtureReport(t, m)
	}},
	{"report_cited", func(t *testing.T, m *rootModel, svc *fakeServices, c *clock) {
		openFixtureReport(t, m)
		press(t, m, "]", "]")
	}},
	{"report_sources", func(t *testing.T, m *rootModel, svc *fakeServices, c *clock) {
		openFixtureReport(t, m)
		press(t, m, "tab", "down")
	}},
	{"source_detail", func(t *testing.T, m *rootModel, svc *fakeServices, c *clock) {
		openFixtureReport(t, m)
		press(t, m, "tab", "down", "enter")
	}},
	{"report_find", func(t *testing.T, m *rootModel, svc *fakeServices, c *clock) {
		openFixtureReport(t, m)
		press(t, m, "/", "P", "b", "I", "enter")
	}},
	{"export", func(t *testing.T, m *rootModel, svc *fakeServices, c *clock) {
		openFixtureReport(t, m)
		press(t, m, "e")
	}},
	{"report_support", func(t *testing.T, m *rootModel, svc *fakeServices, c *clock) {
		svc.reports["s4"] = supportReport()
		openFixtureReport(t, m)
		press(t, m, "]", "]")
	}},
	{"report_notices", func(t *testing.T, m *rootModel, svc *fakeServices, c *clock) {
		svc.reports["s4"] = noticesReport(t)
		openFixtureReport(t, m)
		press(t, m, "tab")
	}},
	{"source_detail_retracted", func(t *testing.T, m *rootModel, svc *fakeServices, c *clock) {
		svc.reports["s4"] = noticesReport(t)
		openFixtureReport(t, m)
		press(t, m, "tab", "enter")
	}},
	{"source_detail_corrected", func(t *testing.T, m *rootModel, svc *fakeServices, c *clock) {
		svc.reports["s4"] = noticesReport(t)
		openFixtureReport(t, m)
		press(t, m, "tab", "down", "down", "enter")
	}},
}

// openFixtureReport opens the completed session s4's report from the list.
func openFixtureReport(t testing.TB, m *rootModel) {
	t.Helper()
	toList(t, m)
	press(t, m, "g", "down", "down", "enter")
	if m.screen != screenReport || m.report.id != "s4" {
		t.Fatalf("the report of s4 did not open: screen %v, id %q", m.screen, m.report.id)
	}
}

// screenConfig is the configuration a screen's program starts with, where
// it isn't the default.
var screenConfig = map[string]func(*Config){
	"sessions_banner": func(c *Config) { c.BackendErr = errBackend },
}

// startScripted starts a run by typing the question on the question line
// and feeds it the scripted events up to (and, with review, including) the
// review request.
// scriptedRun is a model of w×h cells on a test clock with the scripted
// run started and its events up to the review fed: where most run-screen
// tests begin.
func scriptedRun(t testing.TB, w, h int) (*rootModel, *fakeServices, *clock, *fakeRun) {
	t.Helper()
	m, svc := newTestModel(t, w, h, "dark", false)
	c := &clock{t: testNow}
	m.now = c.now
	return m, svc, c, startScripted(t, m, svc, c, false)
}

func startScripted(t testing.TB, m *rootModel, svc *fakeServices, c *clock, review bool) *fakeRun {
	t.Helper()
	if m.sessions.focus != focusLine {
		press(t, m, "tab")
	}
	typeText(t, m, "Perovskite stability")
	press(t, m, "enter")
	if len(svc.runs) == 0 {
		t.Fatal("no run started")
	}
	r := svc.runs[len(svc.runs)-1]
	evs := scriptToReview(r.id)
	if !review {
		evs = evs[:len(evs)-1]
	}
	feedRun(t, m, r, evs...)
	return r
}

func TestGoldenScreens(t *testing.T) {
	for _, sz := range [][2]int{{80, 24}, {120, 40}} {
		for _, sc := range screens {
			t.Run(fmt.Sprintf("%s_%dx%d", sc.name, sz[0], sz[1]), func(t *testing.T) {
				var edit []func(*Config)
				if e := screenConfig[sc.name]; e != nil {
					edit = append(edit, e)
				}
				m, svc := newTestModel(t, sz[0], sz[1], "dark", false, edit...)
				c := &clock{t: testNow}
				m.now = c.now
				sc.setup(t, m, svc, c)
				out := ansi.Strip(m.render())
				checkFrame(t, out, sz[0], sz[1])
				golden.RequireEqual(t, out)
			})
		}
	}
}

// TestGoldenThemes keeps one coloured golden per theme (and NO_COLOR), so a
// palette change is a reviewed diff.
func TestGoldenThemes(t *testing.T) {
	names := append(themes.Names(), "nocolor")
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			theme, noColor := name, false
			if name == "nocolor" {
				theme, noColor = "dark", true
			}
			m, svc := newTestModel(t, 80, 24, theme, noColor)
			c := &clock{t: testNow}
			m.now = c.now
			startScripted(t, m, svc, c, false)
			golden.RequireEqual(t, []byte(m.render()))
		})
	}
}

// checkFrame asserts the layout contract: never wider or taller than the
// terminal.
func checkFrame(t *testing.T, out string, w, h int) {
	t.Helper()
	lines := splitLines(out)
	if len(lines) > h {
		t.Errorf("view has %d lines, terminal has %d", len(lines), h)
	}
	for i, l := range lines {
		if n := ansi.StringWidth(l); n > w {
			t.Errorf("line %d is %d cells wide (terminal %d): %q", i, n, w, l)
		}
	}
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// TestResizeSurvives drives a session through many sizes, down to the
// minimum, checking every frame fits.
func TestResizeSurvives(t *testing.T) {
	m, svc := newTestModel(t, 80, 24, "dark", false)
	c := &clock{t: testNow}
	m.now = c.now
	startScripted(t, m, svc, c, true)
	sizes := [][2]int{{80, 24}, {200, 60}, {81, 25}, {100, 30}, {40, 10}, {30, 5}, {120, 40}, {80, 24}}
	for _, screen := range []func(){
		func() {},
		func() { c.advance(time.Second); press(t, m, "esc", "esc") },
		func() { openFixtureReport(t, m) },
	} {
		screen()
		for _, sz := range sizes {
			_, cmd := m.Update(tea_ws(sz[0], sz[1]))
			run(t, m, cmd)
			settle(m)
			checkFrame(t, ansi.Strip(m.render()), sz[0], sz[1])
		}
	}
}

// TestReviewFooterKeys: every review key is visible in the dialog's footer,
// at 80 columns in one line and wrapped below that.
func TestReviewFooterKeys(t *testing.T) {
	for _, w := range []int{80, 60, 44} {
		m, svc := newTestModel(t, w, 24, "dark", false)
		c := &clock{t: testNow}
		m.now = c.now
		startScripted(t, m, svc, c, true)
		d, ok := m.dialog.(*reviewDialog)
		if !ok {
			t.Fatalf("%d columns: no review dialog (%T)", w, m.dialog)
		}
		out := ansi.Strip(d.view(m.st, w, 24))
		for _, want := range []string{"space toggle", "a accept", "r reject", "e note", "esc later"} {
			if !strings.Contains(out, want) {
				t.Errorf("%d columns: the footer lacks %q:\n%s", w, want, out)
			}
		}
		if w == 80 {
			for _, l := range strings.Split(out, "\n") {
				if strings.Contains(l, "space toggle") && !strings.Contains(l, "esc later") {
					t.Errorf("80 columns: the footer takes more than one line:\n%s", out)
				}
			}
		}
	}
}
