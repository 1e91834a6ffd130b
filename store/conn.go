package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Conn is how a process holds a data dir: as its owner (a *Store it serves
// to the others) or as a client of the process that owns it. When the owner
// goes away, a Conn takes over: it opens the database itself if it can
// (and serves it from then on), else it follows whichever process did.
// The sessions it runs are claimed again on the new owner, so they neither
// become interrupted nor can be started twice (README.md).
type Conn struct {
	path string
	opt  Options

	mu     sync.Mutex
	cur    DB
	gen    int                 // bumped at every change of owner
	claims map[string]func()   // sessions this process runs -> release on cur
	idx    map[string]RunIndex // cur's indexes by model (gen-bound)
	closed bool
}

var _ DB = (*Conn)(nil)

// takeoverWait is how long a Conn keeps trying to reach a data dir whose
// owner went away: an owner that is exiting saves its vector indexes before
// it releases the file, which takes seconds on a large one.
const takeoverWait = 30 * time.Second

// Connect opens the database at dbPath as its owner, serving it on the
// socket beside it, or connects to the process that owns it. Opening and
// dialling are tried in turn for wait (an owner may be starting or exiting
// at that moment). The error wraps ErrLocked only when neither works: the
// store truly cannot be reached. An owner marks sessions a dead process
// left running as interrupted.
func Connect(dbPath string, opt Options, wait time.Duration) (*Conn, error) {
	c := &Conn{path: dbPath, opt: opt, claims: map[string]func(){}}
	db, err := c.resolve(wait)
	if err != nil {
		return nil, err
	}
	c.cur = db
	return c, nil
}

// resolve opens or dials until one works or wait has passed.
func (c *Conn) resolve(wait time.Duration) (DB, error) {
	sock := SocketPath(c.path)
	deadline := time.Now().Add(wait)
	for {
		st, err := Open(c.path, c.opt)
		if err == nil {
			if err := c.own(st, sock); err != nil {
				st.Close()
				return nil, err
			}
			return st, nil
		}
		if !errors.Is(err, ErrLocked) {
			return nil, err
		}
		cl, derr := Dial(sock)
		if derr == nil {
			return cl, nil
		}
		if errors.Is(derr, ErrProtocol) {
			return nil, fmt.Errorf("%w: %v", ErrLocked, derr)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%w (and it does not answer on %s: %v)", err, sock, derr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// own makes this process the owner of st: its own sessions claimed first
// (so they stay running), the rest a dead process left running marked
// interrupted, then the socket served. A data dir that cannot take a socket
// (a path over the socket limit) still works alone.
func (c *Conn) own(st *Store, sock string) error {
	for id := range c.claims {
		if release, err := st.Claim(id); err == nil {
			c.claims[id] = release
		}
	}
	if _, err := st.MarkInterrupted(); err != nil {
		return err
	}
	_, _ = st.Share(sock)
	return nil
}

// Local is the owner's store when this process owns the data dir, else
// nil: what only the owner may do (compaction, bulk indexing) needs it.
func (c *Conn) Local() *Store {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, _ := c.cur.(*Store)
	return st
}

func (c *Conn) current() (DB, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cur, c.gen
}

// takeOver replaces a client whose owner went away (gen is the generation
// that failed; if another call already replaced it, that one is used).
func (c *Conn) takeOver(gen int) (DB, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errors.New("store: closed")
	}
	if gen != c.gen {
		return c.cur, nil
	}
	old := c.cur
	db, err := c.resolve(takeoverWait)
	if err != nil {
		return nil, err
	}
	old.Close()
	c.cur, c.idx = db, nil
	c.gen++
	if cl, ok := db.(*Client); ok { // another process took over: claim there
		for id := range c.claims {
			if release, err := cl.claimRenewed(id); err == nil {
				c.claims[id] = release
			}
		}
	}
	return db, nil
}

// with runs fn on the current store, once more on the new one if the owner
// went away during it.
func with[T any](c *Conn, fn func(DB) (T, error)) (T, error) {
	db, gen := c.current()
	v, err := fn(db)
	if err != nil && errors.Is(err, ErrUnreachable) {
		if _, isClient := db.(*Client); isClient {
			db2, terr := c.takeOver(gen)
			if terr != nil {
				return v, fmt.Errorf("%w; taking the data dir over failed: %v", err, terr)
			}
			return fn(db2)
		}
	}
	return v, err
}

// do is with for calls that return only an error.
func (c *Conn) do(fn func(DB) error) error {
	_, err := with(c, func(db DB) (struct{}, error) { return struct{}{}, fn(db) })
	return err
}

// Close closes the store or the connection to its owner.
func (c *Conn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	return c.cur.Close()
}

// Owner is the pid of the process that holds the data.
func (c *Conn) Owner() int {
	db, _ := c.current()
	return db.Owner()
}

// Claim claims the session on the current owner and again on every new one.
func (c *Conn) Claim(id string) (func(), error) {
	release, err := with(c, func(db DB) (func(), error) { return db.Claim(id) })
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.claims[id] = release
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		r := c.claims[id]
		delete(c.claims, id)
		c.mu.Unlock()
		if r != nil {
			r()
		}
	}, nil
}

// Watch watches the current owner; the channel closes when it goes away
// (Follow watches again, which takes over if need be).
func (c *Conn) Watch(ctx context.Context) (<-chan Change, error) {
	return with(c, func(db DB) (<-chan Change, error) { return db.Watch(ctx) })
}

// Vectors is the model's index on whichever process owns the data.
func (c *Conn) Vectors(model string) (RunIndex, error) {
	if _, err := c.index(model); err != nil {
		return nil, err
	}
	return connIndex{c: c, model: model}, nil
}

// index is the current owner's index of model, opened once per owner.
func (c *Conn) index(model string) (RunIndex, error) {
	return with(c, func(db DB) (RunIndex, error) {
		c.mu.Lock()
		ix := c.idx[model]
		gen := c.gen
		c.mu.Unlock()
		if ix != nil {
			return ix, nil
		}
		ix, err := db.Vectors(model)
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		if gen == c.gen {
			if c.idx == nil {
				c.idx = map[string]RunIndex{}
			}
			c.idx[model] = ix
		}
		c.mu.Unlock()
		return ix, nil
	})
}

// connIndex follows the data dir's owner: each call goes to the index of
// whichever process owns it at that moment.
type connIndex struct {
	c     *Conn
	model string
}

func (x connIndex) ix() (RunIndex, error) { return x.c.index(x.model) }

func (x connIndex) Add(id string, vec []float32) error {
	return x.c.do(func(DB) error {
		ix, err := x.ix()
		if err != nil {
			return err
		}
		return ix.Add(id, vec)
	})
}

func (x connIndex) Search(q []float32, k int) ([]Hit, error) {
	return with(x.c, func(DB) ([]Hit, error) {
		ix, err := x.ix()
		if err != nil {
			return nil, err
		}
		return ix.Search(q, k)
	})
}

func (x connIndex) Status() IndexStatus {
	ix, err := x.ix()
	if err != nil {
		return IndexStatus{}
	}
	return ix.Status()
}

func (x connIndex) Len() int { return x.Status().Vectors }

func (x connIndex) Reloading() bool {
	ix, err := x.ix()
	return err == nil && ix.Reloading()
}

func (x connIndex) WaitLoaded(ctx context.Context) error {
	ix, err := x.ix()
	if err != nil {
		return err
	}
	return ix.WaitLoaded(ctx)
}

// Follow calls fn with every change until ctx ends, watching again (and
// calling resync first, so the caller reloads what it shows) whenever the
// feed broke: the owner went away or the watcher fell behind.
func Follow(ctx context.Context, db DB, fn func(Change), resync func()) {
	for ctx.Err() == nil {
		ch, err := db.Watch(ctx)
		if err == nil {
			for change := range ch {
				fn(change)
			}
		}
		if ctx.Err() != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
		if resync != nil {
			resync()
		}
	}
}
