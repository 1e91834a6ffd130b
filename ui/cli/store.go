package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/researchtui/researchtui/store"
)

// resolveWait is how long a command keeps trying to open the store or
// reach its owner: long enough for an owner that is starting up or exiting
// (its socket appears or the lock is released), short enough to answer a
// script at once when nothing works.
const resolveWait = time.Second

// storeNeed is what a command needs of the data dir's store.
type storeNeed int

const (
	// reach: the store owned by this process (serving it to later
	// processes) or reached through the researchtui that owns it
	// (store/README.md). Runs, the TUI, MCP, search and the sessions
	// commands work either way. The DB is a *store.Conn.
	reach storeNeed = iota
	// own: what only the owner may do (corpus add, compaction, doctor's
	// checks), failing fast (exit 4) while another process holds it.
	// Sessions a dead process left running become interrupted. The DB is a
	// *store.Store.
	own
)

// openStore is the one way commands open the data dir's store. Exit code 4
// (ErrLocked) remains only for a store that cannot be had as needed.
func openStore(cfg *Config, need storeNeed) (store.DB, error) {
	// Half a second: enough for another process that is just closing, short
	// enough that a second instance is told at once (exit 4).
	opt := store.Options{LockTimeout: 500 * time.Millisecond}
	var db store.DB
	var err error
	if need == reach {
		db, err = store.Connect(cfg.dbPath(), opt, resolveWait)
	} else {
		db, err = openOwned(cfg, opt)
	}
	if err != nil {
		if errors.Is(err, store.ErrLocked) {
			return nil, fmt.Errorf("%w; close the other researchtui (or wait for its run to finish) and try again", err)
		}
		return nil, err
	}
	return db, nil
}

func openOwned(cfg *Config, opt store.Options) (*store.Store, error) {
	st, err := store.Open(cfg.dbPath(), opt)
	if err != nil {
		return nil, err
	}
	if _, err := st.MarkInterrupted(); err != nil {
		st.Close()
		return nil, err
	}
	// This process owns the data dir now: serve it to the others (see
	// store/README.md). A data dir that cannot take a socket (a path over
	// the socket limit, a filesystem without them) still works alone.
	_, _ = st.Share(store.SocketPath(cfg.dbPath()))
	return st, nil
}

// withStore runs fn with the config and the store opened as need says (no
// backend is needed); DB is store.DB or *store.Conn for reach, *store.Store
// for own.
func withStore[DB store.DB](need storeNeed, fn func(cfg *Config, st DB) error) error {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	st, err := openStore(cfg, need)
	if err != nil {
		return err
	}
	defer st.Close()
	return fn(cfg, st.(DB))
}
