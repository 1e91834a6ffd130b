package ui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/store"
)

// runHandle is what the UI needs of a running session. *pipeline.Run has
// exactly these methods; tests substitute scripted runs fed with synthetic
// events, so every screen can be tested without a backend.
type runHandle interface {
	ID() string
	Events() <-chan pipeline.Event
	Decide(pipeline.Decision) error
	Pending() *pipeline.ReviewRequest
	Cancel()
	Done() <-chan struct{}
	// WriteNow cuts reading and research short and writes from what is
	// analysed; Deadline is when the run does that by itself (zero: never).
	WriteNow()
	Deadline() time.Time
}

// services is every piece of IO the UI performs. Only Cmds call it, never
// Update, so a slow disk or backend can't freeze a frame.
type services interface {
	ListSessions() ([]store.Session, error)
	Session(id string) (store.Session, error)
	DeleteSession(id string) error
	LoadReport(id string) (pipeline.Report, error)
	Start(ctx context.Context, opt runopts.Options) (runHandle, error)
	Resume(ctx context.Context, id string, d *pipeline.Decision) (runHandle, error)
	Export(rep pipeline.Report, format string) ([]byte, error)
	// Ask starts a follow-up question on a finished session; Versions
	// lists its report's versions.
	Ask(ctx context.Context, id, question string) (runHandle, error)
	Versions(id string) ([]pipeline.Version, error)
	// Update checks a finished session for new work (a living review);
	// Follow sets how often `update --due` does (0: not followed);
	// MarkRead clears the mark of a version an update wrote.
	Update(ctx context.Context, id string) (runHandle, error)
	Follow(id string, every time.Duration) (store.Session, error)
	MarkRead(id string) error
	// Events is a session's stored event log (its timeline).
	Events(id string) ([]pipeline.Event, error)
	// Candidates are a session's ranked candidates, read or not, with
	// their scores and reasons.
	Candidates(id string) ([]pipeline.Candidate, error)
	// Watch follows a session that another researchtui process on the
	// same data dir runs; the handle's Stop ends the watching, never the
	// run (its Cancel asks that process to cancel it).
	Watch(ctx context.Context, id string) (runHandle, error)
	// Changes signals (coalesced) that sessions changed, in this process
	// or another one; nil when nothing can tell.
	Changes(ctx context.Context) <-chan struct{}
	OpenURL(url string) error
	PullModel(ctx context.Context, model string, progress func(pipeline.PullProgress)) error
	// SaveSettings writes what the TUI remembers (ui/cli: tui-state.json).
	SaveSettings(s Settings) error
	// Collections lists the collections of the person's library.
	Collections() ([]LibraryCollection, error)
}

// LibraryCollection is a collection of the person's library (or "corpus",
// the loose documents) with how many documents it holds.
type LibraryCollection struct {
	Name  string
	Items int
	// Files are the items read from their file; the others only by their
	// abstract, or not at all when known by title only.
	Files int
}

// errNoBackend is what starting or resuming says when there is no engine.
var errNoBackend = errors.New("no model backend: start Ollama (`ollama serve`) and restart researchtui")

// liveServices is services over the real engine and store.
type liveServices struct {
	eng         *pipeline.Engine
	st          store.DB
	save        func(Settings) error
	collections func() ([]LibraryCollection, error)
	check       func(ctx context.Context, models ...string) error
}

// checkBackend asks the model backend, before a run is made, whether it
// answers and has the models: a run started against a backend that went
// away would only be recorded as failed.
func (l liveServices) checkBackend(ctx context.Context, models ...string) error {
	if l.check == nil {
		return nil
	}
	return l.check(ctx, models...)
}

func (l liveServices) Collections() ([]LibraryCollection, error) {
	if l.collections == nil {
		return nil, nil
	}
	return l.collections()
}

func (l liveServices) SaveSettings(s Settings) error {
	if l.save == nil {
		return nil
	}
	return l.save(s)
}

func (l liveServices) ListSessions() ([]store.Session, error) {
	if l.st == nil {
		return nil, nil
	}
	return l.st.ListSessions()
}

func (l liveServices) Session(id string) (store.Session, error) { return l.st.Session(id) }
func (l liveServices) DeleteSession(id string) error            { return l.st.DeleteSession(id) }
func (l liveServices) LoadReport(id string) (pipeline.Report, error) {
	return pipeline.LoadReport(l.st, id)
}

func (l liveServices) PullModel(ctx context.Context, model string, progress func(pipeline.PullProgress)) error {
	if l.eng == nil {
		return errNoBackend
	}
	return l.eng.PullModel(ctx, model, progress)
}

func (l liveServices) Start(ctx context.Context, opt runopts.Options) (runHandle, error) {
	if l.eng == nil {
		return nil, errNoBackend
	}
	if err := l.checkBackend(ctx, opt.Model, opt.EmbedModel); err != nil {
		return nil, err
	}
	r, err := l.eng.Start(ctx, opt)
	if err != nil {
		return nil, err
	}
	return r, nil
}

