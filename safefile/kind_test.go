package safefile

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// The kinds a hostile folder holds are named as a person would.
func TestKindNamesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "p")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "l")
	if err := os.Symlink("/etc/passwd", link); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{dir: "a folder", fifo: "a named pipe (FIFO)", "/dev/null": "a character device", link: "a symlink"} {
		fi, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := Kind(fi.Mode()); got != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
	}
	if got := Kind(0); got != "a regular file" {
		t.Errorf("a regular file: %q", got)
	}
	if got := Kind(fs.ModeIrregular); got != "a special file" {
		t.Errorf("irregular: %q", got)
	}
}
