package ui

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/store"
)

func selectedID(m *rootModel) string {
	if r := m.sessions.selected(); r != nil {
		return r.s.ID
	}
	return ""
}

func TestSessionsKeys(t *testing.T) {
	m, svc := newTestModel(t, 80, 24, "dark", false)
	c := &clock{t: testNow}
	m.now = c.now
	if m.sessions.focus != focusLine {
		t.Fatal("the question line has the keys at start")
	}
	toList(t, m)
	if got := selectedID(m); got != "s6" {
		t.Fatalf("newest first: selected %q, want s6", got)
	}
	press(t, m, "j", "j")
	if got := selectedID(m); got != "s4" {
		t.Errorf("j j: %q, want s4", got)
	}
	press(t, m, "k")
	if got := selectedID(m); got != "s5" {
		t.Errorf("k: %q, want s5", got)
	}
	press(t, m, "G")
	if got := selectedID(m); got != "s1" {
		t.Errorf("G: %q", got)
	}
	press(t, m, "g")
	if got := selectedID(m); got != "s6" {
		t.Errorf("g: %q", got)
	}
	// ↑ on the first row goes up to the question line; ↓ comes back.
	press(t, m, "up")
	if m.sessions.focus != focusLine {
		t.Fatal("↑ on the first session: the question line")
	}
	press(t, m, "down")
	if m.sessions.focus != focusList || selectedID(m) != "s6" {
		t.Fatal("↓ from the line: back on the list, selection kept")
	}

	// / filters; q is text while filtering; esc clears.
	press(t, m, "/", "p", "e", "r", "o", "q")
	if len(m.sessions.view) != 0 || m.quitting {
		t.Errorf("filter peroq: %d rows, quitting=%v", len(m.sessions.view), m.quitting)
	}
	press(t, m, "backspace")
	if len(m.sessions.view) != 1 || selectedID(m) != "s4" {
		t.Errorf("filter pero: %d rows, sel %q", len(m.sessions.view), selectedID(m))
	}
	press(t, m, "enter") // keep the filter, leave the input
	if m.sessions.filtering || m.sessions.query != "pero" {
		t.Errorf("enter keeps the filter: filtering=%v query=%q", m.sessions.filtering, m.sessions.query)
	}
	press(t, m, "esc")
	if m.sessions.query != "" || len(m.sessions.view) != 6 {
		t.Errorf("esc clears the filter")
	}

	// ? toggles help.
	press(t, m, "?")
	if !m.showHelp {
		t.Error("? opens help")
	}
	press(t, m, "?")
	if m.showHelp {
		t.Error("? closes help")
	}

	// t cycles the theme and saves it.
	before := m.themeName
	press(t, m, "t")
	if m.themeName == before {
		t.Error("t cycles the theme")
	}
	if len(svc.saved) != 1 || svc.saved[0].Theme != m.themeName || svc.saved[0].Form != nil {
		t.Errorf("the theme was not saved: %+v", svc.saved)
	}
	// A key the list doesn't bind types on the question line.
	press(t, m, "T")
	if m.sessions.focus != focusLine || m.sessions.line.Value() != "T" {
		t.Fatalf("T from the list: focus %v, line %q", m.sessions.focus, m.sessions.line.Value())
	}
	press(t, m, "esc", "esc") // clears the line, then goes to the list
	if m.sessions.line.Value() != "" || m.sessions.focus != focusList {
		t.Fatalf("esc esc: line %q, focus %v", m.sessions.line.Value(), m.sessions.focus)
	}

	// d asks, n keeps, d y deletes.
	press(t, m, "G", "d")
	if _, ok := m.dialog.(*confirmDialog); !ok {
		t.Fatalf("d opens a confirmation, got %T", m.dialog)
	}
	c.advance(time.Second)
	press(t, m, "n")
	if m.dialog != nil || len(svc.deleted) != 0 {
		t.Fatalf("n keeps the session")
	}
	press(t, m, "d")
	c.advance(time.Second)
	press(t, m, "y")
	if !reflect.DeepEqual(svc.deleted, []string{"s1"}) {
		t.Fatalf("deleted %v", svc.deleted)
	}
	if len(m.sessions.rows) != 5 {
		t.Errorf("list reloads after delete: %d rows", len(m.sessions.rows))
	}

	// enter on a completed session opens its report.
	press(t, m, "g", "j", "j", "enter")
	if m.screen != screenReport || m.report.id != "s4" || !m.report.loaded {
		t.Fatalf("enter opens the report: screen %v id %q loaded %v", m.screen, m.report.id, m.report.loaded)
	}
	press(t, m, "esc")
	if m.screen != screenSessions || m.sessions.focus != focusList {
		t.Fatal("esc returns to the list")
	}

	// R resumes an interrupted session; enter on awaiting review resumes.
	press(t, m, "G", "R")
	if !reflect.DeepEqual(svc.resumed, []string{"s2"}) || m.screen != screenRun || m.active != "s2" {
		t.Fatalf("R: resumed %v screen %v", svc.resumed, m.screen)
	}
	press(t, m, "esc", "g", "j", "enter")
	if !reflect.DeepEqual(svc.resumed, []string{"s2", "s5"}) {
		t.Fatalf("enter on awaiting review resumes: %v", svc.resumed)
	}
	press(t, m, "esc")

	// n opens the form with what the line holds; esc gives it back.
	press(t, m, "n")
	if _, ok := m.dialog.(*newRunDialog); !ok {
		t.Fatalf("n: %T", m.dialog)
	}
	press(t, m, "W", "h", "y", "esc")
	if m.dialog != nil || m.sessions.line.Value() != "Why" {
		t.Fatalf("esc from the form: %T, line %q", m.dialog, m.sessions.line.Value())
	}
	press(t, m, "ctrl+o")
	if d, ok := m.dialog.(*newRunDialog); !ok || d.question.Value() != "Why" {
		t.Fatalf("ctrl+o opens the form with the line's question: %T", m.dialog)
	}
	press(t, m, "esc", "esc", "esc", "q")
	if _, ok := m.dialog.(*quitDialog); !ok || m.quitting {
		t.Fatalf("q with the resumed runs live: %T, quitting %v; want the question", m.dialog, m.quitting)
	}
	c.advance(time.Second)
	press(t, m, "n")
	if m.dialog != nil || m.quitting {
		t.Fatal("n keeps working")
	}
	press(t, m, "ctrl+c", "ctrl+c")
	if !m.quitting {
		t.Error("ctrl+c twice quits")
	}
}

