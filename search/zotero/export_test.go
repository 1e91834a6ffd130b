package zotero

import (
	"os"
	"time"

	"github.com/ncruces/go-sqlite3"
)

// UseSQLiteLocks makes ReadDatabase leave the locking to SQLite, as it
// does where SQLite's locks are not POSIX locks (Windows), until restore.
func UseSQLiteLocks() (restore func()) {
	old := lockFile
	lockFile = func(*os.File) (func(), bool, error) { return func() {}, false, nil }
	return func() { lockFile = old }
}

// LimitHeap makes ReadDatabase's SQLite run out of memory past n bytes
// (which its driver answers with a panic), until restore.
func LimitHeap(n int64) (restore func()) {
	old := limitConn
	limitConn = func(c *sqlite3.Conn) {
		old(c)
		c.HardHeapLimit(n)
	}
	return func() { limitConn = old }
}

// SetReadTimeout bounds ReadDatabase to d, until restore.
func SetReadTimeout(d time.Duration) (restore func()) {
	old := readTimeout
	readTimeout = d
	return func() { readTimeout = old }
}

// SetMaxRows caps the rows of any one query of ReadDatabase at n, until
// restore.
func SetMaxRows(n int) (restore func()) {
	old := maxRows
	maxRows = n
	return func() { maxRows = old }
}
