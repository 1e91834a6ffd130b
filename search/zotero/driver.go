package zotero

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	// SQLite translated to Go (wasm2go): no cgo. See doc.go for why this
	// driver.
	"github.com/ncruces/go-sqlite3"
)

// The database is read through the driver's own API, not database/sql:
// the driver panics when SQLite runs out of memory, and a panic inside
// database/sql leaves its locks held (Rows.Next holds one it releases
// without defer), so the rollback and close after it would wait for ever.
// Here a panic unwinds through this package's code alone, and the
// connection is closed after it.

// openReadOnly opens an SQLite database read only. immutable turns
// SQLite's own locking and journals off: the caller holds the lock.
func openReadOnly(path string, immutable bool) (*sqlite3.Conn, error) {
	q := "mode=ro&_pragma=query_only(1)"
	if immutable {
		q += "&immutable=1"
	} else {
		q += "&_pragma=busy_timeout(0)"
	}
	return sqlite3.OpenFlags(fileURI(path)+"?"+q, sqlite3.OPEN_READONLY|sqlite3.OPEN_URI)
}

// closeConn closes c, even after the driver panicked on it.
func closeConn(c *sqlite3.Conn) {
	defer func() { _ = recover() }()
	c.Close()
}

// fileURI is an SQLite URI filename for an absolute path.
func fileURI(path string) string {
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // C:/x is file:///C:/x
	}
	return (&url.URL{Scheme: "file", Path: p, OmitHost: false}).String()
}

type scanner interface{ Scan(dest ...any) error }

// row is the current row of a statement, scanned as database/sql would
// into *int64, *int, *string, *sql.NullString and *sql.NullInt64.
type row struct{ st *sqlite3.Stmt }

func (r row) Scan(dest ...any) error {
	for i, d := range dest {
		null := r.st.ColumnType(i) == sqlite3.NULL
		switch d := d.(type) {
		case *int64:
			*d = r.st.ColumnInt64(i)
		case *int:
			*d = r.st.ColumnInt(i)
		case *string:
			*d = r.st.ColumnText(i)
		case *sql.NullString:
			*d = sql.NullString{}
			if !null {
				*d = sql.NullString{String: r.st.ColumnText(i), Valid: true}
			}
		case *sql.NullInt64:
			*d = sql.NullInt64{}
			if !null {
				*d = sql.NullInt64{Int64: r.st.ColumnInt64(i), Valid: true}
			}
		default:
			return fmt.Errorf("zotero: cannot scan into %T", d)
		}
	}
	return nil
}

// query runs q with args (int, int64 or string) on c and calls fn on every
// row; more than limit rows are refused (table names what they are rows
// of). The connection's interrupt context stops it.
func query(ctx context.Context, c *sqlite3.Conn, table string, limit int, q string, fn func(scanner) error, args ...any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	st, _, err := c.Prepare(q)
	if err != nil {
		return err
	}
	defer st.Close()
	for i, a := range args {
		switch a := a.(type) {
		case int:
			err = st.BindInt64(i+1, int64(a))
		case int64:
			err = st.BindInt64(i+1, a)
		case string:
			err = st.BindText(i+1, a)
		default:
			err = fmt.Errorf("zotero: cannot bind %T", a)
		}
		if err != nil {
			return err
		}
	}
	n := 0
	for st.Step() {
		if n++; n > limit {
			return fmt.Errorf("not read: %s has more than %d rows for the library", table, limit)
		}
		if err := fn(row{st}); err != nil {
			return err
		}
	}
	if err := st.Err(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	return nil
}

// queryRow scans the one row q gives into dest: sql.ErrNoRows when none.
func queryRow(ctx context.Context, c *sqlite3.Conn, q string, args []any, dest ...any) error {
	found := false
	err := query(ctx, c, "the query", 1, q, func(sc scanner) error {
		found = true
		return sc.Scan(dest...)
	}, args...)
	if err == nil && !found {
		return sql.ErrNoRows
	}
	return err
}