// TestQuestionLineTakesEveryKey: on the question line every key that types
// text is text, the bound ones (and the list's) included.
func TestQuestionLineTakesEveryKey(t *testing.T) {
	for _, k := range []string{"q", "n", "d", "j", "k", "g", "G", "R", "/", "?", "t", "p", "y", "e", "c", "s", "v", "1", "]", "["} {
		m, svc := newTestModel(t, 80, 24, "dark", false)
		q := k + "uantum dots?"
		typeText(t, m, q)
		if got := m.sessions.line.Value(); got != q {
			t.Errorf("%s: the line holds %q", k, got)
		}
		if m.quitting || m.dialog != nil || m.showHelp || m.screen != screenSessions || len(svc.saved) != 0 {
			t.Errorf("%s acted as a command: quitting %v, dialog %T, help %v, screen %v, saved %v", k, m.quitting, m.dialog, m.showHelp, m.screen, svc.saved)
		}
		press(t, m, "enter")
		if len(svc.started) != 1 || svc.started[0].Question != q {
			t.Fatalf("%s: started %+v", k, svc.started)
		}
		if m.screen != screenRun || m.sessions.line.Value() != "" {
			t.Errorf("%s: after starting, screen %v and line %q", k, m.screen, m.sessions.line.Value())
		}
	}
}

// TestQuestionLine: enter starts with the defaults, an empty line starts
// nothing, a second enter doesn't start twice, and a multi-line paste is
// one question.
func TestQuestionLine(t *testing.T) {
	m, svc := newTestModel(t, 80, 24, "dark", false)
	press(t, m, "enter")
	if len(svc.started) != 0 || m.notice == "" {
		t.Fatalf("an empty line started %v (notice %q)", svc.started, m.notice)
	}
	m.Update(tea.PasteMsg{Content: "How do perovskite cells degrade\r\nunder humidity,\rand what\n\n  stops it?"})
	want := "How do perovskite cells degrade under humidity, and what stops it?"
	if got := m.sessions.line.Value(); got != want {
		t.Fatalf("pasted: %q, want %q", got, want)
	}
	if len(svc.started) != 0 {
		t.Fatal("a pasted line break started the research")
	}
	_, first := m.Update(kp("enter"))
	_, second := m.Update(kp("enter"))
	if second != nil {
		t.Error("a second enter before the run started issued a Cmd")
	}
	run(t, m, first)
	if len(svc.started) != 1 || svc.started[0].Question != want || svc.started[0].Depth != "standard" ||
		!reflect.DeepEqual(svc.started[0].Sources, []string{"arxiv", "openalex"}) {
		t.Fatalf("started %+v", svc.started)
	}
	// A long question wraps over up to three lines, the frame still fits.
	press(t, m, "esc")
	typeText(t, m, strings.Repeat("why does it rain ", 30))
	out := ansi.Strip(m.render())
	checkFrame(t, out, 80, 24)
	if n := strings.Count(out, "why does it rain"); n < 8 {
		t.Errorf("the long question shows %d times the phrase, want it wrapped over lines:\n%s", n, out)
	}
	// A paste onto the list goes to the line too.
	m, _ = newTestModel(t, 80, 24, "dark", false)
	toList(t, m)
	m.Update(tea.PasteMsg{Content: "quantum\ndots"})
	if m.sessions.focus != focusLine || m.sessions.line.Value() != "quantum dots" {
		t.Errorf("paste on the list: focus %v line %q", m.sessions.focus, m.sessions.line.Value())
	}
	// An empty list: the line keeps the keys, tab has nowhere to go.
	m.Update(listLoaded(m))
	press(t, m, "tab")
	if m.sessions.focus != focusLine {
		t.Error("tab with no sessions left the line")
	}
}

