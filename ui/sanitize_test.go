package ui

import (
	"strings"
	"testing"

	"github.com/researchtui/researchtui/pipeline"
)

// hostile reports whether s still carries something a terminal would act
// on: ESC, BEL, other C0 controls (but newline), DEL or C1 controls.
func hostile(s string) bool {
	for _, r := range s {
		if (r < 0x20 && r != '\n') || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return true
		}
	}
	return false
}

func TestSanitize(t *testing.T) {
	cases := map[string]string{
		"plain":                           "plain",
		"Evil \x1b]0;pwned\x07 title":     "Evil  title",
		"clear \x1b[2J screen":            "clear  screen",
		"osc8 \x1b]8;;http://x\x1b\\link": "osc8 link",
		"bell\x07 and nul\x00":            "bell and nul",
		"c1 \u009b31m csi":                "c1  csi", // the 8-bit CSI goes whole, like the 7-bit one
		"rtl \u202eevil":                  "rtl evil",
		"tab\tstop":                       "tab    stop",
		"bad utf8 \xff!":                  "bad utf8 !",
		"multi\nline":                     "multi\nline",
	}
	for in, want := range cases {
		if got := sanitize(in); got != want {
			t.Errorf("sanitize(%q) = %q, want %q", in, got, want)
		}
	}
	if got := sanitizeLine("a\nb\r\nc"); got != "a b c" {
		t.Errorf("sanitizeLine: %q", got)
	}
}

// TestHostileTitleFromSourceFound: a web page's title with an OSC title
// setter and a clear-screen arrives in a SourceFound event and is drawn as
// plain text.
func TestHostileTitleFromSourceFound(t *testing.T) {
	m, svc := newTestModel(t, 120, 40, "dark", false)
	c := &clock{t: testNow}
	m.now = c.now
	startScripted(t, m, svc, c, false)
	out := m.render()
	if strings.Contains(out, "\x1b]0;") || strings.Contains(out, "\x1b[2J") || strings.Contains(out, "\x07") {
		t.Fatalf("hostile sequences reached the screen: %q", out)
	}
	if !strings.Contains(out, "Evil page") {
		t.Error("the title is still shown")
	}
}

// TestHostileTextInReport: the same through a report's source list, its
// Markdown and a streamed token delta.
func TestHostileTextInReport(t *testing.T) {
	m, svc := newTestModel(t, 120, 40, "dark", false)
	rep := fixtureReport()
	rep.Sources[0].Title = evilTitle
	rep.Sources[0].Quote = "quote \x1b]52;c;cHduZWQ=\x07 end"
	rep.Sources[0].Authors = []string{"Mallory \x1b[8m hidden"}
	rep.Markdown += "\n\nInjected \x1b]0;pwned\x07 markdown \x1b[2J.\n"
	svc.reports["s4"] = rep
	openFixtureReport(t, m)
	press(t, m, "tab")
	out := m.render()
	for _, bad := range []string{"\x1b]0;", "\x1b[2J", "\x1b]52", "\x07", "\x1b[8m"} {
		if strings.Contains(out, bad) {
			t.Fatalf("%q reached the screen", bad)
		}
	}
	if !strings.Contains(out, "Evil page") {
		t.Error("source title shown")
	}
	press(t, m, "enter")
	if _, ok := m.dialog.(*sourceDialog); !ok {
		t.Fatal("details")
	}
	if out := m.render(); strings.Contains(out, "\x1b]0;") || strings.Contains(out, "\x07") {
		t.Fatal("hostile title in the details dialog")
	}
	for _, s := range m.report.rep.Sources {
		for _, f := range []string{s.Title, s.Quote, strings.Join(s.Authors, ",")} {
			if hostile(f) {
				t.Errorf("unsanitized field %q", f)
			}
		}
	}

	rs := newRunView("x", evilTitle, "m\x1b[2J", nil, testNow)
	rs.apply(pipeline.Event{Type: pipeline.TokenDelta, Agent: "w\x1b]0;x\x07", Text: "text \x1b]0;pwned\x07 \x1b[2J", Thinking: "\x1b[5mblink"})
	for _, f := range []string{rs.title, rs.model, rs.writer, rs.text, rs.thinking} {
		if hostile(f) {
			t.Errorf("run state kept %q", f)
		}
	}
}

// TestSanitizeReportCopies: sanitizing a report cleans every author without
// touching the caller's slices.
func TestSanitizeReportCopies(t *testing.T) {
	rep := fixtureReport()
	rep.Sources[0].Authors = []string{"A. \x1b[31mRed", "B. \x1b]0;pwned\x07Title"}
	orig := append([]string(nil), rep.Sources[0].Authors...)
	got := sanitizeReport(rep)
	for _, a := range got.Sources[0].Authors {
		if strings.ContainsRune(a, '\x1b') {
			t.Errorf("author not sanitized: %q", a)
		}
	}
	for i, a := range rep.Sources[0].Authors {
		if a != orig[i] {
			t.Errorf("the caller's author %d changed: %q", i, a)
		}
	}
}
