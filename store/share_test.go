package store

import (
	"bufio"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// shortDir is a temp dir with a path short enough for a unix socket (108
// bytes), which t.TempDir's long names can exceed.
func shortDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "rts")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func sharedStore(t *testing.T) (*Store, string, func()) {
	t.Helper()
	dir := shortDir(t)
	st, err := Open(filepath.Join(dir, "researchtui.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	sock := SocketPath(st.Path())
	stop, err := st.Share(sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return st, sock, stop
}

// dialShared is a client of the store shared at sock, closed when the test
// ends.
func dialShared(t *testing.T, sock string) *Client {
	t.Helper()
	c, err := Dial(sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestClientReadsWhatTheOwnerHas(t *testing.T) {
	t.Parallel()
	st, sock, _ := sharedStore(t)
	sess := &Session{Question: "q?", Title: "Q", Status: StatusCompleted, CreatedAt: time.Now(), Model: "m"}
	if err := st.CreateSession(sess); err != nil {
		t.Fatal(err)
	}
	if _, err := st.UpdateSession(sess.ID, func(s *Session) error { s.Report = "# R\n\nbody [1]"; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := st.PutCheckpoint(sess.ID, "report", []byte(`{"x":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := st.AppendEvents(sess.ID, []EventRecord{{Seq: 1, Data: []byte(`{"type":"run_started"}`)}, {Seq: 2, Data: []byte(`{}`)}}); err != nil {
		t.Fatal(err)
	}

	c := dialShared(t, sock)
	if c.Owner() != os.Getpid() {
		t.Errorf("owner pid %d", c.Owner())
	}
	all, err := c.ListSessions()
	if err != nil || len(all) != 1 || all[0].ID != sess.ID || all[0].Title != "Q" {
		t.Fatalf("list: %+v %v", all, err)
	}
	got, err := c.Session(sess.ID)
	if err != nil || got.Report != "# R\n\nbody [1]" || got.Status != StatusCompleted || !got.CreatedAt.Equal(sess.CreatedAt) {
		t.Fatalf("session: %+v %v", got, err)
	}
	if _, err := c.Session("01nosuch"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown session: %v, want ErrNotFound", err)
	}
	raw, ok, err := c.Checkpoint(sess.ID, "report")
	if err != nil || !ok || string(raw) != `{"x":1}` {
		t.Errorf("checkpoint: %q %v %v", raw, ok, err)
	}
	if _, ok, err := c.Checkpoint(sess.ID, "nothing"); ok || err != nil {
		t.Errorf("missing checkpoint: %v %v", ok, err)
	}
	if names, err := c.CheckpointNames(sess.ID); err != nil || len(names) != 1 {
		t.Errorf("names %v %v", names, err)
	}
	evs, err := c.Events(sess.ID)
	if err != nil || len(evs) != 2 || evs[1].Seq != 2 || string(evs[0].Data) != `{"type":"run_started"}` {
		t.Errorf("events %+v %v", evs, err)
	}
	if n, err := c.LastSeq(sess.ID); err != nil || n != 2 {
		t.Errorf("last seq %d %v", n, err)
	}
	if err := c.DeleteSession(sess.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Session(sess.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("the owner still has the deleted session: %v", err)
	}
}

func TestSocketIsPrivate(t *testing.T) {
	t.Parallel()
	_, sock, _ := sharedStore(t)
	fi, err := os.Stat(sock)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v %v", fi.Mode(), err)
	}
	di, err := os.Stat(filepath.Dir(sock))
	if err != nil || di.Mode().Perm() != 0o700 {
		t.Errorf("socket dir mode %v %v", di.Mode(), err)
	}
}

// A crashed owner leaves its socket behind; the next owner (it holds the
// database lock, so nobody else is alive) replaces it, and a client dialling
// the stale one is told at once rather than hanging.
func TestStaleSocketNeverWedges(t *testing.T) {
	t.Parallel()
	dir := shortDir(t)
	sock := SocketPath(filepath.Join(dir, "researchtui.db"))
	if err := os.MkdirAll(filepath.Dir(sock), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close() // the socket file stays, nobody listens: a dead owner's
	if _, err := os.Stat(sock); err != nil {
		t.Fatal("the stale socket file should still exist")
	}
	if _, err := Dial(sock); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("dialling a stale socket: %v, want ErrUnreachable", err)
	}
	st, err := Open(filepath.Join(dir, "researchtui.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	stop, err := st.Share(sock)
	if err != nil {
		t.Fatalf("sharing over a stale socket: %v", err)
	}
	defer stop()
	c, err := Dial(sock)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}

// When the owner stops, a client's next call says so (and how to go on)
// instead of hanging or returning nothing.
func TestOwnerGoneIsReported(t *testing.T) {
	t.Parallel()
	_, sock, stop := sharedStore(t)
	c := dialShared(t, sock)
	stop()
	_, err := c.ListSessions()
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "went away") {
		t.Fatalf("after the owner stopped: %v", err)
	}
	if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the owner left its socket behind: %v", err)
	}
}

// Another build on the other end gets a message that names both versions.
func TestProtocolMismatchIsExplained(t *testing.T) {
	t.Parallel()
	sock := filepath.Join(shortDir(t), "s.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		bufio.NewReader(c).ReadString('\n')
		json.NewEncoder(c).Encode(hello{Proto: protoName, Version: ProtocolVersion + 1, Schema: SchemaVersion(), PID: 4242})
	}()
	_, err = Dial(sock)
	if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "pid 4242") || !strings.Contains(err.Error(), "same researchtui build") {
		t.Fatalf("mismatch: %v", err)
	}
}

// search_knowledge beside an owner: the client embeds the query, the
// owner's index answers, chunks and sources come back by key.
func TestClientSearchesTheOwnersIndex(t *testing.T) {
	t.Parallel()
	st, sock, _ := sharedStore(t)
	chunks := []Chunk{{Seq: 0, Text: "alpha alpha"}, {Seq: 1, Text: "beta beta"}, {Seq: 2, Text: "gamma gamma"}}
	if err := st.PutChunks("src1", chunks); err != nil {
		t.Fatal(err)
	}
	if err := st.PutSource("src1", []byte(`{"title":"T"}`)); err != nil {
		t.Fatal(err)
	}
	vecs := map[string][]float32{
		HashText("alpha alpha"): {1, 0, 0, 0},
		HashText("beta beta"):   {0, 1, 0, 0},
		HashText("gamma gamma"): {0, 0, 1, 0},
	}
	if err := st.PutEmbeddings("m", vecs); err != nil {
		t.Fatal(err)
	}
	c := dialShared(t, sock)
	ownIx, err := st.Index("m")
	if err != nil {
		t.Fatal(err)
	}
	local, err := ownIx.Search([]float32{0, 0.9, 0.1, 0}, 2)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := c.Vectors("m")
	if err != nil {
		t.Fatal(err)
	}
	remote, err := ix.Search([]float32{0, 0.9, 0.1, 0}, 2)
	if err != nil || len(remote) != 2 || remote[0] != local[0] || remote[1] != local[1] {
		t.Fatalf("through the owner %+v %v, locally %+v", remote, err, local)
	}
	ch, ok, err := c.Chunk(remote[0].ID)
	if err != nil || !ok || ch.Text != "beta beta" {
		t.Errorf("chunk %+v %v %v", ch, ok, err)
	}
	if raw, ok, err := c.Source("src1"); err != nil || !ok || string(raw) != `{"title":"T"}` {
		t.Errorf("source %q %v %v", raw, ok, err)
	}
	if _, ok, err := c.Chunk("nope#0001"); ok || err != nil {
		t.Errorf("missing chunk: %v %v", ok, err)
	}
	if other, err := c.Vectors("other-model"); err != nil || other.Len() != 0 {
		t.Errorf("a model with nothing embedded: %v", err)
	}
	if _, err := ix.Search([]float32{1, 0, 0, 0}, maxSearchK+1); err == nil {
		t.Error("a search for more than maxSearchK passages was answered")
	}
}

// When the owner exits and another process takes the data dir over (it
// serves the same socket), a client's next call goes to the new owner.
func TestClientFollowsANewOwner(t *testing.T) {
	t.Parallel()
	st, sock, stop := sharedStore(t)
	c := dialShared(t, sock)
	if _, err := c.ListSessions(); err != nil {
		t.Fatal(err)
	}
	stop()                                    // the owner goes; its connections break
	if _, err := st.Share(sock); err != nil { // the next owner serves the same socket
		t.Fatal(err)
	}
	if _, err := c.ListSessions(); err != nil {
		t.Fatalf("after a takeover: %v", err)
	}
}
