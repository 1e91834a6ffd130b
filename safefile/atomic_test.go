package safefile

import (
	"os"
	"path/filepath"
	"testing"
)

// A write replaces the file whole, makes its folder, sets its mode and
// leaves no temporary file behind.
func TestWriteAtomicReplacesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new", "state.json")
	for _, data := range []string{"first", "second, longer"} {
		if err := WriteAtomic(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != data {
			t.Fatalf("read %q, %v; want %q", got, err, data)
		}
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, %v; want 0600", fi.Mode(), err)
	}
	if es, _ := os.ReadDir(filepath.Dir(path)); len(es) != 1 {
		t.Errorf("%d files in the folder, want only the state file", len(es))
	}
}