func TestNewResearchForm(t *testing.T) {
	m, svc := newTestModel(t, 80, 24, "dark", false)
	toList(t, m)
	press(t, m, "n", "enter")
	d := m.dialog.(*newRunDialog)
	if d.err == "" || len(svc.started) != 0 {
		t.Fatal("an empty question is refused")
	}
	typeText(t, m, "Is coffee healthy")
	press(t, m, "tab", "ctrl+c")
	if !m.quitting {
		t.Fatal("ctrl+c quits even from a form")
	}
	m, svc = newTestModel(t, 80, 24, "dark", false)
	typeText(t, m, "Is it")
	press(t, m, "ctrl+o")
	press(t, m, "tab", "ctrl+u")                   // model: cleared,
	typeText(t, m, "llama3.1:8b")                  // and another typed
	press(t, m, "tab", "l")                        // depth: standard -> deep
	press(t, m, "tab", "space", "l", "l", "space") // sources: arxiv off, pubmed on
	press(t, m, "enter")
	if len(svc.started) != 1 {
		t.Fatalf("started %d", len(svc.started))
	}
	got := svc.started[0]
	if got.Question != "Is it" || got.Depth != "deep" || !reflect.DeepEqual(got.Sources, []string{"openalex", "pubmed"}) || got.Model != "llama3.1:8b" {
		t.Errorf("options %+v", got)
	}
	if m.screen != screenRun {
		t.Error("starting shows the run screen")
	}
	// The form's choice is remembered: saved, and what the line starts with next.
	if len(svc.saved) != 1 || svc.saved[0].Form == nil || svc.saved[0].Form["depth"] != "deep" || svc.saved[0].Form["model"] != "llama3.1:8b" ||
		!reflect.DeepEqual(svc.saved[0].Form["sources"], []string{"openalex", "pubmed"}) {
		t.Fatalf("saved %+v", svc.saved)
	}
	press(t, m, "esc")
	typeText(t, m, "Next")
	press(t, m, "enter")
	if len(svc.started) != 2 || svc.started[1].Depth != "deep" || svc.started[1].Model != "llama3.1:8b" || !reflect.DeepEqual(svc.started[1].Sources, []string{"openalex", "pubmed"}) {
		t.Fatalf("the next start: %+v", svc.started[1:])
	}
}

func TestRunKeys(t *testing.T) {
	m, svc := newTestModel(t, 80, 24, "dark", false)
	c := &clock{t: testNow}
	m.now = c.now
	r := startScripted(t, m, svc, c, false)

	// esc goes back, the run goes on, enter comes back live.
	press(t, m, "esc")
	if m.screen != screenSessions {
		t.Fatal("esc: back to sessions")
	}
	feedRun(t, m, r, pipeline.Event{Type: pipeline.Warning, Message: "late warning", Seq: 999})
	rs := m.runs[r.id]
	if got := rs.warnings[len(rs.warnings)-1]; got != "late warning" {
		t.Fatalf("events keep arriving in the background: %q", got)
	}
	m.Update(listLoaded(m, append([]store.Session{{ID: r.id, Title: "Perovskite stability", Status: "running", CreatedAt: testNow}}, fixtureSessions()...)...))
	toList(t, m)
	press(t, m, "g", "enter")
	if m.screen != screenRun || m.active != r.id {
		t.Fatal("enter on the live session shows it again")
	}
	if !strings.Contains(ansi.Strip(m.render()), "late warning") {
		t.Error("the run screen shows what arrived in the background")
	}

	// c asks; n keeps going; c y cancels.
	press(t, m, "c")
	if _, ok := m.dialog.(*confirmDialog); !ok {
		t.Fatalf("c asks first: %T", m.dialog)
	}
	c.advance(time.Second)
	press(t, m, "n")
	if r.cancelled {
		t.Fatal("n must not cancel")
	}
	press(t, m, "c")
	c.advance(time.Second)
	press(t, m, "y")
	if !r.cancelled {
		t.Fatal("c y cancels")
	}

	// The review arrives: the dialog opens.
	evs := scriptToReview(r.id)
	feedRun(t, m, r, evs[len(evs)-1])
	if _, ok := m.dialog.(*reviewDialog); !ok {
		t.Fatalf("ReviewRequested opens the dialog: %T", m.dialog)
	}
	c.advance(time.Second)
	press(t, m, "esc")
	if m.dialog != nil || m.runs[r.id].review == nil {
		t.Fatal("esc leaves the review pending")
	}
	press(t, m, "v")
	if _, ok := m.dialog.(*reviewDialog); !ok {
		t.Fatal("v reopens the review")
	}
	c.advance(time.Second)
	press(t, m, "a")

	// The run finishes: the report opens by itself.
	feedRun(t, m, r, scriptFinish(r.id, 100)...)
	_, cmd := m.Update(runEventsMsg{id: r.id, closed: true})
	run(t, m, cmd)
	if m.screen != screenReport {
		t.Fatalf("a finished run opens its report, screen %v", m.screen)
	}
}

