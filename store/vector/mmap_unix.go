//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package vector

import (
	"fmt"
	"os"
	"syscall"
)

// mapFile maps a whole index file copy-on-write: opening costs no reading,
// pages come from the page cache on first touch and are shared with it, and
// what the graph writes into its lists stays private to this process (the
// file on disk only ever changes by an atomic rename).
func mapFile(f *os.File, size int64) (*mapping, error) {
	if size <= 0 || int64(int(size)) != size {
		return nil, fmt.Errorf("store: cannot map %d bytes", size)
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("store: mmap %s: %w", f.Name(), err)
	}
	return &mapping{data: data, unmap: syscall.Munmap}, nil
}
