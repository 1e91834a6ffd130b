package search

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within runs fn and fails the test if it has not returned after d: a
// regression (a FIFO that blocks the open, /dev/zero read forever) fails
// instead of hanging the test binary.
func within(t *testing.T, d time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s: still running after %s", what, d)
	}
}

// A folder others may write to: a .txt that is a link to /etc/passwd, to
// /proc/self/environ or to a file outside, a .pdf that is a FIFO or a link
// to /dev/zero, a link loop, a folder on the path that is a link to
// outside, a 2 GB sparse PDF, a ".." path. Each is refused, quickly, with
// its own reason, before a byte of it is read; a link that stays inside
// the folder is followed.
func TestReadLocalFileRefusesWhatItMustNotRead(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("symlinks and FIFOs")
	}
	dir := t.TempDir()
	outside := t.TempDir()
	secret := "SECRET_TOKEN_" + strings.Repeat("x", 8)
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte(secret), 0o600)
	os.WriteFile(filepath.Join(dir, "real.txt"), []byte("words about lattices"), 0o644)
	link := func(target, name string) {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	link("/etc/passwd", "passwd.txt")
	link("/proc/self/environ", "environ.txt")
	link(filepath.Join(outside, "secret.txt"), "secret.txt")
	link("/dev/zero", "zero.pdf")
	link("loop-b.txt", "loop-a.txt")
	link("loop-a.txt", "loop-b.txt")
	link(outside, "sub")
	link("real.txt", "alias.txt") // inside the folder: followed
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.pdf"), 0o644); err != nil {
		t.Fatal(err)
	}
	big, err := os.Create(filepath.Join(dir, "big.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Truncate(2 << 30); err != nil { // sparse: nothing is written
		t.Fatal(err)
	}
	big.Close()

	for _, c := range []struct {
		name string
		want error
		text string
	}{
		{"passwd.txt", ErrOutsideFolder, "a symlink to outside its folder"},
		{"environ.txt", ErrOutsideFolder, "a symlink to outside its folder"},
		{"secret.txt", ErrOutsideFolder, "a symlink to outside its folder"},
		{"zero.pdf", ErrOutsideFolder, "a symlink to outside its folder"},
		{"loop-a.txt", ErrSymlinkLoop, "a symlink loop"},
		{"fifo.pdf", ErrNotRegularFile, "not a regular file: a named pipe (FIFO)"},
		{"big.pdf", ErrFileTooLarge, "2.0 GB, over the 200 MB limit"},
	} {
		var err error
		var doc Document
		within(t, 5*time.Second, c.name, func() { doc, _, err = ReadLocalFile(filepath.Join(dir, c.name)) })
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s: %v, want %q", c.name, err, c.text)
		}
		if strings.Contains(doc.Text, "root:") || strings.Contains(doc.Text, "PATH=") || strings.Contains(doc.Text, secret) {
			t.Errorf("%s: read %q", c.name, doc.Text[:min(len(doc.Text), 80)])
		}
	}
	// A folder on the path that leads out: refused, though the file
	// itself is a regular file.
	if _, _, err := OpenLocalFile(dir, "sub/secret.txt"); !errors.Is(err, ErrOutsideFolder) {
		t.Errorf("sub/secret.txt: %v", err)
	}
	if _, _, err := OpenLocalFile(dir, "../"+filepath.Base(outside)+"/secret.txt"); !errors.Is(err, ErrPathEscapes) {
		t.Errorf("..: %v", err)
	}
	if _, _, err := OpenLocalFile(dir, "missing.pdf"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	if _, rec, err := ReadLocalFile(filepath.Join(dir, "alias.txt")); err != nil || !strings.Contains(rec.Abstract, "lattices") {
		t.Errorf("a link inside the folder: %+v %v", rec, err)
	}
}

// ReadLocalData stops when its context ends, and hashes what it reads.
func TestReadLocalDataStopsWithItsContext(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "a.txt")
	os.WriteFile(p, []byte("abc"), 0o644)
	f, info, err := OpenLocalFile(filepath.Dir(p), "a.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := ReadLocalData(ctx, f, info.Size()); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	data, sum, err := ReadLocalData(context.Background(), f, info.Size())
	if err != nil || string(data) != "abc" || sum != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("read %q %s %v", data, sum, err)
	}
}
