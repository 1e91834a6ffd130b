package zotero

import "os"

// UseSQLiteLocks makes ReadDatabase leave the locking to SQLite, as it
// does where SQLite's locks are not POSIX locks (Windows), until restore.
func UseSQLiteLocks() (restore func()) {
	old := lockFile
	lockFile = func(*os.File) (func(), bool, error) { return func() {}, false, nil }
	return func() { lockFile = old }
}
