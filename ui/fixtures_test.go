package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	tea "charm.land/bubbletea/v2"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/history"
	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/store"
)

// testNow is the fixed clock of every golden.
var testNow = time.Date(2026, 11, 22, 15, 30, 0, 0, time.UTC)

// clock is a settable clock for grace-period tests.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

// fakeRun is a scripted run: tests push events into ch.
type fakeRun struct {
	id        string
	ch        chan pipeline.Event
	done      chan struct{}
	mu        sync.Mutex
	decisions []pipeline.Decision
	cancelled bool
	pending   *pipeline.ReviewRequest
	wroteNow  bool      // WriteNow was called
	deadline  time.Time // what Deadline reports
}

func newFakeRun(id string) *fakeRun {
	return &fakeRun{id: id, ch: make(chan pipeline.Event, 1024), done: make(chan struct{})}
}

func (r *fakeRun) ID() string                    { return r.id }
func (r *fakeRun) Events() <-chan pipeline.Event { return r.ch }
func (r *fakeRun) Done() <-chan struct{}         { return r.done }
func (r *fakeRun) Pending() *pipeline.ReviewRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pending
}
func (r *fakeRun) Decide(d pipeline.Decision) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.decisions = append(r.decisions, d)
	return nil
}
func (r *fakeRun) WriteNow() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.wroteNow = true
}
func (r *fakeRun) Deadline() time.Time { return r.deadline }
func (r *fakeRun) Cancel() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.cancelled {
		r.cancelled = true
	}
}

// fakeServices is an in-memory store and engine.
type fakeServices struct {
	mu          sync.Mutex
	sessions    []store.Session
	reports     map[string]pipeline.Report
	runs        []*fakeRun
	started     []runopts.Options
	resumed     []string
	answers     []*pipeline.Decision // the decision each Resume came with
	deleted     []string
	opened      []string
	exported    []string
	startErr    error
	resumeErr   error               // returned by Resume (the engine refusing a second resume)
	collections []LibraryCollection // the library's, for the form
	pulled      []string
	pullErr     error
	saved       []Settings // what SaveSettings was asked to write
	saveErr     error
	asked       []string // "id: question" of each Ask
	updated     []string // sessions Update was asked to check
	markedRead  []string // sessions MarkRead was called for
	versions    map[string][]pipeline.Version
	events      map[string][]pipeline.Event // stored event logs, for timelines
	candidates  map[string][]pipeline.Candidate
	watched     []string      // sessions Watch was asked to follow
	changes     chan struct{} // what Changes returns (nil: no feed)
}

// Watch follows a session "in another process": a scripted run.
func (f *fakeServices) Watch(ctx context.Context, id string) (runHandle, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.watched = append(f.watched, id)
	r := newFakeRun(id)
	f.runs = append(f.runs, r)
	return r, nil
}

func (f *fakeServices) Changes(ctx context.Context) <-chan struct{} { return f.changes }

func (f *fakeServices) Candidates(id string) ([]pipeline.Candidate, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.candidates[id], nil
}

func (f *fakeServices) Events(id string) ([]pipeline.Event, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.events[id], nil
}

func (f *fakeServices) Ask(ctx context.Context, id, question string) (runHandle, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, id+": "+question)
	r := newFakeRun(id)
	f.runs = append(f.runs, r)
	return r, nil
}

func (f *fakeServices) Update(ctx context.Context, id string) (runHandle, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.updated = append(f.updated, id)
	r := newFakeRun(id)
	f.runs = append(f.runs, r)
	return r, nil
}

// Follow sets the listed session's interval, as the store would.
func (f *fakeServices) Follow(id string, every time.Duration) (store.Session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, s := range f.sessions {
		if s.ID == id {
			if s.Living == nil {
				f.sessions[i].Living = &store.Living{}
			}
			f.sessions[i].Living.Every = every
			return f.sessions[i], nil
		}
	}
	return store.Session{}, store.ErrNotFound
}

func (f *fakeServices) MarkRead(id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.markedRead = append(f.markedRead, id)
	for i, s := range f.sessions {
		if s.ID == id && s.Living != nil {
			f.sessions[i].Living.Unread = 0
		}
	}
	return nil
}