func TestReviewDialogKeys(t *testing.T) {
	c := &clock{t: testNow}
	req := scriptToReview("x")[len(scriptToReview("x"))-1].Review
	m, _ := newTestModel(t, 80, 24, "dark", false)
	d := newReviewDialog("x", *req, c.now(), m.st)
	send := func(k string) action {
		a, keep, _ := d.handle(kp(k), c.now())
		if !keep && a == nil {
			t.Fatalf("%s closed the dialog without an action", k)
		}
		return a
	}

	// Grace: keys in the first 400 ms are ignored, and a burst extends it.
	if a := send("a"); a != nil {
		t.Fatal("a during the grace period must not decide")
	}
	c.advance(300 * time.Millisecond)
	if a := send("r"); a != nil {
		t.Fatal("r during the grace period must not decide")
	}
	c.advance(300 * time.Millisecond) // 600 ms after opening, 300 after the last key
	if a := send("a"); a != nil {
		t.Fatal("a burst of keys extends the quiet period")
	}
	c.advance(500 * time.Millisecond)

	// space toggles the request under the cursor; j moves.
	send("j")
	send("space")
	send("e")
	for _, r := range "cite 2023 data" {
		send(string(r))
	}
	send("enter")
	if v := ansi.Strip(d.view(m.st, 80, 24)); !strings.Contains(v, "with a note the writer may revise every section") {
		t.Errorf("the dialog does not say what a note means:\n%s", v)
	}
	a := send("a")
	dec, ok := a.(actDecide)
	if !ok {
		t.Fatalf("a: %T", a)
	}
	want := pipeline.Decision{Approve: true, Accepted: []string{"r1", "r3"}, Note: "cite 2023 data"}
	if !reflect.DeepEqual(dec.d, want) {
		t.Errorf("decision %+v, want %+v", dec.d, want)
	}

	d = newReviewDialog("x", *req, testNow, m.st)
	c.t = testNow.Add(time.Second)
	if a, _ := send("r").(actDecide); a.d.Approve {
		t.Error("r rejects all and finalises")
	}
	// r with a note typed: the note would go unused, so the dialog says
	// so and waits for a second r; the rejection then records no note
	// (issue 47 #6: it was dropped without a word, and recorded as used).
	d = newReviewDialog("x", *req, testNow, m.st)
	send("e")
	for _, r := range "keep it short" {
		send(string(r))
	}
	send("enter")
	if a, keep, _ := d.handle(kp("r"), c.now()); a != nil || !keep {
		t.Fatalf("r with a note decided at once: %+v", a)
	}
	if v := ansi.Strip(d.view(m.st, 80, 24)); !strings.Contains(v, "your note goes unused") || !strings.Contains(v, "again to reject") {
		t.Errorf("the dialog does not say the note would go unused:\n%s", v)
	}
	if a, _ := send("r").(actDecide); a.d.Approve || a.d.Note != "" {
		t.Errorf("r again: %+v; want a rejection with no note", a.d)
	}
	d = newReviewDialog("x", *req, testNow, m.st)
	if a, keep, _ := d.handle(kp("esc"), c.now()); keep || !reflect.DeepEqual(a, actLater{id: "x"}) {
		t.Error("esc decides later")
	}
	// Untoggling everything and accepting is finalising.
	d = newReviewDialog("x", *req, testNow, m.st)
	send("space")
	send("j")
	send("space")
	send("j")
	send("space")
	// The first a says that it would finalise (trial: it did at once,
	// without a word); the second does.
	if a, keep, _ := d.handle(kp("a"), c.now()); a != nil || !keep {
		t.Fatalf("a with nothing ticked decided at once: %+v", a)
	}
	if v := ansi.Strip(d.view(m.st, 80, 24)); !strings.Contains(v, "nothing is ticked and there is no note") {
		t.Errorf("the dialog does not say accepting nothing finalises:\n%s", v)
	}
	if a, _ := send("a").(actDecide); a.d.Approve || a.id != "x" {
		t.Errorf("a again: %+v; want the report finalised", a)
	}
}

func TestReportKeys(t *testing.T) {
	m, svc := newTestModel(t, 80, 10, "dark", false)
	openFixtureReport(t, m)
	r := &m.report
	if !r.loaded || r.vp.TotalLineCount() == 0 {
		t.Fatal("report rendered")
	}
	press(t, m, "j", "j")
	if r.vp.YOffset() != 2 {
		t.Errorf("j scrolls: %d", r.vp.YOffset())
	}
	press(t, m, "G")
	if !r.vp.AtBottom() {
		t.Error("G: bottom")
	}
	press(t, m, "g")
	if r.vp.YOffset() != 0 {
		t.Error("g: top")
	}
	press(t, m, "pgdown")
	if r.vp.YOffset() == 0 {
		t.Error("page down")
	}
	press(t, m, "/", "K", "i", "m", "enter")
	if len(r.matches) == 0 || r.query != "Kim" {
		t.Fatalf("find: %v", r.matches)
	}
	if len(r.matches) > 1 {
		press(t, m, "n")
		if r.matchIdx != 1 {
			t.Errorf("n: match %d, want the second", r.matchIdx)
		}
		press(t, m, "N")
	}
	marked := m.reportPane(80, 10)
	press(t, m, "esc")
	if r.query != "" {
		t.Error("esc clears the find first")
	}
	// The current match was marked, in place, without changing the text.
	plain := m.reportPane(80, 10)
	if marked == plain || ansi.Strip(marked) != ansi.Strip(plain) {
		t.Error("the current match is not highlighted in place")
	}

	press(t, m, "tab")
	if r.focus != paneSources {
		t.Fatal("tab: sources pane")
	}
	press(t, m, "j", "o")
	if !reflect.DeepEqual(svc.opened, []string{"https://arxiv.org/abs/2201.00001"}) {
		t.Errorf("o opens the URL: %v", svc.opened)
	}
	press(t, m, "k", "o")
	if svc.opened[len(svc.opened)-1] != "https://doi.org/10.1038/nenergy.2021.1" {
		t.Errorf("o without URL opens the DOI: %v", svc.opened)
	}
	press(t, m, "enter")
	if _, ok := m.dialog.(*sourceDialog); !ok {
		t.Fatalf("enter shows the source: %T", m.dialog)
	}
	press(t, m, "esc", "tab")
	if r.focus != paneReport {
		t.Error("tab back to the report")
	}

	// e exports to DataDir/exports.
	press(t, m, "e", "m")
	path := filepath.Join(m.cfg.DataDir, "exports", "s4.md")
	data, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(data), "Perovskite") {
		t.Fatalf("export: %v", err)
	}
	if !strings.Contains(m.notice, path) {
		t.Errorf("notice says where: %q", m.notice)
	}
	press(t, m, "e", "h")
	if _, err := os.Stat(filepath.Join(m.cfg.DataDir, "exports", "s4.html")); err != nil {
		t.Error("html export")
	}
	press(t, m, "e", "j")
	if _, err := os.Stat(filepath.Join(m.cfg.DataDir, "exports", "s4.json")); err != nil {
		t.Error("json export")
	}
	press(t, m, "esc")
	if m.screen != screenSessions {
		t.Error("esc back")
	}
}

