package cli

import (
	"time"

	"github.com/researchtui/researchtui/store"
)

// resolveWait is how long a command keeps trying to open the store or
// reach its owner: long enough for an owner that is starting up or exiting
// (its socket appears or the lock is released), short enough to answer a
// script at once when nothing works.
const resolveWait = time.Second

// withShared runs fn with the data dir's store, owned by this process or
// reached through the researchtui that owns it (store/README.md).
func withShared(fn func(st store.DB) error) error {
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	st, err := connectStore(cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	return fn(st)
}
