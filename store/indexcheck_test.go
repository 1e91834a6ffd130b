package store

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/researchtui/researchtui/store/vector"
	"github.com/researchtui/researchtui/store/vector/vectortest"
	"github.com/researchtui/researchtui/testkit/child"
)

// savedStore makes a store of n chunks whose index file is saved and
// fresh, and returns its path, the file and queries.
func savedStore(t *testing.T, opt IndexOptions, n int) (string, string, [][]float32) {
	t.Helper()
	s, path := openTemp(t)
	s.IndexOptions = opt
	g := vectortest.NewTopics(11, 32, 10)
	storeWithChunks(t, s, g, n)
	ix, err := s.Index("m")
	if err != nil {
		t.Fatal(err)
	}
	vectortest.WaitIdle(t, ix)
	s.Close()
	file := s.IndexPath("m")
	if err := checkedFile(file); err != nil {
		t.Fatalf("saved file: %v", err)
	}
	return path, file, g.Queries(30)
}

// checkedFile opens an index file and verifies all of it.
func checkedFile(file string) error {
	ix, _, err := vector.Open(file, "m", IndexOptions{})
	if err != nil {
		return err
	}
	defer ix.Close()
	return ix.CheckFile()
}

// damageVectors flips a byte in the middle of the file's vectors section:
// section 0 of the table at byte 1024 of the header, {offset u64, length
// u64, ...} (vector/file.go has the format).
func damageVectors(t *testing.T, file string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := vector.ReadHeader(file); err != nil {
		t.Fatal(err)
	}
	off, n := binary.LittleEndian.Uint64(data[1024:]), binary.LittleEndian.Uint64(data[1032:])
	if n == 0 || off+n > uint64(len(data)) {
		t.Fatalf("vectors section at %d, %d bytes, in a file of %d", off, n, len(data))
	}
	if err := os.WriteFile(file, vectortest.Flip(data, int(off+n/2)), 0o600); err != nil {
		t.Fatal(err)
	}
}

func reopenStore(t *testing.T, path string, opt IndexOptions) *Store {
	t.Helper()
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	s.IndexOptions = opt
	return s
}

// A file whose vectors are damaged opens (only its small sections are
// checked at open) and serves; the check that follows finds the damage, and
// from then on the index answers exactly like the store's embeddings, and
// the file is rewritten sound.
func TestDamagedVectorsFoundAfterOpen(t *testing.T) {
	t.Parallel()
	opt := IndexOptions{SwitchAt: -1}
	path, file, qs := savedStore(t, opt, 1200)
	damageVectors(t, file)
	if _, _, err := vector.Open(file, "m", IndexOptions{}); err != nil {
		t.Fatalf("open does not read the vectors, but failed: %v", err)
	}

	// The first search waits for the check: it never answers from damaged
	// vectors, and by the time it answers the vectors came from the store.
	s := reopenStore(t, path, opt)
	ix, err := s.Index("m")
	if err != nil {
		t.Fatal(err)
	}
	if hits, err := ix.Search(qs[0], 10); err != nil || len(hits) != 10 {
		t.Fatalf("the first search: %v, %d hits", err, len(hits))
	}
	vectortest.WaitIdle(t, ix)
	if st := ix.Status(); !strings.Contains(st.Note, "checksum") || st.Vectors != 1200 {
		t.Fatalf("after the check: %+v", st)
	}
	ref, err := s.BuildIndex("m")
	if err != nil {
		t.Fatal(err)
	}
	for i, q := range qs {
		got, err := ix.Search(q, 10)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := ref.Search(q, 10)
		vectortest.SameHits(t, fmt.Sprintf("query %d", i), got, want)
	}
	if same, _ := s.Index("m"); same != ix {
		t.Fatal("the store handed out another index")
	}
	if err := checkedFile(file); err != nil {
		t.Fatalf("the file was not rewritten: %v", err)
	}
	s.Close()
	s = reopenStore(t, path, opt)
	ix, err = s.Index("m")
	if err != nil {
		t.Fatal(err)
	}
	vectortest.WaitIdle(t, ix)
	if st := ix.Status(); st.Note != "" || st.Vectors != 1200 {
		t.Fatalf("reopened after the rewrite: %+v", st)
	}
}

