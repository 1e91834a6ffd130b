package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/researchtui/researchtui/store"
)

// sharedStore is the store as a command that only reads (and deletes
// sessions) sees it: the data dir's own store when no other process has
// it, else a client of the process that does (store/README.md).
type sharedStore interface {
	store.Reader
	DeleteSession(id string) error
}

var (
	_ sharedStore = (*store.Store)(nil)
	_ sharedStore = (*store.Client)(nil)
)

// resolveWait is how long a command keeps trying to open the store or
// reach its owner: long enough for an owner that is starting up or exiting
// (its socket appears or the lock is released), short enough to answer a
// script at once when nothing works.
const resolveWait = time.Second

// openShared opens the data dir's store, or connects to the researchtui
// that owns it. Open and dial are tried in turn, so an owner exiting at
// that moment is taken over. The error wraps store.ErrLocked (exit 4) only
// when neither works: the store truly cannot be reached.
func openShared(cfg *Config) (sharedStore, func(), error) {
	sock := store.SocketPath(cfg.dbPath())
	deadline := time.Now().Add(resolveWait)
	for {
		st, err := openStore(cfg)
		if err == nil {
			return st, func() { st.Close() }, nil
		}
		if !errors.Is(err, store.ErrLocked) {
			return nil, nil, err
		}
		c, derr := store.Dial(sock)
		if derr == nil {
			return c, func() { c.Close() }, nil
		}
		if errors.Is(derr, store.ErrProtocol) {
			return nil, nil, fmt.Errorf("%w: %v", store.ErrLocked, derr)
		}
		if time.Now().After(deadline) {
			return nil, nil, fmt.Errorf("%w (and it does not answer on %s: %v)", err, sock, derr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// withShared runs fn with the store open or reached through its owner.
func withShared(fn func(st sharedStore) error) error {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	st, done, err := openShared(cfg)
	if err != nil {
		return err
	}
	defer done()
	return fn(st)
}
