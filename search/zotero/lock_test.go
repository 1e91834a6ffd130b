package zotero_test

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	_ "github.com/ncruces/go-sqlite3/driver"

	"github.com/researchtui/researchtui/search/zotero"
	"github.com/researchtui/researchtui/testkit/child"
)

// lockHelperEnv names the database the helper process holds.
const lockHelperEnv = "ZOTERO_TEST_LOCK_HELPER"

// TestLockHelper is not a test: run as a helper process, it holds a
// database the way a running Zotero does (PRAGMA main.locking_mode=
// EXCLUSIVE, then a write transaction), says "locked" and waits until its
// standard input closes.
func TestLockHelper(t *testing.T) {
	t.Parallel()
	path := child.Var(t, lockHelperEnv, "TestReadDatabaseLocked")
	if err := holdLock(path); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func holdLock(path string) error {
	db, err := sql.Open("sqlite3", "file:"+filepath.ToSlash(path))
	if err != nil {
		return err
	}
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	for _, q := range []string{"PRAGMA main.locking_mode=EXCLUSIVE", "BEGIN EXCLUSIVE", "UPDATE libraries SET lastSync=lastSync WHERE libraryID=1"} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	var n int
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM items").Scan(&n); err != nil {
		return err
	}
	fmt.Println("locked")
	_, _ = io.Copy(io.Discard, os.Stdin)
	_, err = conn.ExecContext(ctx, "ROLLBACK")
	return err
}

// TestReadDatabaseLocked has another process hold the database as Zotero
// does while it runs, and checks that the read fails with ErrLocked, says
// what to do, and leaves the database's bytes as they were; then, the
// lock released, that the read succeeds.
func TestReadDatabaseLocked(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the helper's locks are POSIX locks")
	}
	for _, c := range []struct {
		legacy, sqliteLocks bool
	}{{true, false}, {false, false}, {true, true}, {false, true}} {
		legacy := c.legacy
		name := map[bool]string{true: "rollback journal (Zotero 7-9)", false: "WAL (Zotero 10)"}[legacy]
		if c.sqliteLocks {
			name += ", SQLite's locks (as on Windows)"
		}
		t.Run(name, func(t *testing.T) {
			if c.sqliteLocks {
				defer zotero.UseSQLiteLocks()()
			}
			dataDir, _ := buildTestLibrary(t, legacy)
			db := filepath.Join(dataDir, zotero.DatabaseName)
			before := fileSum(t, db)

			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := child.Command(ctx, "TestLockHelper", []string{lockHelperEnv + "=" + db}, "-test.count=1")
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(stdout).ReadString('\n')
			if err != nil || strings.TrimSpace(line) != "locked" {
				stdin.Close()
				_ = cmd.Wait()
				t.Fatalf("helper said %q (%v)", line, err)
			}

			_, err = zotero.ReadDatabase(context.Background(), dataDir)
			if !errors.Is(err, zotero.ErrLocked) {
				t.Errorf("reading a held database: %v, want ErrLocked", err)
			} else {
				for _, want := range []string{"Zotero is running", "close Zotero", "researchtui library import zotero --api"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("the error %q does not say %q", err, want)
					}
				}
			}
			if fileSum(t, db) != before {
				t.Error("the failed read changed zotero.sqlite")
			}

			stdin.Close()
			if err := cmd.Wait(); err != nil {
				t.Fatalf("helper: %v", err)
			}
			if fileSum(t, db) != before {
				t.Fatal("the helper changed zotero.sqlite") // the test's own premise
			}
			lib, err := zotero.ReadDatabase(context.Background(), dataDir)
			if err != nil {
				t.Fatalf("reading after Zotero closed: %v", err)
			}
			if len(lib.Items) != 10 {
				t.Errorf("%d items after the lock is gone", len(lib.Items))
			}
			if fileSum(t, db) != before {
				t.Error("reading changed zotero.sqlite")
			}
		})
	}
}
