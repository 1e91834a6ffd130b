package ui

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/runopts"
)

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
	// Two letters typed where keys were meant are no question: refused,
	// with the reason, and left on the line (trial: "gj" started a run).
	typeText(t, m, "gj")
	press(t, m, "enter")
	if len(svc.started) != 0 || !strings.Contains(m.notice, `"gj" is no question`) || m.sessions.line.Value() != "gj" {
		t.Fatalf("\"gj\" started %v (notice %q, line %q)", svc.started, m.notice, m.sessions.line.Value())
	}
	m.sessions.line.SetValue("")
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
	press(t, m, "W", "h", "y", "ctrl+o", "tab", "tab", "tab", "space", "enter")
	if len(svc.started) != 1 || svc.started[0].AutoSources || !reflect.DeepEqual(svc.started[0].Sources, []string{"arxiv"}) {
		t.Fatalf("started %+v, want arxiv only", svc.started)
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
	if !strings.Contains(out, "qwen3:8b · standard · arxiv, openalex · review · plan: ask · in German · library: thesis  (ctrl+o changes these)") {
		t.Errorf("the settings line:\n%s", out)
	}
	toList(t, m) // the list opens the form with n, not ctrl+o
	if out = ansi.Strip(m.render()); !strings.Contains(out, "library: thesis  (n changes these)") {
		t.Errorf("the settings line on the list:\n%s", out)
	}
	// At 80 columns the settings keep their room before the key's hint;
	// English, the default, is not said.
	m, _ = newTestModel(t, 80, 24, "dark", true, func(c *Config) {
		c.Defaults.Kind, c.Defaults.ReviewPlan, c.Defaults.Language = runopts.KindReview, runopts.ReviewAsk, "de"
		c.Defaults.Collections = []string{"thesis"}
	})
	m.sessions.setFocus(focusLine)
	if out = ansi.Strip(m.render()); !strings.Contains(out, "in German · libr") || strings.Contains(out, "changes these") {
		t.Errorf("the settings line at 80 columns:\n%s", out)
	}
	m, _ = newTestModel(t, 80, 24, "dark", true, func(c *Config) { c.Defaults.Language = "en" })
	m.sessions.setFocus(focusLine)
	if out = ansi.Strip(m.render()); strings.Contains(out, "in en") || strings.Contains(out, "in English") {
		t.Errorf("the settings line at 80 columns:\n%s", out)
	}
}

// A paste longer than a question may be is cut, and the person is told.
func TestLongPasteIsCutWithANotice(t *testing.T) {
	m, _ := newTestModel(t, 120, 40, "dark", true)
	m.Update(tea.PasteMsg{Content: strings.Repeat("why does it rain ", 1000)})
	if n := len([]rune(m.sessions.line.Value())); n != runopts.MaxQuestionChars {
		t.Errorf("the line holds %d characters", n)
	}
	if !strings.Contains(m.notice, "the rest of the paste was left out") {
		t.Errorf("notice %q", m.notice)
	}
	// The notice is the cut paste's: the line cleared and a question that
	// fits pasted, it goes (trial: it stayed over later pastes and the form).
	m.sessions.line.SetValue("")
	m.Update(tea.PasteMsg{Content: "a short question"})
	if m.notice != "" {
		t.Errorf("a short paste after a cut one: notice %q", m.notice)
	}
	m.Update(tea.PasteMsg{Content: strings.Repeat("why does it rain ", 1000)})
	press(t, m, "ctrl+o")
	if m.notice != "" {
		t.Errorf("the form took the line's text: notice %q", m.notice)
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
