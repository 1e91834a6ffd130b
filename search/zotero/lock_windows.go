//go:build windows

package zotero

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/windows"
)

// SQLite's locks on Windows are LockFileEx locks on bytes past the first
// gigabyte of the file (os_win.c): a reader holds a shared lock on the 510
// "shared" bytes, taken while it holds an exclusive lock on the "pending"
// byte; a writer's exclusive lock is an exclusive lock on the shared bytes.
// Zotero holds that exclusive lock for as long as it runs.
const (
	pendingByte = 0x40000000
	sharedFirst = pendingByte + 2
	sharedSize  = 510
)

// lockShared takes a reader's shared lock on the database as SQLite
// would, so that the database can then be read with SQLite's own locking
// off (immutable=1), which makes no journal, WAL or shared-memory file
// beside it. It fails with ErrLocked while another process (Zotero) holds
// the exclusive lock; where the file system refuses locks, immutable is
// false and SQLite locks as usual.
func lockShared(f *os.File) (unlock func(), immutable bool, err error) {
	h := windows.Handle(f.Fd())
	pending := windows.Overlapped{Offset: pendingByte}
	if err := windows.LockFileEx(h, windows.LOCKFILE_FAIL_IMMEDIATELY|windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, &pending); err != nil {
		if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
			return nil, false, ErrLocked
		}
		return func() {}, false, nil
	}
	shared := windows.Overlapped{Offset: sharedFirst}
	serr := windows.LockFileEx(h, windows.LOCKFILE_FAIL_IMMEDIATELY, 0, sharedSize, 0, &shared)
	_ = windows.UnlockFileEx(h, 0, 1, 0, &pending)
	if serr != nil {
		if errors.Is(serr, windows.ERROR_LOCK_VIOLATION) {
			return nil, false, ErrLocked
		}
		return nil, false, fmt.Errorf("zotero: locking %s: %w", f.Name(), serr)
	}
	return func() { _ = windows.UnlockFileEx(h, 0, sharedSize, 0, &shared) }, true, nil
}