func TestThemeFollowsBackground(t *testing.T) {
	m := newModel(t.Context(), Config{Theme: "auto"}, &fakeServices{}, options{now: func() time.Time { return testNow }})
	if cmd := m.Init(); cmd == nil {
		t.Fatal("Init loads sessions")
	}
	m.Update(tea.BackgroundColorMsg{Color: lightColor{}})
	if m.themeName != "light" {
		t.Errorf("a light background picks light, got %s", m.themeName)
	}
	m2 := newModel(t.Context(), Config{Theme: "nord"}, &fakeServices{}, options{now: func() time.Time { return testNow }})
	m2.Update(tea.BackgroundColorMsg{Color: lightColor{}})
	if m2.themeName != "nord" {
		t.Errorf("a configured theme is kept, got %s", m2.themeName)
	}
}

type lightColor struct{}

func (lightColor) RGBA() (r, g, b, a uint32) { return 0xffff, 0xffff, 0xffff, 0xffff }

func TestBackendDownStillBrowses(t *testing.T) {
	m, svc := newTestModel(t, 80, 24, "dark", false)
	c := &clock{t: testNow}
	m.now = c.now
	m.cfg.BackendErr = errBackend
	svc.startErr = errNoBackend
	out := ansi.Strip(m.render())
	if !strings.Contains(out, "new research needs the model backend") || !strings.Contains(out, "ollama serve") {
		t.Errorf("banner with the fix:\n%s", out)
	}
	toList(t, m)
	press(t, m, "G", "k", "R")
	if len(svc.resumed) != 0 || !m.noticeErr {
		t.Error("resume without a backend explains instead of failing")
	}
	// An awaiting review can still be finalised offline: rejecting needs no model.
	press(t, m, "g", "j", "R")
	if _, ok := m.dialog.(*confirmDialog); !ok {
		t.Fatalf("R on an awaiting review offline: %T, want the finalise question", m.dialog)
	}
	c.advance(time.Second)
	press(t, m, "y")
	if len(svc.resumed) != 1 || svc.resumed[0] != "s5" || svc.answers[0] == nil || svc.answers[0].Approve {
		t.Errorf("resumed %v with %+v, want s5 answered with a rejection", svc.resumed, svc.answers)
	}
	if m.screen == screenRun {
		press(t, m, "esc")
	}
	press(t, m, "g", "j", "j", "enter")
	if !m.report.loaded {
		t.Error("reports open without a backend")
	}
}

// TestConfirmIgnoresTyping: a question typed on the sessions screen that
// starts with d opens the delete confirmation; the rest of what is typed
// in flow must not confirm it.
func TestConfirmIgnoresTyping(t *testing.T) {
	m, svc := newTestModel(t, 80, 24, "dark", false)
	c := &clock{t: testNow}
	m.now = c.now
	toList(t, m)
	for _, k := range []string{"d", "o", "e", "s", "space", "y", "o", "u", "r"} {
		press(t, m, k)
		c.advance(80 * time.Millisecond) // typing speed
	}
	if len(svc.deleted) != 0 {
		t.Fatalf("typing \"does your\" deleted %v", svc.deleted)
	}

	// After the grace, a key other than y is no.
	m, svc = newTestModel(t, 80, 24, "dark", false)
	m.now = c.now
	toList(t, m)
	press(t, m, "d")
	c.advance(confirmGrace + 100*time.Millisecond)
	press(t, m, "o")
	if m.dialog != nil || len(svc.deleted) != 0 {
		t.Fatalf("o after the grace closes the dialog as no: %T, deleted %v", m.dialog, svc.deleted)
	}
	press(t, m, "y") // now typing, not confirming
	if len(svc.deleted) != 0 {
		t.Fatalf("y after the dialog closed deleted %v", svc.deleted)
	}

	// d, a pause past the grace, y: deleted.
	m, svc = newTestModel(t, 80, 24, "dark", false)
	m.now = c.now
	toList(t, m)
	press(t, m, "G", "d")
	c.advance(confirmGrace + 100*time.Millisecond)
	press(t, m, "y")
	if !reflect.DeepEqual(svc.deleted, []string{"s1"}) {
		t.Fatalf("d, pause, y: deleted %v, want [s1]", svc.deleted)
	}
}

// TestNoDoubleResume: R R (or enter then R) before the first resume has
// started resumes once; an engine that refuses a resume is a notice.
func TestNoDoubleResume(t *testing.T) {
	m, svc := newTestModel(t, 80, 24, "dark", false)
	toList(t, m)
	press(t, m, "G", "k") // s2, interrupted
	_, first := m.Update(kp("R"))
	_, second := m.Update(kp("R")) // before runStartedMsg arrives
	if second != nil {
		t.Error("a second R while resuming must issue nothing")
	}
	run(t, m, first)
	run(t, m, second)
	if !reflect.DeepEqual(svc.resumed, []string{"s2"}) || m.screen != screenRun {
		t.Fatalf("R R: resumed %v, screen %v", svc.resumed, m.screen)
	}
	if m.resuming["s2"] {
		t.Error("resuming is cleared once the run started")
	}

	// enter on an awaiting review resumes it; R right after does not again.
	press(t, m, "esc", "g", "j") // s5, awaiting review
	_, first = m.Update(kp("enter"))
	_, second = m.Update(kp("R"))
	run(t, m, first)
	run(t, m, second)
	if !reflect.DeepEqual(svc.resumed, []string{"s2", "s5"}) {
		t.Fatalf("enter R: resumed %v", svc.resumed)
	}

	// The engine refuses (the session is resuming elsewhere): a notice, and
	// R can be tried again.
	m, svc = newTestModel(t, 80, 24, "dark", false)
	svc.resumeErr = errors.New("session s2 is already running")
	toList(t, m)
	press(t, m, "G", "k", "R")
	if !m.noticeErr || !strings.Contains(m.notice, "already running") || m.screen != screenSessions {
		t.Fatalf("a refused resume: notice %q (err %v), screen %v", m.notice, m.noticeErr, m.screen)
	}
	if m.resuming["s2"] {
		t.Fatal("resuming is cleared when the resume fails")
	}
	svc.resumeErr = nil
	press(t, m, "R")
	if len(svc.resumed) != 2 || m.screen != screenRun {
		t.Fatalf("R after a refusal: resumed %v, screen %v", svc.resumed, m.screen)
	}
}