// The same with a graph: searches that arrive while the vectors are read
// back wait for them, and the graph is rebuilt and saved.
func TestDamagedVectorsWithGraph(t *testing.T) {
	t.Parallel()
	opt := IndexOptions{SwitchAt: 200, Seed: 3}
	path, file, qs := savedStore(t, opt, 1600)
	damageVectors(t, file)
	s := reopenStore(t, path, opt)
	ix, err := s.Index("m")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, q := range qs {
				if _, err := ix.Search(q, 10); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	sameAsStore(t, s, ix, qs, 0.97)
	if st := ix.Status(); !strings.Contains(st.Note, "checksum") || !st.Graph || st.Linked != st.Nodes {
		t.Fatalf("after the check: %+v", st)
	}
	if err := checkedFile(file); err != nil {
		t.Fatalf("the file was not rewritten: %v", err)
	}
}

// Closing the store while the check reads the file, or while a damaged
// file is being replaced, is safe: searches in flight end (with results or
// vector.ErrClosed), nothing touches the released mapping, and the next open
// is correct.
//
// Not parallel: vector.SlowCheck sets the package's check pace, which a
// parallel test's check would read (the race detector caught it).
func TestCloseDuringFileCheck(t *testing.T) {
	for _, damaged := range []bool{false, true} {
		t.Run(fmt.Sprintf("damaged=%v", damaged), func(t *testing.T) {
			opt := IndexOptions{SwitchAt: 200, Seed: 5}
			path, file, qs := savedStore(t, opt, 1600)
			if damaged {
				damageVectors(t, file)
			}
			started := make(chan struct{})
			var once sync.Once
			t.Cleanup(vector.SlowCheck(4096, func() {
				once.Do(func() { close(started) })
				time.Sleep(200 * time.Microsecond)
			}))
			s := reopenStore(t, path, opt)
			ix, err := s.Index("m")
			if err != nil {
				t.Fatal(err)
			}
			<-started
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for w := 0; w < 2; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; ; i++ {
						select {
						case <-stop:
							return
						default:
						}
						if _, err := ix.Search(qs[i%len(qs)], 10); err != nil {
							if !errors.Is(err, vector.ErrClosed) {
								t.Error(err)
							}
							return
						}
					}
				}()
			}
			time.Sleep(5 * time.Millisecond)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			close(stop)
			wg.Wait()
			if _, err := ix.Search(qs[0], 10); !errors.Is(err, vector.ErrClosed) {
				t.Fatalf("search after Close: %v", err)
			}
			vector.SlowCheck(4096, nil) // the next open checks unhindered (the cleanup restores both)
			s = reopenStore(t, path, opt)
			ix, err = s.Index("m")
			if err != nil {
				t.Fatal(err)
			}
			sameAsStore(t, s, ix, qs, 0.97)
			if err := checkedFile(file); err != nil && !damaged {
				t.Fatalf("a sound file was damaged: %v", err)
			}
		})
	}
}

const indexCheckKillEnv = "RESEARCHTUI_INDEX_CHECK_KILL"

// TestIndexCheckKillChild is the child of TestKilledDuringFileCheck: it
// opens the index, serves, and is killed while its check crawls.
func TestIndexCheckKillChild(t *testing.T) {
	t.Parallel()
	path := child.Var(t, indexCheckKillEnv, "TestKilledDuringFileCheck")
	vector.SlowCheck(4096, func() { time.Sleep(10 * time.Millisecond) })
	s, err := Open(path, Options{})
	if err != nil {
		fmt.Println("ERR", err)
		return
	}
	s.IndexOptions = IndexOptions{SwitchAt: 200, Seed: 5}
	ix, err := s.Index("m")
	if err != nil {
		fmt.Println("ERR", err)
		return
	}
	q := make([]float32, 32)
	q[0] = 1
	if _, err := ix.Search(q, 10); err != nil {
		fmt.Println("ERR", err)
	}
	fmt.Println("SERVING")
	time.Sleep(time.Minute)
}

// Killing the process while it checks its index file (sound or damaged)
// leaves a store whose next open is correct.
func TestKilledDuringFileCheck(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	for _, damaged := range []bool{false, true} {
		opt := IndexOptions{SwitchAt: 200, Seed: 5}
		path, file, qs := savedStore(t, opt, 1600)
		if damaged {
			damageVectors(t, file)
		}
		cmd := child.Command(context.Background(), "TestIndexCheckKillChild", []string{indexCheckKillEnv + "=" + path})
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		watchdog := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() })
		sc := bufio.NewScanner(out)
		for sc.Scan() && !strings.HasPrefix(sc.Text(), "SERVING") {
			if strings.HasPrefix(sc.Text(), "ERR") {
				t.Fatal(sc.Text())
			}
		}
		cmd.Process.Kill()
		cmd.Wait()
		watchdog.Stop()
		s := reopenStore(t, path, opt)
		ix, err := s.Index("m")
		if err != nil {
			t.Fatal(err)
		}
		sameAsStore(t, s, ix, qs, 0.97)
		if damaged && !strings.Contains(ix.Status().Note, "checksum") {
			t.Fatalf("damaged file after the kill: %+v", ix.Status())
		}
		s.Close()
		if err := checkedFile(file); err != nil {
			t.Fatalf("damaged=%v: file after the next open: %v", damaged, err)
		}
	}
}
