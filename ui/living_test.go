package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/store"
)

// livingSessions are the fixtures with s4 followed weekly, its last check
// a day ago having found 2 new sources in version 3, not yet opened; s1
// checked once, not followed.
func livingSessions() []store.Session {
	s := fixtureSessions()
	s[2].Living = &store.Living{Every: 7 * 24 * time.Hour, LastChecked: testNow.Add(-24 * time.Hour), LastNew: 2, Checks: 2, Unread: 3}
	s[5].Living = &store.Living{LastChecked: testNow.Add(-3 * 24 * time.Hour), Checks: 1}
	return s
}

// TestUpdateFromTheReport: u on a report checks the session for new work
// and shows the update's run.
func TestUpdateFromTheReport(t *testing.T) {
	m, svc := newTestModel(t, 120, 40, "dark", false)
	openFixtureReport(t, m)
	press(t, m, "u")
	svc.mu.Lock()
	updated := append([]string(nil), svc.updated...)
	svc.mu.Unlock()
	if len(updated) != 1 || updated[0] != "s4" {
		t.Fatalf("u updated %q", updated)
	}
	if m.screen != screenRun {
		t.Errorf("the update's run is not shown (screen %v)", m.screen)
	}
}

// TestFollowMarksAndUnread: F on the list follows a finished session (a
// notice says how updates happen) and F again stops; the list marks a
// followed session ↻ and one with an unread update ●, the preview says
// when it was checked; opening its report clears the mark.
func TestFollowMarksAndUnread(t *testing.T) {
	m, svc := newTestModel(t, 120, 40, "dark", false)
	toList(t, m)
	press(t, m, "g", "down", "down") // s4
	press(t, m, "F")
	if s, _ := svc.Session("s4"); s.Living == nil || s.Living.Every != followEvery {
		t.Fatalf("F did not follow s4: %+v", s.Living)
	}
	m.Update(listLoaded(m, svc.sessions...))
	view := ansi.Strip(m.render())
	if !strings.Contains(view, "update --due") || !strings.Contains(view, "↻ Perovskite solar cell") {
		t.Errorf("following is not shown:\n%s", view)
	}
	press(t, m, "F")
	if s, _ := svc.Session("s4"); s.Living == nil || s.Living.Every != 0 {
		t.Errorf("F again did not unfollow: %+v", s.Living)
	}
	// F is for finished sessions only.
	press(t, m, "g")
	press(t, m, "F")
	if s, _ := svc.Session("s6"); s.Living != nil {
		t.Errorf("F followed a running session")
	}

	svc.mu.Lock()
	svc.sessions = livingSessions()
	svc.mu.Unlock()
	m.Update(listLoaded(m, livingSessions()...))
	press(t, m, "g", "down", "down")
	view = ansi.Strip(m.render())
	for _, want := range []string{"●↻ Perovskite solar cell", "updates   every 7d · next Nov 28", "checked Nov 21: 2 new sources", "version 3 unread"} {
		if !strings.Contains(view, want) {
			t.Errorf("the list does not show %q:\n%s", want, view)
		}
	}
	press(t, m, "enter")
	svc.mu.Lock()
	marked := append([]string(nil), svc.markedRead...)
	svc.mu.Unlock()
	if len(marked) != 1 || marked[0] != "s4" {
		t.Errorf("opening the updated report marked %q read", marked)
	}
}

// updatedReport is the fixture report after an update found a 2026 field
// test: its section at the top cites the new source [4] beside [2], and
// the references keep their numbers.
func updatedReport() pipeline.Report {
	rep := fixtureReport()
	rep.Markdown = strings.Replace(rep.Markdown, "# Perovskite stability under humidity\n\n",
		"# Perovskite stability under humidity\n\n## What's new since 21 November 2026\n\n"+
			"A year-long outdoor field test found that encapsulated cells kept 90% of their efficiency [4], in line with the laboratory lifetimes reported earlier [2].\n\n", 1)
	rep.Markdown = strings.Replace(rep.Markdown, "3. Kim (2020)\n", "3. Kim (2020)\n4. Ortiz (2026)\n", 1)
	rep.Sources = append(rep.Sources, report.CitedSource{N: 4, Key: "doi:10.1/d", Title: "A year outdoors: encapsulated perovskite modules in the field",
		Authors: []string{"R. Ortiz"}, Year: 2026, Venue: "Joule", DOI: "10.1016/j.joule.2026.01.001", Source: "openalex", Read: report.ReadAbstract,
		Reference: "Ortiz, R. (2026). A year outdoors: encapsulated perovskite modules in the field. *Joule*. https://doi.org/10.1016/j.joule.2026.01.001"})
	rep.Updates = []pipeline.UpdateNote{{Version: 2, At: testNow, New: 1}}
	return rep
}

// TestUpdateWithNothingNewSaysSo: an update that wrote no version brings
// the report back with its last line ("nothing new: …"), and a cancel
// question asked while it ran closes when it ends.
func TestUpdateWithNothingNewSaysSo(t *testing.T) {
	m, svc := newTestModel(t, 120, 40, "dark", false)
	c := &clock{t: testNow}
	m.now = c.now
	openFixtureReport(t, m)
	press(t, m, "u")
	r := svc.runs[len(svc.runs)-1]
	c.advance(time.Second)
	press(t, m, "c")
	if _, ok := m.dialog.(*confirmDialog); !ok {
		t.Fatalf("c on the update's run opened %T", m.dialog)
	}
	evs := []pipeline.Event{
		{Type: pipeline.RunStarted, Count: 2, Update: 1, Message: "update 1: searching again for work since 21 November 2026"},
		{Type: pipeline.StageStarted, Stage: pipeline.StageResearch},
		{Type: pipeline.StageFinished, Stage: pipeline.StageResearch, Message: "11 works seen, 0 new, 0 kept"},
		{Type: pipeline.RunFinished, Status: "completed", Outcome: pipeline.OutcomeNothingNew, Message: "nothing new: all 11 works the searches returned were met before"},
	}
	for i := range evs {
		evs[i].SessionID, evs[i].Seq, evs[i].Time = r.id, int64(i+1), testNow
	}
	_, cmd := m.Update(runEventsMsg{id: r.id, events: evs, closed: true})
	run(t, m, cmd)
	settle(m)
	if m.dialog != nil {
		t.Errorf("the cancel question outlived the update: %T", m.dialog)
	}
	if m.screen != screenReport {
		t.Fatalf("the report did not come back (screen %v)", m.screen)
	}
	if out := ansi.Strip(m.render()); !strings.Contains(out, "nothing new: all 11 works") {
		t.Errorf("the report does not say the update found nothing new:\n%s", out)
	}
}
