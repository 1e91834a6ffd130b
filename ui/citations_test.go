package ui

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/researchtui/researchtui/pipeline/report"
)

// clipboardOf returns what a Cmd writes to the terminal's clipboard (OSC
// 52), or "" when it doesn't.
func clipboardOf(t *testing.T, cmd tea.Cmd) string {
	t.Helper()
	if cmd == nil {
		return ""
	}
	msg := cmd()
	v := reflect.ValueOf(msg)
	if v.Kind() != reflect.String || v.Type().Name() != "setClipboardMsg" {
		return ""
	}
	return v.String()
}

// sgrText matches a styled run of text: its SGR parameters and the text up
// to the next escape.
var sgrText = regexp.MustCompile(`\x1b\[([0-9;]*)m([^\x1b]*)`)

// reversed lists the texts drawn in reverse video.
func reversed(view string) []string {
	var out []string
	for _, m := range sgrText.FindAllStringSubmatch(view, -1) {
		if m[2] == "" {
			continue
		}
		for _, p := range strings.Split(m[1], ";") {
			if p == "7" {
				out = append(out, m[2])
				break
			}
		}
	}
	return out
}

// TestCitationSelectsSource: a number key selects that source, shown with
// its quote and how it was read, and its citations in the report are
// marked; ]/[ walk the citations in reading order; esc clears the
// selection before it leaves the report.
func TestCitationSelectsSource(t *testing.T) {
	for _, w := range []int{80, 120} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			m, _ := newTestModel(t, w, 24, "dark", false)
			openFixtureReport(t, m)
			r := &m.report
			before := ansi.Strip(m.render())
			press(t, m, "2")
			if !r.citeSel || r.srcCursor != 1 {
				t.Fatalf("2: selected %v, cursor %d", r.citeSel, r.srcCursor)
			}
			out := ansi.Strip(m.render())
			for _, want := range []string{"[2] 2D/3D heterostructures", "T80 lifetime exceeded 1,000 h", "abstract only"} {
				if !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
					t.Errorf("%d columns: the selected source lacks %q:\n%s", w, want, out)
				}
			}
			if strings.Contains(before, "abstract only") && w < 110 {
				t.Error("the narrow report showed a source before one was selected")
			}
			// Its citation in the text is marked (reverse video), nothing else.
			if got := reversed(m.render()); !reflect.DeepEqual(got, []string{"[2]"}) {
				t.Errorf("%d columns: marked in reverse video: %q, want [2] only", w, got)
			}

			press(t, m, "esc")
			if r.citeSel || m.screen != screenReport {
				t.Fatal("esc clears the selection first")
			}
			// ] from the top: [1], [2], then [1] and [3] of "[1][3]".
			var got []int
			for range 4 {
				press(t, m, "]")
				got = append(got, r.srcCursor+1)
			}
			if !reflect.DeepEqual(got, []int{1, 2, 1, 3}) {
				t.Errorf("] ] ] ]: sources %v, want [1 2 1 3]", got)
			}
			press(t, m, "]")
			if r.srcCursor != 2 || !strings.Contains(m.notice, "no more citations") {
				t.Errorf("] past the last citation: cursor %d, notice %q", r.srcCursor, m.notice)
			}
			press(t, m, "[")
			if r.srcCursor != 0 {
				t.Errorf("[: source %d, want 1", r.srcCursor+1)
			}
			press(t, m, "9")
			if r.srcCursor != 0 || !m.noticeErr {
				t.Errorf("9 in a report with 3 sources: cursor %d, notice %q", r.srcCursor, m.notice)
			}
			press(t, m, "esc", "esc")
			if m.screen != screenSessions {
				t.Error("esc esc: back to the sessions")
			}
		})
	}
}

// Numbers above 9 are typed digit by digit.
func TestCitationNumbersAboveNine(t *testing.T) {
	m, svc := newTestModel(t, 120, 40, "dark", false)
	rep := fixtureReport()
	for n := 4; n <= 12; n++ {
		rep.Sources = append(rep.Sources, report.CitedSource{N: n, Title: fmt.Sprintf("Source %d", n)})
		rep.Markdown = strings.Replace(rep.Markdown, "## References", fmt.Sprintf("More [%d].\n\n## References", n), 1)
	}
	svc.reports["s4"] = rep
	openFixtureReport(t, m)
	r := &m.report
	press(t, m, "1", "2")
	if r.srcCursor != 11 {
		t.Errorf("1 2: source %d, want 12", r.srcCursor+1)
	}
	press(t, m, "3")
	if r.srcCursor != 2 {
		t.Errorf("then 3 (no [123]): source %d, want 3", r.srcCursor+1)
	}
	press(t, m, "j", "1")
	if r.srcCursor != 0 {
		t.Errorf("another key ends a number: source %d, want 1", r.srcCursor+1)
	}
}

// TestCopyReference: y sends the selected source's APA reference to the
// clipboard with OSC 52 and says so; Y its DOI, or its address without
// one; with nothing selected y does nothing.
func TestCopyReference(t *testing.T) {
	m, _ := newTestModel(t, 80, 24, "dark", false)
	openFixtureReport(t, m)
	if _, cmd := m.Update(kp("y")); clipboardOf(t, cmd) != "" {
		t.Fatal("y with no source selected copied something")
	}
	press(t, m, "1")
	_, cmd := m.Update(kp("y"))
	want := fixtureReport().Sources[0].Reference
	if got := clipboardOf(t, cmd); got != want {
		t.Fatalf("y copied %q, want %q", got, want)
	}
	if !strings.Contains(m.notice, "copied the APA reference of [1]") {
		t.Errorf("notice %q", m.notice)
	}
	_, cmd = m.Update(kp("Y"))
	if got := clipboardOf(t, cmd); got != "10.1038/nenergy.2021.1" {
		t.Errorf("Y copied %q, want the DOI", got)
	}
	press(t, m, "2")
	_, cmd = m.Update(kp("Y"))
	if got := clipboardOf(t, cmd); got != "https://arxiv.org/abs/2201.00001" || !strings.Contains(m.notice, "no DOI") {
		t.Errorf("Y without a DOI copied %q (notice %q), want the address", got, m.notice)
	}
	// From the sources pane too, and in tmux the notice says what it needs.
	m.opts.tmux = true
	press(t, m, "esc", "tab", "j", "j")
	_, cmd = m.Update(kp("y"))
	if got := clipboardOf(t, cmd); got != fixtureReport().Sources[2].Reference || !strings.Contains(m.notice, "set-clipboard on") {
		t.Errorf("y in the sources pane copied %q (notice %q)", got, m.notice)
	}
	// And from the source's details.
	press(t, m, "k", "enter")
	if _, ok := m.dialog.(*sourceDialog); !ok {
		t.Fatalf("enter: %T", m.dialog)
	}
	_, cmd = m.Update(kp("Y"))
	if got := clipboardOf(t, cmd); got != "https://arxiv.org/abs/2201.00001" || m.dialog == nil {
		t.Errorf("Y in the details copied %q (dialog %T)", got, m.dialog)
	}
}
