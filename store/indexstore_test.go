package store

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/researchtui/researchtui/store/vector/vectortest"
	"github.com/researchtui/researchtui/testkit/child"
)

// storeWithChunks fills a store with n chunks over n/8 sources, each with
// an embedding for model "m".
func storeWithChunks(t testing.TB, s *Store, g *vectortest.Topics, n int) map[string][]float32 {
	t.Helper()
	vecs := map[string][]float32{}
	emb := map[string][]float32{}
	var batch []SourceBatch
	for src := 0; src*8 < n; src++ {
		key := fmt.Sprintf("doi:10.1/%04d", src)
		var chunks []Chunk
		for j := 0; j < 8 && src*8+j < n; j++ {
			text := fmt.Sprintf("chunk %d of source %d", j, src)
			v := g.Next()
			chunks = append(chunks, Chunk{Seq: j, Text: text})
			emb[HashText(text)] = v
			vecs[ChunkID(key, j)] = v
		}
		batch = append(batch, SourceBatch{Key: key, Record: []byte(`{}`), Chunks: chunks})
	}
	if err := s.PutSourceBatch(batch); err != nil {
		t.Fatal(err)
	}
	if err := s.PutEmbeddings("m", emb); err != nil {
		t.Fatal(err)
	}
	return vecs
}

// sameAsStore checks that the store's index answers like an exact index
// rebuilt from bbolt: same count, and the same top-10 for the queries.
func sameAsStore(t *testing.T, s *Store, ix *Index, qs [][]float32, minRecall float64) {
	t.Helper()
	vectortest.WaitIdle(t, ix)
	ref, err := s.BuildIndex("m")
	if err != nil {
		t.Fatal(err)
	}
	if ix.Len() != ref.Len() {
		t.Fatalf("index holds %d vectors, the store %d (%+v)", ix.Len(), ref.Len(), ix.Status())
	}
	if r := vectortest.Recall(t, ix, ref, qs, 10); r < minRecall {
		t.Fatalf("recall against the store = %.3f", r)
	}
}

// The store's index is saved at Close, opened from its file next time,
// catches up with chunks written without it, and is rebuilt when its file
// is damaged or missing.
func TestStoreIndexPersistsAndCatchesUp(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
	s.IndexOptions = IndexOptions{SwitchAt: 200, Seed: 9}
	g := vectortest.NewTopics(6, 32, 10)
	storeWithChunks(t, s, g, 1200)
	qs := g.Queries(40)
	ix, err := s.Index("m")
	if err != nil {
		t.Fatal(err)
	}
	if st := ix.Status(); !strings.Contains(st.Note, "no index file") {
		t.Fatalf("first open: %+v", st)
	}
	sameAsStore(t, s, ix, qs, 0.97)
	s.Close()
	file := s.IndexPath("m")
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("no index file after Close: %v", err)
	}

	reopen := func() (*Store, *Index) {
		t.Helper()
		s, err := Open(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		s.IndexOptions = IndexOptions{SwitchAt: 200, Seed: 9}
		ix, err := s.Index("m")
		if err != nil {
			t.Fatal(err)
		}
		return s, ix
	}
	s, ix = reopen()
	if st := ix.Status(); st.Note != "" || st.Vectors != 1200 || !st.Graph || st.FileSize == 0 {
		t.Fatalf("reopened from the file: %+v", st)
	}
	sameAsStore(t, s, ix, qs, 0.97)
	s.Close()

	// Another process (or a crash before a save) changed the store: new
	// sources, a source re-read with new text, a source dropped.
	raw, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	storeWithChunksAt(t, raw, g, "arxiv:", 300)
	if err := raw.PutChunks("doi:10.1/0003", []Chunk{{Seq: 0, Text: "rewritten"}, {Seq: 1, Text: "not embedded yet"}}); err != nil {
		t.Fatal(err)
	}
	raw.PutEmbeddings("m", map[string][]float32{HashText("rewritten"): g.Next()})
	if err := raw.PutChunks("doi:10.1/0004", nil); err != nil {
		t.Fatal(err)
	}
	raw.db.Close() // without the store's Close: nothing saved
	s, ix = reopen()
	sameAsStore(t, s, ix, qs, 0.97)
	for _, id := range []string{ChunkID("doi:10.1/0004", 0), ChunkID("doi:10.1/0003", 1), ChunkID("doi:10.1/0003", 5)} {
		if ix.Has(id) {
			t.Errorf("%s is still in the index", id)
		}
	}
	s.Close()

	// A damaged file is rebuilt from the store, and so is a missing one.
	data, _ := os.ReadFile(file)
	os.WriteFile(file, vectortest.Flip(data, len(data)-100), 0o600)
	s, ix = reopen()
	if st := ix.Status(); !strings.Contains(st.Note, "checksum") {
		t.Fatalf("damaged file: %+v", st)
	}
	sameAsStore(t, s, ix, qs, 0.97)
	s.Close()
	os.Remove(file)
	s, ix = reopen()
	sameAsStore(t, s, ix, qs, 0.97)
}

func storeWithChunksAt(t testing.TB, s *Store, g *vectortest.Topics, prefix string, n int) int {
	t.Helper()
	emb := map[string][]float32{}
	var batch []SourceBatch
	for src := 0; src*8 < n; src++ {
		key := fmt.Sprintf("%s%04d", prefix, src)
		var chunks []Chunk
		for j := 0; j < 8; j++ {
			text := fmt.Sprintf("%s chunk %d of %d", prefix, j, src)
			chunks = append(chunks, Chunk{Seq: j, Text: text})
			emb[HashText(text)] = g.Next()
		}
		batch = append(batch, SourceBatch{Key: key, Record: []byte(`{}`), Chunks: chunks})
	}
	if err := s.PutSourceBatch(batch); err != nil {
		t.Fatal(err)
	}
	if err := s.PutEmbeddings("m", emb); err != nil {
		t.Fatal(err)
	}
	return len(emb)
}

