package bib

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/researchtui/researchtui/safefile"
)

// LoadFile reads a library file from disk for Read, refusing what is not
// a regular file before it reads a byte: a device (/dev/zero, /dev/stdin)
// would grow without bound and a named pipe would block forever, so a
// size checked with Stat alone promises nothing. The mode is checked by
// path, then again on the opened file (opened non-blocking, so that a
// pipe swapped in between cannot hang the open), and the bytes are read
// through a reader capped at MaxInput+1, so a file that grows while it
// is read is refused rather than followed.
func LoadFile(name string) ([]byte, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if err := regularFile(name, fi); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(name, openFlags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := regularFile(name, fi); err != nil {
		return nil, err
	}
	if fi.Size() > MaxInput {
		return nil, fileTooLarge(name, MaxInput)
	}
	return readAtMost(name, f, MaxInput)
}

// readAtMost reads r to its end, refusing it once it has given more than
// limit bytes: what Stat said of its size is not what a reader may get.
func readAtMost(name string, r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fileTooLarge(name, limit)
	}
	return data, nil
}

// ErrNotRegular is what LoadFile says of a folder, device, pipe or
// socket, wrapped with what it is.
var ErrNotRegular = errors.New("not a regular file")

func regularFile(name string, fi fs.FileInfo) error {
	if fi.Mode().IsRegular() {
		return nil
	}
	what := safefile.Kind(fi.Mode())
	return fmt.Errorf("%s is %s, %w: a library file must be a regular file (a .bib, .json or .ris export)", filepath.Base(name), what, ErrNotRegular)
}

func fileTooLarge(name string, limit int64) error {
	return fmt.Errorf("%s has more than the %d MB a library file may have", filepath.Base(name), limit>>20)
}
