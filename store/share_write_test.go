package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// A client writes everything a run writes, through the owner: what it
// wrote reads back the same on the owner's side.
func TestClientWritesThroughTheOwner(t *testing.T) {
	t.Parallel()
	st, sock, _ := sharedStore(t)
	c := dialShared(t, sock)

	sess := &Session{Question: "q?", Status: StatusRunning, CreatedAt: time.Now()}
	if err := c.CreateSession(sess); err != nil || sess.ID == "" {
		t.Fatalf("create: %v %q", err, sess.ID)
	}
	got, err := c.CheckpointAndUpdate(sess.ID, "plan", []byte(`{"p":1}`), func(s *Session) error { s.Stage = "plan"; s.Usage.PromptTokens = 7; return nil })
	if err != nil || got.Stage != "plan" {
		t.Fatalf("checkpoint and update: %+v %v", got, err)
	}
	if err := c.AppendEvents(sess.ID, []EventRecord{{Seq: 1, Data: []byte(`{"a":1}`)}, {Seq: 2, Data: []byte(`{"b":2}`)}}); err != nil {
		t.Fatal(err)
	}
	if err := c.PutSource("s1", []byte(`{"title":"T"}`)); err != nil {
		t.Fatal(err)
	}
	if err := c.PutDocument("s1", []byte("full text")); err != nil {
		t.Fatal(err)
	}
	if err := c.PutChunks("s1", []Chunk{{Seq: 0, Text: "alpha"}, {Seq: 1, Text: "beta", References: true}}); err != nil {
		t.Fatal(err)
	}
	if err := c.PutEmbeddings("m", map[string][]float32{HashText("alpha"): {1, 0}, HashText("beta"): {0, 1}}); err != nil {
		t.Fatal(err)
	}

	own, err := st.Session(sess.ID)
	if err != nil || own.Stage != "plan" || own.Usage.PromptTokens != 7 || own.Status != StatusRunning {
		t.Errorf("the owner's copy of the session: %+v %v", own, err)
	}
	if cp, ok, _ := st.Checkpoint(sess.ID, "plan"); !ok || string(cp) != `{"p":1}` {
		t.Errorf("checkpoint %q %v", cp, ok)
	}
	if evs, _ := st.Events(sess.ID); len(evs) != 2 || string(evs[1].Data) != `{"b":2}` {
		t.Errorf("events %+v", evs)
	}
	if doc, ok, _ := c.Document("s1"); !ok || string(doc) != "full text" {
		t.Errorf("document %q", doc)
	}
	chunks, err := c.Chunks("s1")
	if err != nil || len(chunks) != 2 || !chunks[1].References || chunks[0].Hash != HashText("alpha") {
		t.Errorf("chunks %+v %v", chunks, err)
	}
	var all []string
	if err := c.AllChunks(func(ch Chunk) error { all = append(all, ch.Text); return nil }); err != nil || len(all) != 2 {
		t.Errorf("all chunks %v %v", all, err)
	}
	missing, err := c.MissingEmbeddings("m", []string{HashText("alpha"), HashText("gamma")})
	if err != nil || len(missing) != 1 || missing[0] != HashText("gamma") {
		t.Errorf("missing %v %v", missing, err)
	}
	if v, ok, _ := c.Embedding("m", HashText("beta")); !ok || len(v) != 2 || v[1] != 1 {
		t.Errorf("embedding %v %v", v, ok)
	}

	ix, err := c.Vectors("m")
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Add(chunks[0].ID, []float32{1, 0}); err != nil {
		t.Fatal(err)
	}
	if err := ix.Add(chunks[1].ID, []float32{0, 1}); err != nil {
		t.Fatal(err)
	}
	hits, err := ix.Search([]float32{0.1, 0.9}, 1)
	if err != nil || len(hits) != 1 || hits[0].ID != chunks[1].ID || ix.Len() != 2 {
		t.Errorf("the owner's index through the client: %+v %v len %d", hits, err, ix.Len())
	}
	if s, ok := c.IndexStatus("m"); !ok || s.Vectors != 2 {
		t.Errorf("index status %+v %v", s, ok)
	}
	if _, err := c.UpdateSession("01nosuch", func(*Session) error { return nil }); !errors.Is(err, ErrNotFound) {
		t.Errorf("updating an unknown session: %v", err)
	}
}