func (f *fakeServices) Versions(id string) ([]pipeline.Version, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.versions[id], nil
}

func (f *fakeServices) Collections() ([]LibraryCollection, error) { return f.collections, nil }

func (f *fakeServices) SaveSettings(s Settings) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.saved = append(f.saved, s)
	return f.saveErr
}

func (f *fakeServices) ListSessions() ([]store.Session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]store.Session(nil), f.sessions...), nil
}
func (f *fakeServices) Session(id string) (store.Session, error) {
	for _, s := range f.sessions {
		if s.ID == id {
			return s, nil
		}
	}
	return store.Session{}, store.ErrNotFound
}
func (f *fakeServices) DeleteSession(id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deleted = append(f.deleted, id)
	for i, s := range f.sessions {
		if s.ID == id {
			f.sessions = append(f.sessions[:i], f.sessions[i+1:]...)
			return nil
		}
	}
	return store.ErrNotFound
}
func (f *fakeServices) LoadReport(id string) (pipeline.Report, error) {
	if r, ok := f.reports[id]; ok {
		return r, nil
	}
	return pipeline.Report{}, fmt.Errorf("session %s has no report yet", id)
}
func (f *fakeServices) Start(ctx context.Context, opt runopts.Options) (runHandle, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.startErr != nil {
		return nil, f.startErr
	}
	f.started = append(f.started, opt)
	r := newFakeRun(fmt.Sprintf("run%d", len(f.runs)+1))
	f.runs = append(f.runs, r)
	return r, nil
}
func (f *fakeServices) Resume(ctx context.Context, id string, d *pipeline.Decision) (runHandle, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resumed = append(f.resumed, id)
	f.answers = append(f.answers, d)
	if f.resumeErr != nil {
		return nil, f.resumeErr
	}
	r := newFakeRun(id)
	f.runs = append(f.runs, r)
	return r, nil
}
func (f *fakeServices) PullModel(ctx context.Context, model string, progress func(pipeline.PullProgress)) error {
	f.mu.Lock()
	f.pulled = append(f.pulled, model)
	err := f.pullErr
	f.mu.Unlock()
	if err != nil {
		return err
	}
	progress(pipeline.PullProgress{Status: "pulling manifest"})
	progress(pipeline.PullProgress{Status: "pulling 1a2b3c", Completed: 50, Total: 100})
	progress(pipeline.PullProgress{Status: "success"})
	return nil
}

func (f *fakeServices) Export(rep pipeline.Report, format string) ([]byte, error) {
	f.exported = append(f.exported, format)
	return history.ExportReport(rep, format)
}
func (f *fakeServices) OpenURL(u string) error { f.opened = append(f.opened, u); return nil }

// fixtureSessions is a fixed set covering every status.
func fixtureSessions() []store.Session {
	mk := func(id, title, status string, ago time.Duration, p, c int, cost float64) store.Session {
		return store.Session{ID: id, Question: title + "?", Title: title, Status: status, CreatedAt: testNow.Add(-ago),
			Model: "qwen3:8b", EmbedModel: "nomic-embed-text", Usage: store.Usage{PromptTokens: p, CompletionTokens: c, EmbeddingTokens: p / 2}, CostUSD: cost}
	}
	s := []store.Session{
		mk("s6", "How do transformers handle long context", store.StatusRunning, 10*time.Minute, 12000, 3400, 0),
		mk("s5", "CRISPR off-target effects in primary T cells", store.StatusAwaitingReview, 2*time.Hour, 48000, 9100, 0),
		mk("s4", "Perovskite solar cell stability under humidity", store.StatusCompleted, 26*time.Hour, 150000, 21000, 0.42),
		mk("s3", "Evidence for intermittent fasting and longevity", store.StatusFailed, 40*24*time.Hour, 3000, 200, 0),
		mk("s2", "Sparse attention kernels on consumer GPUs", store.StatusInterrupted, 60*24*time.Hour, 22000, 1500, 0),
		mk("s1", "Graph neural networks for molecule property prediction", store.StatusCompleted, 400*24*time.Hour, 99000, 15000, 0),
	}
	s[1].Stage = "review"
	s[3].Error = "ollama: model \"qwen3:8b\" not found"
	s[4].Stage = "read"
	return s
}

