package store

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// ProtocolVersion is the version of the owner/client protocol (README.md).
// Bump it when a request or response changes meaning; a mismatch is refused
// with a message that names both versions.
const ProtocolVersion = 2

const protoName = "researchtui-store"

// maxLine bounds one protocol message (a report or a checkpoint is well
// under this; a bigger one is an error, not an allocation without end).
const maxLine = 64 << 20

// SocketPath is where the owner of the data dir that holds dbPath listens.
// It lives in its own directory so that directory's 0700 mode protects it
// from the moment it exists.
func SocketPath(dbPath string) string {
	return filepath.Join(filepath.Dir(dbPath), "run", "store.sock")
}

// hello is the first message each way.
type hello struct {
	Proto   string `json:"proto"`
	Version int    `json:"version"`
	Schema  int    `json:"schema"`
	PID     int    `json:"pid,omitempty"`
}

type request struct {
	Op   string    `json:"op"`
	ID   string    `json:"id,omitempty"`
	Name string    `json:"name,omitempty"`
	Vec  []float32 `json:"vec,omitempty"`
	K    int       `json:"k,omitempty"`
	// Arg carries a write's payload (a session, events, chunks, ...).
	Arg json.RawMessage `json:"arg,omitempty"`
}

type response struct {
	OK    bool            `json:"ok"`
	Found bool            `json:"found,omitempty"`
	Data  json.RawMessage `json:"data,omitempty"`
	Err   string          `json:"err,omitempty"`
	Code  string          `json:"code,omitempty"`
}

// Share serves s to other researchtui processes on the socket at path
// until the returned stop is called or the store is closed. The caller
// holds the database lock, which proves no other owner is alive, so any
// socket file already at path is stale and is removed.
func (s *Store) Share(path string) (stop func(), err error) {
	if s.readOnly {
		return nil, errors.New("store: a read-only store cannot be shared")
	}
	s.stopSharing() // sharing again (another path): one socket at a time
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("store: socket directory: %w", err)
	}
	if err := os.Chmod(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("store: socket directory: %w", err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("store: removing a stale socket: %w", err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("store: cannot share the data dir: %w", err)
	}
	_ = os.Chmod(path, 0o600)
	srv := &shareServer{st: s, ln: ln, conns: map[net.Conn]bool{}, slots: make(chan struct{}, maxConns), done: make(chan struct{})}
	srv.wg.Add(1)
	go srv.accept()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			ln.Close()
			srv.closeAll()
			srv.wg.Wait()
			_ = os.Remove(path)
		})
	}
	s.shareMu.Lock()
	s.unshare = stop
	s.shareMu.Unlock()
	return stop, nil
}

// stopSharing stops serving clients, if sharing.
func (s *Store) stopSharing() {
	s.shareMu.Lock()
	stop := s.unshare
	s.unshare = nil
	s.shareMu.Unlock()
	if stop != nil {
		stop()
	}
}

type shareServer struct {
	st *Store
	ln net.Listener
	wg sync.WaitGroup

	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed bool
	nextID uint64 // names connections in claims

	slots chan struct{} // one per connection served (maxConns)
	done  chan struct{} // closed by closeAll: the accept loop stops waiting
}

func (srv *shareServer) closeAll() {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if !srv.closed {
		close(srv.done)
	}
	srv.closed = true
	for c := range srv.conns {
		c.Close()
	}
}

// serve answers one connection: the hello, then requests in turn, or the
// change feed when the first request is a watch.
func (srv *shareServer) serve(c net.Conn, connID uint64) {
	in := &helloCap{r: c, left: maxHello}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 4<<10), maxLine)
	enc := json.NewEncoder(c)
	_ = c.SetReadDeadline(time.Now().Add(helloWait))
	if !sc.Scan() {
		return
	}
	in.left = -1 // a hello was read: from now on a message may be large
	_ = c.SetReadDeadline(time.Time{})
	var h hello
	mine := hello{Proto: protoName, Version: ProtocolVersion, Schema: SchemaVersion(), PID: os.Getpid()}
	if json.Unmarshal(sc.Bytes(), &h) != nil || h.Proto != protoName {
		return // not one of ours: say nothing
	}
	if enc.Encode(mine) != nil || h.Version != ProtocolVersion || h.Schema != SchemaVersion() {
		return // the client reads our hello and explains the mismatch
	}
	for sc.Scan() {
		var req request
		var resp response
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			resp = response{Err: "bad request: " + err.Error()}
		} else if req.Op == "watch" {
			srv.streamChanges(c, enc)
			return
		} else {
			resp = srv.do(req, claim{conn: connID, pid: h.PID})
		}
		if enc.Encode(resp) != nil {
			return
		}
	}
}
