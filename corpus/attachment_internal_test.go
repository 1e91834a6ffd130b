package corpus

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The hint names a folder a shell can take as it is, and only for a file
// that is on this disk (a Mendeley path from another machine is not).
func TestOutsideAttachmentHint(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "Wissenschaftliche Projekte")
	os.MkdirAll(dir, 0o755)
	file := filepath.Join(dir, "paper.pdf")
	os.WriteFile(file, []byte("%PDF"), 0o644)
	_, _, _, err := attachmentPlace(t.TempDir(), nil, file)
	if err == nil || !strings.Contains(err.Error(), "--attachments-from '"+dir+"')") {
		t.Errorf("on disk: %v", err)
	}
	_, _, _, err = attachmentPlace(t.TempDir(), nil, "/media/Daten/Universität/gone.pdf")
	if err == nil || strings.Contains(err.Error(), "--attachments-from") || !strings.Contains(err.Error(), "not on this disk") {
		t.Errorf("not on disk: %v", err)
	}
}
