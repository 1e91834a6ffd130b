package store

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// ErrUnreachable is wrapped by Dial's error when no process serves the data
// dir: the socket is missing or stale. With the database locked as well,
// the store truly cannot be reached (exit code 4).
var ErrUnreachable = errors.New("store: no researchtui answers for this data dir")

// ErrProtocol is wrapped when the owner speaks another protocol or schema
// version (a different researchtui build).
var ErrProtocol = errors.New("store: protocol mismatch")

// Client is a connection to the process that owns a data dir. It
// implements Reader (and DeleteSession). It is safe for concurrent use;
// requests take turns on the one connection.
type Client struct {
	path  string
	owner int // the owner's pid, for messages

	mu   sync.Mutex
	conn net.Conn
	sc   *bufio.Scanner
	enc  *json.Encoder

	// stalled is set when the owner did not answer in time: the request
	// may still be answered later, so the connection is dialled afresh.
	stalled bool

	claimMu sync.Mutex
	claims  map[string]bool // sessions this process runs, claimed again on reconnecting
}

// Dial connects to the owner listening at path (SocketPath of the
// database) and checks that it speaks this build's protocol and schema.
func Dial(path string) (*Client, error) {
	c := &Client{path: path, claims: map[string]bool{}}
	if err := c.connect(); err != nil {
		return nil, err
	}
	return c, nil
}

// connect dials the socket and exchanges hellos; c.mu is held or c is new.
func (c *Client) connect() error {
	conn, sc, enc, pid, err := dialOwner(c.path)
	if err != nil {
		return err
	}
	c.conn, c.sc, c.enc, c.owner = conn, sc, enc, pid
	return nil
}

// dialOwner opens one connection to the owner and exchanges hellos.
func dialOwner(path string) (net.Conn, *bufio.Scanner, *json.Encoder, int, error) {
	fail := func(err error) (net.Conn, *bufio.Scanner, *json.Encoder, int, error) { return nil, nil, nil, 0, err }
	conn, err := net.DialTimeout("unix", path, 2*time.Second)
	if err != nil {
		return fail(fmt.Errorf("%w (%v)", ErrUnreachable, err))
	}
	sc := bufio.NewScanner(conn)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	enc := json.NewEncoder(conn)
	_ = conn.SetDeadline(time.Now().Add(helloTimeout))
	if err := enc.Encode(hello{Proto: protoName, Version: ProtocolVersion, Schema: SchemaVersion(), PID: ownPID}); err != nil {
		conn.Close()
		return fail(fmt.Errorf("%w (%v)", ErrUnreachable, err))
	}
	if !sc.Scan() {
		pid := peerPID(conn)
		conn.Close()
		if isTimeout(sc.Err()) {
			return fail(&NotAnsweringError{PID: pid, Waited: helloTimeout})
		}
		return fail(fmt.Errorf("%w (the owner closed the connection at hello)", ErrUnreachable))
	}
	var h hello
	if err := json.Unmarshal(sc.Bytes(), &h); err != nil || h.Proto != protoName {
		conn.Close()
		return fail(fmt.Errorf("%w: %s is not a researchtui store socket", ErrProtocol, path))
	}
	if h.Version != ProtocolVersion || h.Schema != SchemaVersion() {
		conn.Close()
		return fail(fmt.Errorf("%w: the researchtui that owns this data dir (pid %d) speaks store protocol %d, schema %d; this one speaks protocol %d, schema %d: use the same researchtui build for both, or close the other one",
			ErrProtocol, h.PID, h.Version, h.Schema, ProtocolVersion, SchemaVersion()))
	}
	_ = conn.SetDeadline(time.Time{})
	return conn, sc, enc, h.PID, nil
}

// Owner is the pid of the process that owns the data dir.
func (c *Client) Owner() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.owner
}

// Close closes the connection.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conn.Close()
}

