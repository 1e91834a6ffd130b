package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
)

// Change is one thing that happened to the data, as Watch delivers it: a
// session created, updated or deleted; events appended to its log; or a
// control sent to the process that runs it. It is how a run in one
// researchtui process shows live in another (README.md).
type Change struct {
	Session string `json:"session"`
	// Updated: the session record changed (created, updated, deleted).
	Updated bool `json:"updated,omitempty"`
	// Events were appended to the session's log, in order.
	Events []EventRecord `json:"events,omitempty"`
	// Control is addressed to whichever process runs the session.
	Control *Control `json:"control,omitempty"`
}

// Control asks the process running a session to act on it: decide its
// pending review, cancel it, or cut it short and write now. Decision is the
// pipeline's own encoding; the store only carries it.
type Control struct {
	Kind     string `json:"kind"` // "decide", "cancel", "write_now" or ControlProbe
	Decision []byte `json:"decision,omitempty"`
}

// ControlProbe is a control no process acts on: sending it tells whether
// any process runs the session (ErrNotRunning when none does).
const ControlProbe = "probe"

// ErrNotRunning is returned by SendControl when no process runs the session.
var ErrNotRunning = errors.New("store: no researchtui is running that session")

// ErrClaimed is what Claim's error (a *ClaimedError) is when another
// process runs the session.
var ErrClaimed = errors.New("store: the session is running in another researchtui")

// ClaimedError says which process runs the session.
type ClaimedError struct{ PID int }

func (e *ClaimedError) Error() string {
	return fmt.Sprintf("the session is running in another researchtui (pid %d)", e.PID)
}

// Is makes errors.Is(err, ErrClaimed) hold.
func (e *ClaimedError) Is(target error) bool { return target == ErrClaimed }

// ownPID names this process in claims and messages.
var ownPID = os.Getpid()

// watchBuffer is how many changes a watcher may fall behind before its
// channel is closed (it then watches again and reloads what it shows).
const watchBuffer = 1024

// feed fans changes out to watchers and remembers which process runs which
// session (claims). It lives in the owner; clients reach it over the socket.
type feed struct {
	mu       sync.Mutex
	watchers map[chan Change]struct{}
	claims   map[string]claim
}

// claim records who runs a session: this process (conn 0) or the client on
// one connection of the socket server.
type claim struct {
	conn uint64
	pid  int
}

// publish delivers c to every watcher without ever blocking a writer: a
// watcher that has fallen watchBuffer changes behind is dropped, and its
// closed channel tells it to watch again and reload.
func (f *feed) publish(c Change) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for ch := range f.watchers {
		select {
		case ch <- c:
		default:
			delete(f.watchers, ch)
			close(ch)
		}
	}
}

func (f *feed) watch(ctx context.Context) <-chan Change {
	ch := make(chan Change, watchBuffer)
	f.mu.Lock()
	if f.watchers == nil {
		f.watchers = map[chan Change]struct{}{}
	}
	f.watchers[ch] = struct{}{}
	f.mu.Unlock()
	go func() {
		<-ctx.Done()
		f.mu.Lock()
		if _, ok := f.watchers[ch]; ok {
			delete(f.watchers, ch)
			close(ch)
		}
		f.mu.Unlock()
	}()
	return ch
}

// take claims id for the holder; it fails when someone else holds it.
func (f *feed) take(id string, c claim) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.claims == nil {
		f.claims = map[string]claim{}
	}
	if have, ok := f.claims[id]; ok && have != c {
		return &ClaimedError{PID: have.pid}
	}
	f.claims[id] = c
	return nil
}

func (f *feed) drop(id string, c claim) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.claims[id] == c {
		delete(f.claims, id)
	}
}

// dropConn releases every claim of one connection and returns the sessions
// it held: its process went away (or lost the owner) mid-run.
func (f *feed) dropConn(conn uint64) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for id, c := range f.claims {
		if c.conn == conn {
			delete(f.claims, id)
			out = append(out, id)
		}
	}
	return out
}

func (f *feed) claimed(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.claims[id]
	return ok
}

// Watch delivers every change made to the data from now on, by this
// process or any client, until ctx ends. The channel is closed when ctx
// ends or when the watcher fell too far behind (watch again and reload).
func (s *Store) Watch(ctx context.Context) (<-chan Change, error) {
	return s.feed.watch(ctx), nil
}

// Claim records that this process runs session id, so no other process
// starts or resumes it meanwhile and controls reach this one. release ends
// the claim.
func (s *Store) Claim(id string) (release func(), err error) {
	c := claim{pid: ownPID}
	if err := s.feed.take(id, c); err != nil {
		return nil, err
	}
	return func() { s.feed.drop(id, c) }, nil
}

// SendControl sends a control to the process that runs session id (this
// one or a client); ErrNotRunning when none does.
func (s *Store) SendControl(id string, c Control) error {
	if !s.feed.claimed(id) {
		return ErrNotRunning
	}
	if c.Kind == ControlProbe {
		return nil
	}
	s.feed.publish(Change{Session: id, Control: &c})
	return nil
}

// releaseConn ends a departed client's claims; its sessions still marked
// running were left mid-run and become interrupted (resumable), as at open
// after a crash (completed again when only an update was running).
func (s *Store) releaseConn(conn uint64) {
	for _, id := range s.feed.dropConn(conn) {
		_, _ = s.UpdateSession(id, func(sess *Session) error {
			if sess.Status == StatusRunning {
				sess.Status, sess.Updating = cutOff(*sess), false
			}
			return nil
		})
	}
}
