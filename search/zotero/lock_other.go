//go:build !unix && !windows

package zotero

import "os"

// lockShared leaves the locking to SQLite where neither POSIX nor Windows
// locks are there to take: the database is opened read only with SQLite's
// locks, which fail with "database is locked" while Zotero runs. SQLite
// then makes a WAL index (-shm) and an empty -wal beside a database in WAL
// mode, which it cannot remove read only.
func lockShared(*os.File) (unlock func(), immutable bool, err error) {
	return func() {}, false, nil
}