func fixtureReport() pipeline.Report {
	return pipeline.Report{
		SessionID: "s4",
		Title:     "Perovskite solar cell stability under humidity",
		Question:  "Perovskite solar cell stability under humidity?",
		Markdown: "# Perovskite stability under humidity\n\n## Executive summary\n\nMoisture degrades methylammonium lead iodide within hours [1]. " +
			"Encapsulation and 2D/3D heterostructures extend lifetimes to over 1,000 hours [2].\n\n" +
			"## Mechanisms\n\nWater forms hydrate phases that decompose to PbI2 [1][3].\n\n- hydration\n- ion migration\n\n## References\n\n1. Smith (2021)\n2. Li (2022)\n3. Kim (2020)\n",
		Sources: []report.CitedSource{
			{N: 1, Key: "doi:10.1/a", Title: "Moisture-induced degradation of MAPbI3", Authors: []string{"J. Smith", "A. Jones"}, Year: 2021, Venue: "Nature Energy", DOI: "10.1038/nenergy.2021.1", Source: "openalex", Quote: "films degraded within 6 hours at 80% RH", Read: report.ReadFullText,
				Reference: "Smith, J., & Jones, A. (2021). Moisture-induced degradation of MAPbI3. *Nature Energy*. https://doi.org/10.1038/nenergy.2021.1"},
			{N: 2, Key: "arxiv:2201.00001", Title: "2D/3D heterostructures for stable perovskites", Authors: []string{"W. Li", "B. Chen", "C. Wang", "D. Zhao"}, Year: 2022, Venue: "arXiv", URL: "https://arxiv.org/abs/2201.00001", Source: "arxiv", Quote: "T80 lifetime exceeded 1,000 h", Read: report.ReadAbstract,
				Reference: "Li, W., Chen, B., Wang, C., & Zhao, D. (2022). 2D/3D heterostructures for stable perovskites. *arXiv*. https://arxiv.org/abs/2201.00001"},
			{N: 3, Key: "doi:10.1/c", Title: "Hydrate phases in hybrid perovskites", Authors: []string{"H. Kim"}, Year: 2020, Venue: "JACS", DOI: "10.1021/jacs.0c00001", Source: "crossref",
				Reference: "Kim, H. (2020). Hydrate phases in hybrid perovskites. *JACS*. https://doi.org/10.1021/jacs.0c00001"},
		},
		Metrics: pipeline.CitationMetrics{Citations: 4, DistinctSources: 3, SupportedRatio: 1},
		Funnel:  pipeline.Funnel{Found: 87, Read: 12, Analysed: 9, Cited: 3, CitedOfRead: 0.25},
	}
}

// newTestModel builds a root model over fake services with a fixed clock
// and size, with the session list already loaded.
func newTestModel(t testing.TB, w, h int, theme string, noColor bool, edit ...func(*Config)) (*rootModel, *fakeServices) {
	t.Helper()
	svc := &fakeServices{sessions: fixtureSessions(), reports: map[string]pipeline.Report{"s4": fixtureReport(), "s1": fixtureReport()}}
	dark := true
	cfg := Config{Theme: theme, DataDir: t.TempDir(), Defaults: runopts.Options{Model: "qwen3:8b", EmbedModel: "nomic-embed-text", Depth: "standard", Sources: []string{"arxiv", "openalex"}},
		SaveSettings: func(Settings) error { return nil }}
	for _, e := range edit {
		e(&cfg)
	}
	m := newModel(context.Background(), cfg, svc, options{now: func() time.Time { return testNow }, noColor: noColor, darkBG: &dark})
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	m.Update(listLoaded(m, fixtureSessions()...))
	return m, svc
}

// exec runs a Cmd and feeds its message (and those of batches) back into
// the model, like the Bubble Tea loop does, skipping ticks and bridge
// waits that would block.
func run(t testing.TB, m *rootModel, cmd tea.Cmd) {
	t.Helper()
	for _, msg := range runCmd(cmd) {
		_, next := m.Update(msg)
		run(t, m, next)
	}
}

