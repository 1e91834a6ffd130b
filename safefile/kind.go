// Package safefile names what a path holds when it is not a regular file.
// Every input file researchtui reads from a place another person may
// fill (a library's attachments, a reference file, the config) must be a
// regular file: a named pipe blocks its reader forever, a device never
// ends, a folder is not a document. The readers refuse them by mode and
// say what they found in the same words, from here.
package safefile

import "io/fs"

// Kind is what a file of mode m is, for a message: "a folder", "a named
// pipe (FIFO)", "a character device", "a device", "a socket", "a
// symlink"; "a regular file" for one, "a special file" for anything else.
func Kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	}
	return "a special file"
}