func (l liveServices) Resume(ctx context.Context, id string, d *pipeline.Decision) (runHandle, error) {
	if l.eng == nil {
		return nil, errNoBackend
	}
	r, err := l.eng.Resume(ctx, id, d)
	if errors.Is(err, pipeline.ErrRunning) {
		// Another researchtui runs it (this one's own runs are shown, not
		// resumed): watch it there, and hand it the decision if one came.
		w, werr := l.eng.Watch(ctx, id)
		if werr != nil {
			return nil, err
		}
		if d != nil {
			if derr := w.Decide(*d); derr != nil {
				w.Stop()
				return nil, derr
			}
		}
		return w, nil
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

func (l liveServices) Watch(ctx context.Context, id string) (runHandle, error) {
	if l.eng == nil || l.eng.Store == nil {
		return nil, errNoBackend
	}
	w, err := l.eng.Watch(ctx, id)
	if err != nil {
		return nil, err
	}
	return w, nil
}

// Changes follows the store's change feed: session records created,
// updated or deleted by any researchtui process on the data dir.
func (l liveServices) Changes(ctx context.Context) <-chan struct{} {
	if l.st == nil {
		return nil
	}
	out := make(chan struct{}, 1)
	signal := func() {
		select {
		case out <- struct{}{}:
		default: // one pending signal is enough: the list is reloaded whole
		}
	}
	go store.Follow(ctx, l.st, func(c store.Change) {
		if c.Updated {
			signal()
		}
	}, signal)
	return out
}

func (l liveServices) Ask(ctx context.Context, id, question string) (runHandle, error) {
	if l.eng == nil {
		return nil, errNoBackend
	}
	if sess, err := l.st.Session(id); err == nil {
		if err := l.checkBackend(ctx, sess.Model, sess.EmbedModel); err != nil {
			return nil, err
		}
	}
	r, err := l.eng.Ask(ctx, id, question, nil)
	if err != nil {
		return nil, err
	}
	return r, nil
}

func (l liveServices) Update(ctx context.Context, id string) (runHandle, error) {
	if l.eng == nil {
		return nil, errNoBackend
	}
	if sess, err := l.st.Session(id); err == nil {
		if err := l.checkBackend(ctx, sess.Model, sess.EmbedModel); err != nil {
			return nil, err
		}
	}
	r, err := l.eng.Update(ctx, id)
	if err != nil {
		return nil, err
	}
	return r, nil
}

func (l liveServices) Follow(id string, every time.Duration) (store.Session, error) {
	return pipeline.Follow(l.st, id, every)
}

func (l liveServices) MarkRead(id string) error { return pipeline.MarkRead(l.st, id) }

func (l liveServices) Events(id string) ([]pipeline.Event, error) {
	return pipeline.LoadEvents(l.st, id)
}

func (l liveServices) Candidates(id string) ([]pipeline.Candidate, error) {
	return pipeline.LoadCandidates(l.st, id)
}

func (l liveServices) Versions(id string) ([]pipeline.Version, error) {
	return pipeline.LoadVersions(l.st, id)
}

func (l liveServices) Export(rep pipeline.Report, format string) ([]byte, error) {
	return exportReport(rep, format)
}

// OpenURL hands a URL to the desktop's opener. The URL comes from source
// metadata, so it is passed as one argument, never through a shell.
func (l liveServices) OpenURL(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// An opener hands the URL to the browser and exits, saying whether it
	// could (xdg-open exits 3 when no browser is set up); one still running
	// after a while is the browser itself.
	select {
	case err := <-done:
		if err == nil {
			return nil
		}
		if msg, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n"); msg != "" {
			return fmt.Errorf("%s: %s", filepath.Base(cmd.Path), sanitizeLine(msg))
		}
		return fmt.Errorf("%s: %w", filepath.Base(cmd.Path), err)
	case <-time.After(3 * time.Second):
		return nil
	}
}

// exportExt maps an export format to its file extension.
var exportExt = map[string]string{"md": "md", "html": "html", "json": "json", "bibtex": "bib", "ris": "ris", "csljson": "csl.json"}

// writeExport writes an exported report under dir/exports and returns the
// path. The file name comes from the session ID (never from the title, which
// is untrusted text).
func writeExport(dir, id, format string, data []byte) (string, error) {
	ext, ok := exportExt[format]
	if !ok {
		return "", fmt.Errorf("unknown export format %q", format)
	}
	if dir == "" {
		dir = "."
	}
	out := filepath.Join(dir, "exports")
	if err := os.MkdirAll(out, 0o700); err != nil {
		return "", err
	}
	path := filepath.Join(out, filepath.Base(id)+"."+ext)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return "", err
	}
	return path, nil
}

// shutdownRuns cancels this process's live runs (and stops watching the
// others' runs) and waits (bounded) until each has saved
// its session, so a quit with a review open leaves it awaiting review.
// Once the program has stopped nobody reads the runs' event channels, and a
// run delivers its queued events before it finishes, so each channel is
// drained here first (the drains end when the channels close).
func shutdownRuns(all []runHandle, timeout time.Duration) {
	deadline := time.After(timeout)
	var runs []runHandle
	for _, r := range all {
		if w, ok := r.(interface{ Stop() }); ok {
			w.Stop() // watched: it runs in another process and goes on there
			continue
		}
		runs = append(runs, r)
	}
	for _, r := range runs {
		go drainEvents(r.Events())
	}
	for _, r := range runs {
		if s, ok := r.(interface{ Suspend() }); ok {
			s.Suspend() // leaving: a review waiting for its decision stays waiting
		} else {
			r.Cancel()
		}
	}
	for _, r := range runs {
		select {
		case <-r.Done():
		case <-deadline:
			return
		}
	}
}

// drainEvents reads and drops events until the channel closes.
func drainEvents(ch <-chan pipeline.Event) {
	for range ch {
	}
}