// Watch is Store.Watch through the owner, on a connection of its own. The
// channel closes when ctx ends or the owner goes away (watch again: the
// data dir may have a new owner by then).
func (c *Client) Watch(ctx context.Context) (<-chan Change, error) {
	conn, sc, enc, _, err := dialOwner(c.path)
	if err != nil {
		return nil, err
	}
	if err := enc.Encode(request{Op: "watch"}); err != nil {
		conn.Close()
		return nil, fmt.Errorf("%w (%v)", ErrUnreachable, err)
	}
	out := make(chan Change, 64)
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	go func() {
		defer close(out)
		defer stop()
		defer conn.Close()
		for sc.Scan() {
			var ch Change
			if json.Unmarshal(sc.Bytes(), &ch) != nil {
				return
			}
			select {
			case out <- ch:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// call sends one request and decodes its answer into out. When the
// connection is broken (the owner exited), it dials again once: a process
// that took the data dir over serves the same socket. Every operation is
// safe to repeat (reads; puts and deletes by key). An owner that does not
// answer within callTimeout is reported as such (NotAnsweringError), not
// waited on for ever.
func (c *Client) call(req request, out any) (found bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	resp, err := c.exchange(req)
	if err != nil {
		return false, err
	}
	if !resp.OK {
		switch resp.Code {
		case "not_found":
			return false, ErrNotFound
		case "stale":
			return false, errStale
		case "claimed":
			ce := &ClaimedError{}
			_ = json.Unmarshal(resp.Data, &ce.PID)
			return false, ce
		case "not_running":
			return false, ErrNotRunning
		}
		return false, errors.New(resp.Err)
	}
	if out != nil && len(resp.Data) > 0 {
		if err := json.Unmarshal(resp.Data, out); err != nil {
			return false, fmt.Errorf("store: bad answer from the owner: %w", err)
		}
	}
	return resp.Found, nil
}

// reclaim claims this process's sessions again from a new owner (c.mu is
// held), which also turns them back from interrupted (the new owner marked
// every session running at its open) to running. A claim refused is no
// error; an owner that stops answering is.
func (c *Client) reclaim() error {
	c.claimMu.Lock()
	ids := make([]string, 0, len(c.claims))
	for id := range c.claims {
		ids = append(ids, id)
	}
	c.claimMu.Unlock()
	for _, id := range ids {
		if _, err := c.roundTrip(request{Op: "claim", ID: id, K: 1}); err != nil {
			return err
		}
	}
	return nil
}

// roundTrip writes a request and reads its response; an error means the
// connection is unusable.
func (c *Client) roundTrip(req request) (response, error) {
	var resp response
	_ = c.conn.SetDeadline(time.Now().Add(callTimeout))
	if err := c.enc.Encode(req); err != nil {
		return resp, err
	}
	if !c.sc.Scan() {
		if err := c.sc.Err(); err != nil {
			return resp, err
		}
		return resp, errors.New("connection closed")
	}
	if err := json.Unmarshal(c.sc.Bytes(), &resp); err != nil {
		return resp, fmt.Errorf("bad answer from the owner: %w", err)
	}
	return resp, nil
}

// ListSessions is Store.ListSessions, asked of the owner.
func (c *Client) ListSessions() ([]Session, error) {
	var out []Session
	_, err := c.call(request{Op: "list_sessions"}, &out)
	return out, err
}

// ListSessionPage is Store.ListSessionPage, asked of the owner.
func (c *Client) ListSessionPage(status string, limit int) (SessionPage, error) {
	var out SessionPage
	_, err := c.call(request{Op: "list_session_page", Name: status, K: limit}, &out)
	return out, err
}

// SessionStamps is Store.SessionStamps, asked of the owner.
func (c *Client) SessionStamps() ([]SessionStamp, error) {
	var out []SessionStamp
	_, err := c.call(request{Op: "session_stamps"}, &out)
	return out, err
}

// Session is Store.Session, asked of the owner.
func (c *Client) Session(id string) (Session, error) {
	var out Session
	_, err := c.call(request{Op: "session", ID: id}, &out)
	return out, err
}

// Checkpoint is Store.Checkpoint, asked of the owner.
func (c *Client) Checkpoint(sessionID, name string) ([]byte, bool, error) {
	var out []byte
	found, err := c.call(request{Op: "checkpoint", ID: sessionID, Name: name}, &out)
	return out, found, err
}

// CheckpointNames is Store.CheckpointNames, asked of the owner.
func (c *Client) CheckpointNames(sessionID string) ([]string, error) {
	var out []string
	_, err := c.call(request{Op: "checkpoint_names", ID: sessionID}, &out)
	return out, err
}

// Events is Store.Events, asked of the owner.
func (c *Client) Events(sessionID string) ([]EventRecord, error) {
	var out []EventRecord
	_, err := c.call(request{Op: "events", ID: sessionID}, &out)
	return out, err
}

// LastSeq is Store.LastSeq, asked of the owner.
func (c *Client) LastSeq(sessionID string) (int64, error) {
	var out int64
	_, err := c.call(request{Op: "last_seq", ID: sessionID}, &out)
	return out, err
}

// DeleteSession is Store.DeleteSession, done by the owner.
func (c *Client) DeleteSession(id string) error {
	_, err := c.call(request{Op: "delete_session", ID: id}, nil)
	return err
}

// Chunk is Store.Chunk, asked of the owner.
func (c *Client) Chunk(id string) (Chunk, bool, error) {
	var out Chunk
	found, err := c.call(request{Op: "chunk", ID: id}, &out)
	return out, found, err
}

// Source is Store.Source, asked of the owner.
func (c *Client) Source(key string) ([]byte, bool, error) {
	var out []byte
	found, err := c.call(request{Op: "source", ID: key}, &out)
	return out, found, err
}
