package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/researchtui/researchtui/pipeline"
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

// searchShared searches everything ever read: with this process's own
// engine when it can own the data dir (semantic, keywords offline), else
// through the researchtui that owns it (semantic only: the query is
// embedded here and the owner's index answers). semantic says which ran.
func searchShared(ctx context.Context, cfg *Config, query string, k int) (passages []pipeline.Passage, semantic bool, err error) {
	for attempt := 0; ; attempt++ {
		a, err := openApp(cfg)
		if err == nil {
			defer a.Close()
			return a.engine.SearchKnowledge(ctx, query, cfg.EmbedModel, k)
		}
		if !errors.Is(err, store.ErrLocked) {
			return nil, false, err
		}
		st, done, err := openShared(cfg)
		if err != nil {
			return nil, false, err
		}
		c, ok := st.(*store.Client)
		if !ok { // the owner exited meanwhile: own the store and search here
			done()
			if attempt < 2 {
				continue
			}
			return nil, false, fmt.Errorf("%w: the data dir keeps changing hands; try again", store.ErrLocked)
		}
		defer done()
		ps, err := ownerSearch(c, cfg)(ctx, query, k)
		return ps, err == nil, err
	}
}

// ownerSearch is a semantic knowledge search through the data dir's owner.
func ownerSearch(c *store.Client, cfg *Config) func(ctx context.Context, query string, k int) ([]pipeline.Passage, error) {
	return func(ctx context.Context, query string, k int) ([]pipeline.Passage, error) {
		b, err := newBackend(cfg)
		if err != nil {
			return nil, err
		}
		ps, err := pipeline.SemanticSearch(ctx, c, b, query, cfg.EmbedModel, k)
		if err != nil && ctx.Err() == nil {
			return nil, fmt.Errorf("%v (another researchtui, pid %d, has the data dir open; searching through it needs the embedding model %s, keyword search needs the data dir to itself)", err, c.Owner(), cfg.EmbedModel)
		}
		return ps, err
	}
}
