//go:build !unix

package bib

import "os"

// openFlags opens a library file; systems without named pipes in the
// file system have nothing to block on.
const openFlags = os.O_RDONLY