// Two processes updating one session at once lose none of each other's
// changes: the client's read-modify-write is retried when it lost a race.
func TestConcurrentUpdatesAcrossTheSocketLoseNothing(t *testing.T) {
	t.Parallel()
	st, sock, _ := sharedStore(t)
	c := dialShared(t, sock)
	sess := &Session{Question: "q", Status: StatusRunning}
	if err := st.CreateSession(sess); err != nil {
		t.Fatal(err)
	}
	const n = 40
	var wg sync.WaitGroup
	for _, db := range []DB{st, c} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n {
				if _, err := db.UpdateSession(sess.ID, func(s *Session) error { s.Steps++; return nil }); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if got, _ := st.Session(sess.ID); got.Steps != 2*n {
		t.Errorf("steps %d, want %d: an update was lost", got.Steps, 2*n)
	}
}

// The change feed: a watcher on the owner sees what a client appends and
// updates; a watcher through a client sees what the owner writes.
func TestWatchSeesWritesFromEveryProcess(t *testing.T) {
	t.Parallel()
	st, sock, _ := sharedStore(t)
	c := dialShared(t, sock)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	local, _ := st.Watch(ctx)
	remote, err := c.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // the owner registers the remote watcher

	sess := &Session{Question: "q", Status: StatusRunning}
	if err := c.CreateSession(sess); err != nil {
		t.Fatal(err)
	}
	if err := c.AppendEvents(sess.ID, []EventRecord{{Seq: 1, Data: []byte(`{"type":"run_started"}`)}}); err != nil {
		t.Fatal(err)
	}
	if err := st.AppendEvents(sess.ID, []EventRecord{{Seq: 2, Data: []byte(`{"type":"stage_started"}`)}}); err != nil {
		t.Fatal(err)
	}
	for name, ch := range map[string]<-chan Change{"owner": local, "client": remote} {
		var seqs []int64
		updated := false
		for len(seqs) < 2 {
			select {
			case ch, ok := <-ch:
				if !ok {
					t.Fatalf("%s: feed closed", name)
				}
				if ch.Session != sess.ID {
					continue
				}
				updated = updated || ch.Updated
				for _, e := range ch.Events {
					seqs = append(seqs, e.Seq)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: saw only %v", name, seqs)
			}
		}
		if !updated || seqs[0] != 1 || seqs[1] != 2 {
			t.Errorf("%s watcher: created %v, events %v", name, updated, seqs)
		}
	}
	cancel()
	for range remote { // closes once the watch ends
	}
}

// Claims: a session runs in one process at a time; controls reach the one
// that runs it; a client that goes away mid-run leaves its session
// interrupted (resumable), not running forever.
func TestClaimsControlsAndADepartedRunner(t *testing.T) {
	t.Parallel()
	st, sock, _ := sharedStore(t)
	runner, err := Dial(sock)
	if err != nil {
		t.Fatal(err)
	}
	sess := &Session{Question: "q", Status: StatusRunning}
	if err := runner.CreateSession(sess); err != nil {
		t.Fatal(err)
	}
	if err := st.SendControl(sess.ID, Control{Kind: ControlProbe}); !errors.Is(err, ErrNotRunning) {
		t.Errorf("probing an unclaimed session: %v", err)
	}
	release, err := runner.Claim(sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Claim(sess.ID); !errors.Is(err, ErrClaimed) {
		t.Errorf("a second claim: %v", err)
	}
	other := dialShared(t, sock)
	var ce *ClaimedError
	if _, err := other.Claim(sess.ID); !errors.As(err, &ce) || ce.PID != ownPID || err.Error() != fmt.Sprintf("the session is running in another researchtui (pid %d)", ownPID) {
		t.Errorf("a second claim through the socket: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	feed, err := runner.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if err := st.SendControl(sess.ID, Control{Kind: "decide", Decision: []byte(`{"approve":true}`)}); err != nil {
		t.Fatal(err)
	}
	select {
	case ch := <-feed:
		if ch.Control == nil || ch.Control.Kind != "decide" || string(ch.Control.Decision) != `{"approve":true}` {
			t.Errorf("the runner got %+v", ch)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the control never reached the runner")
	}
	release()
	if _, err := st.Claim(sess.ID); err != nil {
		t.Errorf("claim after release: %v", err)
	}
	st.feed.drop(sess.ID, claim{pid: ownPID})

	// Claimed again, and the runner's process goes away.
	if _, err := runner.Claim(sess.ID); err != nil {
		t.Fatal(err)
	}
	cancel()
	runner.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, _ := st.Session(sess.ID)
		if got.Status == StatusInterrupted {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a departed runner's session is %q, want interrupted", got.Status)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Takeover: when the owner exits, a Conn that was its client opens the data
// dir itself and serves it; the session it runs stays running (it was
// claimed before the open marked the dead owner's sessions interrupted).
func TestConnTakesOverWhenTheOwnerExits(t *testing.T) {
	t.Parallel()
	dir := shortDir(t)
	db := filepath.Join(dir, "researchtui.db")
	owner, err := Connect(db, Options{LockTimeout: 100 * time.Millisecond}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	client, err := Connect(db, Options{LockTimeout: 100 * time.Millisecond}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if client.Local() != nil || owner.Local() == nil {
		t.Fatal("the second Conn should be a client")
	}
	mine := &Session{Question: "mine", Status: StatusRunning}
	theirs := &Session{Question: "theirs", Status: StatusRunning}
	if err := client.CreateSession(mine); err != nil {
		t.Fatal(err)
	}
	if err := owner.CreateSession(theirs); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Claim(mine.ID); err != nil {
		t.Fatal(err)
	}
	ix, err := client.Vectors("m")
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Add("a#0", []float32{1, 0}); err != nil {
		t.Fatal(err)
	}
	owner.Close()

	got, err := client.Session(mine.ID) // the owner is gone: this call takes over
	if err != nil || got.Status != StatusRunning {
		t.Fatalf("after the takeover, this process's session: %q %v", got.Status, err)
	}
	if client.Local() == nil {
		t.Fatal("the client did not take the data dir over")
	}
	if got, _ := client.Session(theirs.ID); got.Status != StatusInterrupted {
		t.Errorf("the old owner's running session is %q, want interrupted", got.Status)
	}
	if err := ix.Add("b#0", []float32{0, 1}); err != nil { // the same index handle, now local
		t.Fatal(err)
	}
	if hits, err := ix.Search([]float32{0, 1}, 1); err != nil || len(hits) != 1 || hits[0].ID != "b#0" {
		t.Errorf("the index after the takeover: %+v %v", hits, err)
	}
	// and a later process is its client
	third, err := Connect(db, Options{LockTimeout: 100 * time.Millisecond}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	if third.Local() != nil {
		t.Error("a third process should reach the new owner")
	}
	if _, err := third.Claim(mine.ID); !errors.Is(err, ErrClaimed) {
		t.Errorf("the new owner lost the claim: %v", err)
	}
}