// With no sources configured, none are ticked and the run lets the planner
// pick by the question's topic.
func TestNewResearchWithNoSourcesTickedIsAuto(t *testing.T) {
	m, svc := newTestModel(t, 80, 24, "dark", false)
	m.cfg.Defaults.Sources = nil
	press(t, m, "W", "h", "y", "ctrl+o")
	if out := m.render(); !strings.Contains(out, "none ticked") {
		t.Errorf("the form does not say what no sources means:\n%s", out)
	}
	press(t, m, "enter")
	if len(svc.started) != 1 || !svc.started[0].AutoSources || len(svc.started[0].Sources) != 0 {
		t.Fatalf("started %+v, want auto sources", svc.started)
	}
	// Ticking one makes the choice explicit.
	m, svc = newTestModel(t, 80, 24, "dark", false)
	m.cfg.Defaults.Sources = nil
	press(t, m, "W", "ctrl+o", "tab", "tab", "tab", "space", "enter")
	if len(svc.started) != 1 || svc.started[0].AutoSources || !reflect.DeepEqual(svc.started[0].Sources, []string{"arxiv"}) {
		t.Fatalf("started %+v, want arxiv only", svc.started)
	}
}

// TestWriteNowAndTimeLeft: s on the run screen tells the live run to stop
// waiting and write; a run with a deadline shows the time left.
func TestWriteNowAndTimeLeft(t *testing.T) {
	m, svc := newTestModel(t, 120, 40, "dark", false)
	c := &clock{t: testNow}
	m.now = c.now
	r := startScripted(t, m, svc, c, false)
	r.mu.Lock()
	r.deadline = testNow.Add(90 * time.Second)
	r.mu.Unlock()
	if out := m.render(); !strings.Contains(out, "left") || !strings.Contains(out, "1m30s") {
		t.Errorf("no time left shown:\n%s", out)
	}
	press(t, m, "s")
	r.mu.Lock()
	wrote := r.wroteNow
	r.mu.Unlock()
	if !wrote || !strings.Contains(m.render(), "writing now") {
		t.Error("s did not ask the run to write now")
	}
}

// The form's Report, Plan and Language rows reach the run; a language
// nobody knows is refused in the form, with the focus on it.
// A start from the form that fails (the model is not installed) keeps
// the question on the line and remembers nothing: the next start from the
// line uses the choices that worked, not the model that could not start.
func TestAFailedFormStartKeepsTheQuestionAndRemembersNothing(t *testing.T) {
	m, svc := newTestModel(t, 80, 24, "dark", false)
	svc.startErr = errors.New(`model "llama3.2:1b" is not installed`)
	press(t, m, "ctrl+o")
	typeText(t, m, "What is silicon carbide?")
	press(t, m, "tab", "ctrl+u")
	typeText(t, m, "llama3.2:1b")
	press(t, m, "enter")
	if len(svc.saved) != 0 {
		t.Errorf("a choice that could not start a run was remembered: %+v", svc.saved)
	}
	if got := m.sessions.line.Value(); got != "What is silicon carbide?" {
		t.Errorf("the question line holds %q, want the form's question back", got)
	}
	if m.cfg.Defaults.Model == "llama3.2:1b" {
		t.Error("the line's next start would use the model that could not start")
	}
	if !strings.Contains(m.notice, "could not start") {
		t.Errorf("notice %q", m.notice)
	}
}

func TestNewResearchFormKindPlanLanguage(t *testing.T) {
	m, svc := newTestModel(t, 80, 24, "dark", false)
	typeText(t, m, "Is it")
	press(t, m, "ctrl+o")
	press(t, m, "tab", "tab", "tab", "tab", "tab", "l", "l") // report: review
	press(t, m, "tab", "l")                                  // plan: review it first
	press(t, m, "tab")
	typeText(t, m, "Klingonish")
	press(t, m, "enter")
	d, ok := m.dialog.(*newRunDialog)
	if !ok || len(svc.started) != 0 || !strings.Contains(d.err, "unknown language") || d.focus != d.rowOf("language") {
		t.Fatalf("an unknown language was not refused in the form: started %d, dialog %T", len(svc.started), m.dialog)
	}
	press(t, m, "ctrl+u")
	typeText(t, m, "German")
	press(t, m, "enter")
	if len(svc.started) != 1 {
		t.Fatalf("started %d", len(svc.started))
	}
	if got := svc.started[0]; got.Kind != "review" || got.ReviewPlan != "ask" || got.Language != "German" {
		t.Errorf("options kind %q plan %q language %q", got.Kind, got.ReviewPlan, got.Language)
	}
}

