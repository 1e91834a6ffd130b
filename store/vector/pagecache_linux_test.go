//go:build linux

package vector

import (
	"os"

	"golang.org/x/sys/unix"
)

// dropFromPageCache evicts one file's pages (it is not mapped yet), so a
// benchmark can time a cold open without disturbing anything else.
func dropFromPageCache(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED) == nil
}
