package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `sessions list` on a fresh machine says there are none and makes no
// database (issue 47's trial).
func TestSessionsListMakesNoDatabase(t *testing.T) {
	t.Parallel()
	c := newCLI(t, "http://127.0.0.1:1", nil)
	stdout, stderr, code, _ := c.run("sessions", "list")
	if code != 0 || stdout != "" || !strings.Contains(stderr, "no sessions yet") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	entries, _ := os.ReadDir(filepath.Join(c.dir, "data"))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".db") {
			t.Errorf("%s was made by listing nothing", e.Name())
		}
	}
}