func runCmd(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- cmd() }()
	var msg tea.Msg
	select {
	case msg = <-done:
	case <-time.After(50 * time.Millisecond):
		return nil // a blocking Cmd (bridge waiting for events, tick)
	}
	switch msg := msg.(type) {
	case tea.BatchMsg:
		var out []tea.Msg
		for _, c := range msg {
			out = append(out, runCmd(c)...)
		}
		return out
	case tickMsg, nil:
		return nil
	}
	return []tea.Msg{msg}
}

func kp(s string) tea.KeyPressMsg {
	if c, ok := strings.CutPrefix(s, "ctrl+"); ok && len(c) == 1 {
		return tea.KeyPressMsg{Code: rune(c[0]), Mod: tea.ModCtrl}
	}
	switch s {
	case "f1":
		return tea.KeyPressMsg{Code: tea.KeyF1}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	}
	r := []rune(s)
	if len(r) == 1 && unicode.IsUpper(r[0]) {
		// As a terminal sends it: shift held, the shifted text.
		return tea.KeyPressMsg{Code: unicode.ToLower(r[0]), ShiftedCode: r[0], Mod: tea.ModShift, Text: s}
	}
	return tea.KeyPressMsg{Code: r[0], Text: s}
}

// typeText types s key by key, as a person does.
func typeText(t testing.TB, m *rootModel, s string) {
	t.Helper()
	for _, r := range s {
		if r == ' ' {
			press(t, m, "space")
			continue
		}
		press(t, m, string(r))
	}
}

// toList moves the keys from the question line to the sessions list.
func toList(t testing.TB, m *rootModel) {
	t.Helper()
	if m.sessions.focus != focusList {
		press(t, m, "tab")
	}
	if m.sessions.focus != focusList {
		t.Fatal("tab did not move to the sessions list")
	}
}

// press sends keys and runs the resulting Cmds.
func press(t testing.TB, m *rootModel, keys ...string) {
	t.Helper()
	for _, k := range keys {
		_, cmd := m.Update(kp(k))
		run(t, m, cmd)
		settle(m)
	}
}

// settle completes a pending report rendering synchronously: run drops
// Cmds that take over 50 ms, and glamour can, under -race.
func settle(m *rootModel) {
	r := &m.report
	if r.loaded && r.want.width > 0 && r.have != r.want {
		out, err := m.md.render(r.want, r.rep.Markdown, m.st.Markdown)
		m.Update(reportRenderedMsg{key: r.want, out: out, err: err})
	}
}

var errBackend = errors.New("No Ollama at 127.0.0.1:11434: run `ollama serve` or set OLLAMA_HOST")

func tea_ws(w, h int) tea.WindowSizeMsg { return tea.WindowSizeMsg{Width: w, Height: h} }

// noticesReport is the fixture report with source [1] retracted (the
// notice named, as Crossref's updated-by gives it) and source [3]
// corrected. The notices are read from JSON, the shape a stored report and
// `sessions show --json` carry.
func noticesReport(t testing.TB) pipeline.Report {
	t.Helper()
	rep := fixtureReport()
	for i, js := range map[int]string{
		0: `{"retracted":true,"updates":[{"type":"retraction","doi":"10.1038/nenergy.2023.99","date":"2023-04-22","source":"retraction-watch"}]}`,
		2: `{"updates":[{"type":"correction","doi":"10.1021/jacs.0c00099","date":"2021-02-01","source":"publisher"}]}`,
	} {
		if err := json.Unmarshal([]byte(js), &rep.Sources[i]); err != nil {
			t.Fatal(err)
		}
	}
	return rep
}

// listLoaded is the answer to the newest session-list load the model
// started, as a test hands the list in by hand (a load with an older
// number would be dropped as stale).
func listLoaded(m *rootModel, sessions ...store.Session) sessionsLoadedMsg {
	return sessionsLoadedMsg{sessions: sessions, seq: m.sessions.loads}
}
