package ui

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/researchtui/researchtui/pipeline"
)

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
	// While the note is typed, the keys said are the note's, not the
	// review's, whose letters now type (trial: the screen's footer said
	// "a accept selected" over the note).
	m.dialog = d
	if foot := ansi.Strip(footerLine(m.st, m.currentKeys().ShortHelp(), 80)); !strings.Contains(foot, "save note") || strings.Contains(foot, "accept") {
		t.Errorf("footer while typing a note: %q", foot)
	}
	send("enter")
	if foot := ansi.Strip(footerLine(m.st, m.currentKeys().ShortHelp(), 80)); !strings.Contains(foot, "accept") {
		t.Errorf("footer after the note: %q", foot)
	}
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
