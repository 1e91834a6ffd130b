package bib

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// loadWithin runs LoadFile, failing the test rather than hanging it when
// the call does not return within d.
func loadWithin(t *testing.T, name string, d time.Duration) ([]byte, error) {
	t.Helper()
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		data, err := LoadFile(name)
		done <- result{data, err}
	}()
	select {
	case r := <-done:
		return r.data, r.err
	case <-time.After(d):
		t.Fatalf("LoadFile(%s) still running after %v", name, d)
		return nil, nil
	}
}

// A device would be read without end (Stat says /dev/zero has 0 bytes):
// it is refused before a byte is read, by name and through a link.
func TestLoadFileDevice(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero here")
	}
	link := filepath.Join(t.TempDir(), "refs.bib")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"/dev/zero", link} {
		data, err := loadWithin(t, name, 5*time.Second)
		if err == nil || !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "is a character device") {
			t.Errorf("LoadFile(%s) = %d bytes, %v; want a clear refusal", name, len(data), err)
		}
	}
}

// A folder is named as one.
func TestLoadFileFolder(t *testing.T) {
	t.Parallel()
	_, err := loadWithin(t, t.TempDir(), 5*time.Second)
	if err == nil || !strings.Contains(err.Error(), "is a folder") {
		t.Errorf("error = %v, want the folder named", err)
	}
}

// A regular file is read whole; one that Stat says is over MaxInput is
// refused without being read (the file is sparse: nothing is written).
func TestLoadFileRegular(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	name := filepath.Join(dir, "refs.bib")
	want := "@article{k, title = {T}}\n"
	if err := os.WriteFile(name, []byte(want), 0o600); err != nil {
		t.Fatal(err)
	}
	data, err := loadWithin(t, name, 5*time.Second)
	if err != nil || string(data) != want {
		t.Errorf("LoadFile = %q, %v", data, err)
	}
	huge := filepath.Join(dir, "huge.bib")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxInput + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := loadWithin(t, huge, 5*time.Second); err == nil || !strings.Contains(err.Error(), "more than the 256 MB") {
		t.Errorf("huge file: %v", err)
	}
}

// What a reader gives is capped whatever Stat said: a source without end
// is refused once it passes the limit.
func TestReadAtMost(t *testing.T) {
	t.Parallel()
	data, err := readAtMost("zero", endless{}, 1<<20)
	if err == nil || len(data) != 0 || !strings.Contains(err.Error(), "zero has more than the 1 MB") {
		t.Errorf("endless reader: %d bytes, %v", len(data), err)
	}
	data, err = readAtMost("short", strings.NewReader("abc"), 3)
	if err != nil || string(data) != "abc" {
		t.Errorf("at the limit: %q, %v", data, err)
	}
}

type endless struct{}

func (endless) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

var _ io.Reader = endless{}