// A read-only store uses the index file but never writes it.
func TestStoreIndexReadOnly(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
	storeWithChunks(t, s, vectortest.NewTopics(1, 8, 3), 100)
	s.Close()
	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := ro.Index("m")
	if err != nil || ix.Len() != 100 {
		t.Fatalf("read-only index: %v %v", ix, err)
	}
	vectortest.WaitIdle(t, ix)
	ro.Close()
	if _, err := os.Stat(ro.IndexPath("m")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a read-only store wrote its index file: %v", err)
	}
}

const indexKillEnv = "STORE_TEST_INDEX_KILL_PATH"

// TestIndexKillChildHelper is the child half of
// TestKilledIndexWriterLeavesUsableStore: it changes the store and saves
// the index, over and over, until it is killed.
func TestIndexKillChildHelper(t *testing.T) {
	t.Parallel()
	path := child.Var(t, indexKillEnv, "TestKilledIndexWriterLeavesUsableStore")
	s, err := Open(path, Options{})
	if err != nil {
		fmt.Println("ERR", err)
		return
	}
	s.IndexOptions = IndexOptions{SwitchAt: 1, Seed: 1}
	p, err := s.index("m")
	if err != nil {
		fmt.Println("ERR", err)
		return
	}
	ix := p.ix
	ix.Wait(context.Background())
	g := vectortest.NewTopics(77, 96, 8)
	for i := 0; ; i++ {
		key := fmt.Sprintf("child:%06d", i)
		text := "child chunk " + key
		v := g.Next()
		if err := s.PutChunks(key, []Chunk{{Seq: 0, Text: text}}); err != nil {
			fmt.Println("ERR", err)
			return
		}
		if err := s.PutEmbeddings("m", map[string][]float32{HashText(text): v}); err != nil {
			fmt.Println("ERR", err)
			return
		}
		ix.Add(ChunkID(key, 0), v)
		fmt.Printf("SAVING %d\n", i)
		if err := s.saveIndex(p); err != nil {
			fmt.Println("ERR", err)
			return
		}
		fmt.Printf("SAVED %d\n", i)
	}
}

// Killing the process while it writes the index file leaves a store that
// opens and an index that is correct: the previous file caught up, or a
// rebuild, never a half-written file.
func TestKilledIndexWriterLeavesUsableStore(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	s, path := openTemp(t)
	g := vectortest.NewTopics(7, 96, 8)
	n := 12000
	if raceOn {
		n = 3000
	}
	storeWithChunks(t, s, g, n)
	s.Close()
	file := s.IndexPath("m")
	qs := g.Queries(30)
	// Even attempts start without an index file, so the kill hits the
	// first save and the next open must rebuild; odd ones kill a later
	// save, and the previous file must catch up.
	var rebuilt, caughtUp int
	for attempt := 0; attempt < 8 && (rebuilt == 0 || caughtUp == 0); attempt++ {
		fresh := attempt%2 == 0
		if fresh {
			os.Remove(file)
		}
		cmd := child.Command(context.Background(), "TestIndexKillChildHelper", []string{indexKillEnv + "=" + path})
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		watchdog := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
		lines := make(chan string)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		if !fresh {
			for saved := 0; saved < 3; {
				line, ok := <-lines
				if !ok {
					t.Fatal("child exited")
				}
				if strings.HasPrefix(line, "ERR") {
					cmd.Process.Kill()
					t.Fatal(line)
				}
				if strings.HasPrefix(line, "SAVED") {
					saved++
				}
			}
		}
		go func() {
			for range lines {
			}
		}()
		// Kill as soon as the temporary file of a save is on disk.
		r := rand.New(rand.NewPCG(uint64(attempt), 3))
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) && !tempFileExists(file) {
			time.Sleep(time.Duration(r.IntN(200)) * time.Microsecond)
		}
		cmd.Process.Kill() // SIGKILL: no Close, no deferred cleanup
		cmd.Wait()
		watchdog.Stop()
		leftover := tempFiles(file)
		midWrite := len(leftover) > 0
		_, statErr := os.Stat(file)
		hadFile := statErr == nil

		s2, err := Open(path, Options{})
		if err != nil {
			t.Fatalf("store does not open after the kill: %v", err)
		}
		s2.IndexOptions = IndexOptions{SwitchAt: 1, Seed: 1}
		ix, err := s2.Index("m")
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range leftover {
			if _, err := os.Stat(p); err == nil {
				t.Fatalf("the killed save's temporary file %s was left behind", p)
			}
		}
		st := ix.Status()
		t.Logf("attempt %d: killed mid-write %v, a complete file before %v; index %d vectors, note %q", attempt, midWrite, hadFile, st.Vectors, st.Note)
		sameAsStore(t, s2, ix, qs, 0.95)
		s2.Close()
		switch {
		case !midWrite:
		case !hadFile && strings.Contains(st.Note, "no index file"):
			rebuilt++
		case hadFile && st.Note == "":
			caughtUp++
		}
	}
	if rebuilt == 0 || caughtUp == 0 {
		t.Fatalf("kills mid-write: %d followed by a rebuild, %d by a catch-up; want both", rebuilt, caughtUp)
	}
}

func tempFiles(file string) []string {
	m, _ := filepath.Glob(filepath.Join(filepath.Dir(file), "."+filepath.Base(file)+".tmp-*"))
	return m
}

func tempFileExists(file string) bool { return len(tempFiles(file)) > 0 }
