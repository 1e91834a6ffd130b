package zotero

import (
	"database/sql"
	"net/url"
	"path/filepath"
	"strings"

	// SQLite translated to Go (wasm2go): no cgo. See doc.go for why this
	// driver.
	_ "github.com/ncruces/go-sqlite3/driver"
)

// driverName is the database/sql driver this package reads SQLite with.
const driverName = "sqlite3"

// openReadOnly opens an SQLite database read only. immutable turns
// SQLite's own locking and journals off: the caller holds the lock.
func openReadOnly(path string, immutable bool) (*sql.DB, error) {
	q := "mode=ro&_pragma=query_only(1)"
	if immutable {
		q += "&immutable=1"
	} else {
		q += "&_pragma=busy_timeout(0)"
	}
	db, err := sql.Open(driverName, fileURI(path)+"?"+q)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// fileURI is an SQLite URI filename for an absolute path.
func fileURI(path string) string {
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // C:/x is file:///C:/x
	}
	return (&url.URL{Scheme: "file", Path: p, OmitHost: false}).String()
}
