package store

import (
	"errors"
	"io"
	"net"
	"time"
)

// The owner serves every researchtui of the user, and anything else that
// can open the socket: the limits below keep a runaway or hostile client
// from taking the owner's memory or its file descriptors.
const (
	// maxConns bounds the connections served at once. A researchtui holds
	// two (requests and its watch); the rest wait in the listen backlog.
	maxConns = 256
	// maxHello bounds what is read before a hello: a hello is a hundred
	// bytes, so a client that sends more is not one of ours.
	maxHello = 16 << 10
	// helloWait is how long a connection may take to say hello.
	helloWait = 10 * time.Second
	// acceptBackoffMax caps the pause after a failed accept.
	acceptBackoffMax = time.Second
)

// accept serves connections until the listener is closed. A failed accept
// (out of file descriptors: EMFILE, ENFILE; a connection aborted before it
// was taken: ECONNABORTED) is waited out and retried: an owner that stopped
// accepting would leave every other researchtui on this data dir unable to
// reach it until it restarts.
func (srv *shareServer) accept() {
	defer srv.wg.Done()
	var backoff time.Duration
	for {
		select {
		case srv.slots <- struct{}{}:
		case <-srv.done:
			return
		}
		c, err := srv.ln.Accept()
		if err != nil {
			<-srv.slots
			if errors.Is(err, net.ErrClosed) {
				return
			}
			backoff = min(max(2*backoff, 5*time.Millisecond), acceptBackoffMax)
			select {
			case <-time.After(backoff):
				continue
			case <-srv.done:
				return
			}
		}
		backoff = 0
		if !srv.track(c) {
			<-srv.slots
			c.Close()
			return
		}
	}
}

// track serves c on its own goroutine, or reports false when the server
// is closing.
func (srv *shareServer) track(c net.Conn) bool {
	srv.mu.Lock()
	if srv.closed {
		srv.mu.Unlock()
		return false
	}
	srv.conns[c] = true
	srv.nextID++
	id := srv.nextID
	srv.wg.Add(1)
	srv.mu.Unlock()
	go func() {
		defer srv.wg.Done()
		defer func() { <-srv.slots }()
		srv.serve(c, id)
		srv.mu.Lock()
		delete(srv.conns, c)
		closed := srv.closed
		srv.mu.Unlock()
		c.Close()
		if !closed { // the owner closing keeps its clients' sessions as they are
			srv.st.releaseConn(id)
		}
	}()
	return true
}

// helloCap reads at most left bytes while left >= 0 (before the hello);
// a negative left reads freely.
type helloCap struct {
	r    io.Reader
	left int
}

var errHelloTooLong = errors.New("store: more than a hello before the hello")

func (h *helloCap) Read(p []byte) (int, error) {
	if h.left < 0 {
		return h.r.Read(p)
	}
	if h.left == 0 {
		return 0, errHelloTooLong
	}
	if len(p) > h.left {
		p = p[:h.left]
	}
	n, err := h.r.Read(p)
	h.left -= n
	return n, err
}