// The form's Library row offers the library's collections with their
// counts; the ticked ones limit the run's local source.
func TestNewResearchFormLibrary(t *testing.T) {
	m, svc := newTestModel(t, 80, 24, "dark", false)
	svc.collections = []LibraryCollection{{Name: "zotero", Items: 200, Files: 200}, {Name: "Thesis", Items: 12, Files: 12}, {Name: "#to read", Items: 3}}
	typeText(t, m, "Is it")
	press(t, m, "ctrl+o")
	press(t, m, "shift+tab") // the last row: Library
	if out := m.render(); !strings.Contains(out, "Thesis (12)") || !strings.Contains(out, "zotero (200)") {
		t.Fatalf("the collections are not offered:\n%s", out)
	}
	press(t, m, "l", "space", "enter")
	if len(svc.started) != 1 {
		t.Fatalf("started %d", len(svc.started))
	}
	if got := svc.started[0]; !slices.Equal(got.Collections, []string{"Thesis"}) {
		t.Errorf("collections %q", got.Collections)
	}
}

// The line under the question says every setting a question typed there
// will run with, not only model, depth and sources: a report kind, a plan
// review, a language and library collections chosen in the form last time
// would otherwise apply unseen.
func TestQuestionLineSaysItsSettings(t *testing.T) {
	m, _ := newTestModel(t, 160, 40, "dark", true, func(c *Config) {
		c.Defaults.Kind, c.Defaults.ReviewPlan, c.Defaults.Language = runopts.KindReview, runopts.ReviewAsk, "de"
		c.Defaults.Collections = []string{"thesis"}
	})
	m.sessions.setFocus(focusLine)
	out := ansi.Strip(m.render())
	if !strings.Contains(out, "qwen3:8b · standard · arxiv, openalex · review · plan: ask · in de · library: thesis  (ctrl+o changes these)") {
		t.Errorf("the settings line:\n%s", out)
	}
	toList(t, m) // the list opens the form with n, not ctrl+o
	if out = ansi.Strip(m.render()); !strings.Contains(out, "library: thesis  (n changes these)") {
		t.Errorf("the settings line on the list:\n%s", out)
	}
}

// Opening a source's URL says what happened: the browser opened, or the
// opener's own complaint (xdg-open exits 3 without a browser) with the URL
// and the keys that copy instead.
func TestOpeningAURLSaysWhatHappened(t *testing.T) {
	m, _ := newTestModel(t, 120, 40, "dark", true)
	m.Update(openedMsg{url: "https://arxiv.org/abs/1111.2011"})
	if !strings.Contains(m.notice, "opened https://arxiv.org/abs/1111.2011 in the browser") {
		t.Errorf("after opening: %q", m.notice)
	}
	m.Update(openedMsg{url: "https://arxiv.org/abs/1111.2011", err: errors.New("xdg-open: no method available for opening 'https://arxiv.org/abs/1111.2011'")})
	if !strings.Contains(m.notice, "could not open https://arxiv.org/abs/1111.2011 (xdg-open: no method available") || !strings.Contains(m.notice, "y copies the reference") {
		t.Errorf("after a failure: %q", m.notice)
	}
}

// A paste longer than a question may be is cut, and the person is told.
func TestLongPasteIsCutWithANotice(t *testing.T) {
	m, _ := newTestModel(t, 120, 40, "dark", true)
	m.Update(tea.PasteMsg{Content: strings.Repeat("why does it rain ", 1000)})
	if n := len([]rune(m.sessions.line.Value())); n != runopts.MaxQuestionBytes {
		t.Errorf("the line holds %d characters", n)
	}
	if !strings.Contains(m.notice, "the rest of the paste was left out") {
		t.Errorf("notice %q", m.notice)
	}
	m, _ = newTestModel(t, 120, 40, "dark", true)
	m.Update(tea.PasteMsg{Content: "a short question"})
	if m.notice != "" {
		t.Errorf("a short paste: notice %q", m.notice)
	}
}

// A source this researchtui cannot search (web without an engine,
// materials without a key) shows as off in the form and the plan dialog,
// cannot be ticked, and says what it needs instead of being dropped
// without a word (issue 36 #6).
func TestSourcesThatAreOffSayWhatTheyNeed(t *testing.T) {
	off := map[string]string{"web": "no engine: set RESEARCHTUI_SEARXNG_URL", "materials": "needs MP_API_KEY"}
	withOff := func(c *Config) {
		c.Engine = &pipeline.Engine{SourcesOff: off}
		c.Defaults.Sources = []string{"arxiv", "web"}
	}
	m, svc := newTestModel(t, 100, 30, "dark", false, withOff)
	typeText(t, m, "Is it")
	press(t, m, "ctrl+o")
	d := m.dialog.(*newRunDialog)
	if d.sources["web"] {
		t.Error("a source that is off starts ticked from the config")
	}
	if out := m.render(); !strings.Contains(out, "[-] web") || !strings.Contains(out, "[-] materials") {
		t.Errorf("the form does not mark the sources that are off:\n%s", out)
	}
	press(t, m, "tab", "tab", "tab") // to the sources row
	for d.focus != d.rowOf("sources") {
		press(t, m, "tab")
	}
	for runopts.KnownSources[d.srcCur] != "web" {
		press(t, m, "l")
	}
	press(t, m, "space")
	if d.sources["web"] || !strings.Contains(m.render(), "web is off: no engine: set RESEARCHTUI_SEARXNG_URL") {
		t.Errorf("ticking web: ticked %v, screen:\n%s", d.sources["web"], m.render())
	}
	press(t, m, "enter")
	if len(svc.started) != 1 || slices.Contains(svc.started[0].Sources, "web") {
		t.Fatalf("started %+v", svc.started)
	}

	m2, svc2 := newTestModel(t, 100, 30, "dark", false, withOff)
	c := &clock{t: testNow}
	m2.now = c.now
	r := startPlanReview(t, m2, svc2, c)
	pd := m2.dialog.(*planDialog)
	for pd.cursor < len(pd.rows) {
		press(t, m2, "down")
	}
	for runopts.KnownSources[pd.srcCur] != "materials" {
		press(t, m2, "right")
	}
	press(t, m2, "space")
	if pd.sources["materials"] || !strings.Contains(m2.render(), "materials is off: needs MP_API_KEY") {
		t.Errorf("ticking materials in the plan dialog: ticked %v, screen:\n%s", pd.sources["materials"], m2.render())
	}
	press(t, m2, "a")
	if ds := decisionsOf(r); len(ds) != 1 || (ds[0].Plan != nil && slices.Contains(ds[0].Plan.Sources, "materials")) {
		t.Errorf("decision %+v", ds)
	}
}

