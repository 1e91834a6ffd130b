package pipelinetest

import (
	"os"
	"testing"
	"time"

	"github.com/researchtui/researchtui/store"
)

// NewSharedEnv is NewEnv whose store serves its data dir on the socket
// beside it, as the first researchtui process does, plus a client of it:
// the store another process on the same data dir gets (store.Conn). Put it
// in an engine to play that other process.
func NewSharedEnv(tb testing.TB, script *Script) (*Env, *store.Conn) {
	tb.Helper()
	dir, err := os.MkdirTemp("", "rtp") // short: a unix socket path has 108 bytes
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	env := NewEnv(tb, script, dir)
	stop, err := env.Store.Share(store.SocketPath(env.DBPath))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(stop)
	conn, err := store.Connect(env.DBPath, store.Options{LockTimeout: 50 * time.Millisecond}, time.Second)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	if conn.Local() != nil {
		tb.Fatal("the second connection should be a client of the env's store")
	}
	return env, conn
}
