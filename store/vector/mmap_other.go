//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package vector

import (
	"fmt"
	"io"
	"os"
	"unsafe"
)

// mapFile reads a whole index file in one sequential read where memory
// mapping is not used, into 8-byte aligned memory so its sections can be
// viewed as float32 and uint32 slices.
func mapFile(f *os.File, size int64) (*mapping, error) {
	if size <= 0 || int64(int(size)) != size {
		return nil, fmt.Errorf("store: cannot read %d bytes", size)
	}
	words := make([]uint64, (size+7)/8)
	data := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), int(size))
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, fmt.Errorf("store: read %s: %w", f.Name(), err)
	}
	return &mapping{data: data}, nil
}