// A notice belongs to the screen it was given on: "type a question first"
// does not follow the person into a report, nor an open error back to the
// list (issue 36 #24).
func TestNoticesStayOnTheirScreen(t *testing.T) {
	m, _ := newTestModel(t, 100, 30, "dark", false)
	press(t, m, "enter") // an empty question line
	if !strings.Contains(m.render(), "type a question first") {
		t.Fatalf("no notice for an empty question:\n%s", m.render())
	}
	openFixtureReport(t, m)
	if strings.Contains(m.render(), "type a question first") {
		t.Errorf("the list's notice followed into the report:\n%s", m.render())
	}
	m.Update(openedMsg{url: "https://doi.org/10.1/x", err: errors.New("xdg-open: not found")})
	if !strings.Contains(m.render(), "could not open") {
		t.Fatalf("no notice for a failed open:\n%s", m.render())
	}
	press(t, m, "esc")
	if m.screen != screenSessions || strings.Contains(m.render(), "could not open") {
		t.Errorf("screen %v; the report's error followed back to the list:\n%s", m.screen, m.render())
	}
}

// The token meter follows the streaming writer (an estimate, marked ~)
// and takes the server's count when the call ends (issue 36 #25: the bar
// said 103 while the writer showed ~848).
func TestTokenMeterFollowsTheStream(t *testing.T) {
	m, svc := newTestModel(t, 120, 40, "dark", true)
	typeText(t, m, "Perovskite stability")
	press(t, m, "enter")
	r := svc.runs[len(svc.runs)-1]
	at := testNow
	seq := int64(0)
	ev := func(e pipeline.Event) pipeline.Event {
		seq++
		e.SessionID, e.Seq, e.Time = r.id, seq, at
		return e
	}
	feedRun(t, m, r,
		ev(pipeline.Event{Type: pipeline.RunStarted}),
		ev(pipeline.Event{Type: pipeline.StageStarted, Stage: pipeline.StageWrite}),
		ev(pipeline.Event{Type: pipeline.UsageUpdated, Stage: pipeline.StagePlan, Agent: "planner", Usage: &pipeline.UsageTotals{PromptTokens: 900, CompletionTokens: 103}}),
		ev(pipeline.Event{Type: pipeline.AgentStarted, Stage: pipeline.StageWrite, Agent: "writer"}),
		ev(pipeline.Event{Type: pipeline.TokenDelta, Stage: pipeline.StageWrite, Agent: "writer", Text: strings.Repeat("word ", 800)}),
	)
	if out := ansi.Strip(m.render()); !strings.Contains(out, "completion ~1.1k") {
		t.Errorf("while the writer streams 4,000 characters the meter says:\n%s", tailOf(out))
	}
	feedRun(t, m, r,
		ev(pipeline.Event{Type: pipeline.UsageUpdated, Stage: pipeline.StageWrite, Agent: "writer", Usage: &pipeline.UsageTotals{PromptTokens: 2000, CompletionTokens: 1250}}),
		ev(pipeline.Event{Type: pipeline.AgentFinished, Stage: pipeline.StageWrite, Agent: "writer", Usage: &pipeline.UsageTotals{CompletionTokens: 1147}}),
	)
	if out := ansi.Strip(m.render()); !strings.Contains(out, "completion 1.2k") || strings.Contains(out, "completion ~") {
		t.Errorf("after the call the meter is not the server's count:\n%s", tailOf(out))
	}
}

func tailOf(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "completion") {
			return l
		}
	}
	return s
}

// A collection whose items have no files says, where the person ticks it,
// that they are read by their abstracts and that a title-only item cannot
// be read at all (issue 36 #11).
func TestFormSaysACollectionHasNoFiles(t *testing.T) {
	m, svc := newTestModel(t, 120, 40, "dark", true)
	svc.collections = []LibraryCollection{{Name: "Books", Items: 5}}
	typeText(t, m, "Is it")
	press(t, m, "ctrl+o")
	d := m.dialog.(*newRunDialog)
	for d.focus != d.rowOf("collection") {
		press(t, m, "tab")
	}
	if out := ansi.Strip(m.render()); !strings.Contains(out, "Books (5, 0 with files)") {
		t.Errorf("the row does not say how many items have files:\n%s", out)
	}
	press(t, m, "space")
	if out := ansi.Strip(m.render()); !strings.Contains(out, "Books: no item has its file") || !strings.Contains(out, "cannot be read") {
		t.Errorf("ticking a collection without files says nothing:\n%s", out)
	}
}
