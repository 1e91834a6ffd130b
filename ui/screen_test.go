package ui

import (
	"io"
	"sync"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/charmbracelet/x/vt"
)

// Bubble Tea redraws only what changed between frames: "Sessions (0)"
// followed by a load becomes a cursor move and "6)", so "Sessions (6)"
// never appears whole in the output stream. A test's program output is
// therefore also played into a terminal emulator (Charm's x/vt), and a
// text counts as shown when it is on that screen.

var emulators sync.Map // *teatest.TestModel → *vt.Emulator

// screenOf is the emulated terminal a test program draws on, big enough
// for every size the tests use; the emulator's answers to the program's
// terminal queries are read and dropped (unread, they would block it).
func screenOf(tm *teatest.TestModel) *vt.Emulator {
	if s, ok := emulators.Load(tm); ok {
		return s.(*vt.Emulator)
	}
	e := vt.NewEmulator(200, 60)
	if s, loaded := emulators.LoadOrStore(tm, e); loaded {
		return s.(*vt.Emulator)
	}
	go func() { _, _ = io.Copy(io.Discard, e) }()
	// A line feed starts a new line at its first column, as on a terminal
	// whose driver maps NL to CR-NL (the renderer relies on it).
	_, _ = e.WriteString(ansi.SetMode(ansi.ModeLineFeedNewLine))
	return e
}

// screenMu serialises writes to the emulators (WaitFor's condition runs on
// the test's goroutine, but tests may wait from helpers concurrently).
var screenMu sync.Mutex

// onScreen plays b into tm's emulated terminal and returns its text.
func onScreen(tm *teatest.TestModel, b []byte) string {
	screenMu.Lock()
	defer screenMu.Unlock()
	e := screenOf(tm)
	_, _ = e.Write(b)
	return e.String()
}
