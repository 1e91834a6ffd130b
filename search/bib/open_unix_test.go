//go:build unix

package bib

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A named pipe would block the read until a writer came (and then give
// what the writer likes): it is refused at once, no writer needed.
func TestLoadFileFIFO(t *testing.T) {
	t.Parallel()
	name := filepath.Join(t.TempDir(), "refs.bib")
	if err := syscall.Mkfifo(name, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	_, err := loadWithin(t, name, 5*time.Second)
	if err == nil || !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "refs.bib is a named pipe (FIFO)") {
		t.Errorf("error = %v, want a clear refusal", err)
	}
}
