//go:build unix

package zotero

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// SQLite's locks on unix are POSIX advisory locks on bytes past the first
// gigabyte of the file (os_unix.c): a reader holds a read lock on the
// 510 "shared" bytes, taken while it holds a read lock on the "pending"
// byte; a writer's exclusive lock is a write lock on the shared bytes.
// Zotero holds that exclusive lock for as long as it runs
// (PRAGMA main.locking_mode=EXCLUSIVE, chrome/content/zotero/xpcom/db.js).
const (
	pendingByte = 0x40000000
	sharedFirst = pendingByte + 2
	sharedSize  = 510
)

// lockShared takes a reader's shared lock on the database as SQLite
// would, so that the database can then be read with SQLite's own locking
// off (immutable=1), which makes no journal, WAL or shared-memory file
// beside it. The lock fails with ErrLocked while another process (Zotero)
// holds the exclusive lock; where the file system has no locks (some
// network mounts), immutable is false and SQLite locks as usual.
func lockShared(f *os.File) (unlock func(), immutable bool, err error) {
	fd := f.Fd()
	pending := syscall.Flock_t{Type: syscall.F_RDLCK, Whence: 0, Start: pendingByte, Len: 1}
	if err := syscall.FcntlFlock(fd, syscall.F_SETLK, &pending); err != nil {
		if busy(err) {
			return nil, false, ErrLocked
		}
		return func() {}, false, nil
	}
	shared := syscall.Flock_t{Type: syscall.F_RDLCK, Whence: 0, Start: sharedFirst, Len: sharedSize}
	serr := syscall.FcntlFlock(fd, syscall.F_SETLK, &shared)
	pending.Type = syscall.F_UNLCK
	_ = syscall.FcntlFlock(fd, syscall.F_SETLK, &pending)
	if serr != nil {
		if busy(serr) {
			return nil, false, ErrLocked
		}
		return nil, false, fmt.Errorf("zotero: locking %s: %w", f.Name(), serr)
	}
	return func() {
		shared.Type = syscall.F_UNLCK
		_ = syscall.FcntlFlock(fd, syscall.F_SETLK, &shared)
	}, true, nil
}

func busy(err error) bool {
	return errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES)
}
