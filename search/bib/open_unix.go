//go:build unix

package bib

import (
	"os"
	"syscall"
)

// openFlags opens a library file without blocking: a named pipe put in
// its place after the mode check would otherwise hang the open until a
// writer comes.
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK
