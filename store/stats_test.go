package store

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/researchtui/researchtui/store/vector/vectortest"
	"github.com/researchtui/researchtui/testkit/child"
)

func TestStatsCounts(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	g := vectortest.NewTopics(1, 16, 4)
	storeWithChunks(t, s, g, 80) // 10 sources × 8 chunks, model m
	s.CreateSession(&Session{Question: "q1"})
	s.CreateSession(&Session{Question: "q2"})
	s.PutDocument("doi:10.1/0000", []byte("full text"))
	s.PutEmbeddings("m", map[string][]float32{HashText("query\x00what"): g.Next()})
	s.PutEmbeddings("other", map[string][]float32{"h": {1, 2, 3}})
	ix, err := s.Index("m")
	if err != nil {
		t.Fatal(err)
	}
	vectortest.WaitIdle(t, ix)
	st, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.Sessions != 2 || st.Sources != 10 || st.Documents != 1 || st.Chunks != 80 || st.FileBytes == 0 {
		t.Fatalf("stats = %+v", st)
	}
	want := map[string]EmbeddingStats{
		"m":     {Model: "m", Count: 81, Dim: 16, Bytes: 81 * 64, Unused: 1},
		"other": {Model: "other", Count: 1, Dim: 3, Bytes: 12, Unused: 1},
	}
	for _, e := range st.Embeddings {
		if want[e.Model] != e {
			t.Errorf("embeddings %+v, want %+v", e, want[e.Model])
		}
	}
	if len(st.Indexes) != 1 || st.Indexes[0].Model != "m" || st.Indexes[0].Vectors != 80 || !st.Indexes[0].Fresh || st.Indexes[0].Bytes == 0 {
		t.Fatalf("index files = %+v", st.Indexes)
	}
	// A write the index file has not seen makes it stale.
	s.PutChunks("new", []Chunk{{Text: "x"}})
	st, _ = s.Stats()
	if st.Indexes[0].Fresh {
		t.Fatal("index file still fresh after a new chunk")
	}
}

// Compaction returns free space, prunes embeddings no chunk uses, keeps
// everything else, leaves the store usable and the vector index fresh.
func TestCompactShrinksAndKeepsData(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
	g := vectortest.NewTopics(2, 64, 6)
	storeWithChunks(t, s, g, 400)
	sess := &Session{Question: "kept?", Report: "# yes"}
	s.CreateSession(sess)
	big := []byte(strings.Repeat("a long document ", 40000))
	for i := 0; i < 20; i++ {
		s.PutDocument(fmt.Sprintf("tmp%d", i), big)
	}
	orphans := map[string][]float32{}
	for i := 0; i < 300; i++ {
		orphans[fmt.Sprintf("orphan%d", i)] = g.Next()
	}
	s.PutEmbeddings("m", orphans)
	s.PutEmbeddings("gone-model", map[string][]float32{"x": {1, 2}})
	ix, _ := s.Index("m")
	vectortest.WaitIdle(t, ix)
	for i := 0; i < 20; i++ { // free what the documents took
		s.putBytes(bucketDocuments, fmt.Sprintf("tmp%d", i), []byte("short"))
	}
	before, _ := os.Stat(path)
	var steps []string
	res, err := s.Compact(context.Background(), func(step string, _, _ int) { steps = append(steps, step) })
	if err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(path)
	t.Logf("compaction: %+v, steps %q", res, steps)
	if after.Size() >= before.Size() || res.BytesAfter != after.Size() || res.Pruned != 301 {
		t.Fatalf("%d → %d bytes, result %+v", before.Size(), after.Size(), res)
	}
	if got, err := s.Session(sess.ID); err != nil || got.Report != "# yes" {
		t.Fatalf("session after compaction: %+v %v", got, err)
	}
	if _, ok, _ := s.Embedding("m", "orphan1"); ok {
		t.Fatal("unused embedding survived")
	}
	if _, ok, _ := s.Embedding("m", HashText("chunk 3 of source 2")); !ok {
		t.Fatal("a chunk's embedding was pruned")
	}
	// Still usable: writes, the index, a reopen.
	if err := s.PutSource("after", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	ix, err = s.Index("m")
	if err != nil {
		t.Fatal(err)
	}
	sameAsStore(t, s, ix, g.Queries(20), 0.97)
	st, _ := s.Stats()
	if len(st.Indexes) != 1 || !st.Indexes[0].Fresh || st.Indexes[0].Model != "m" {
		t.Fatalf("index files after compaction: %+v", st.Indexes)
	}
	s.Close()
	s2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if _, ok, _ := s2.Source("after"); !ok {
		t.Fatal("write after compaction lost")
	}
}

const compactWaitEnv = "STORE_TEST_COMPACT_WAIT_PATH"

// TestCompactWaiterChildHelper opens the store with a long lock timeout
// (it is started while another process holds it) and reports whether it
// sees the session written after the compaction.
func TestCompactWaiterChildHelper(t *testing.T) {
	t.Parallel()
	path := child.Var(t, compactWaitEnv, "TestOpenDuringCompactionGetsTheNewFile")
	fmt.Println("WAITING")
	s, err := Open(path, Options{LockTimeout: 20 * time.Second})
	if err != nil {
		fmt.Println("ERR", err)
		return
	}
	defer s.Close()
	list, err := s.ListSessions()
	if err != nil {
		fmt.Println("ERR", err)
		return
	}
	for _, sess := range list {
		fmt.Println("SESSION", sess.Question)
	}
	fmt.Println("DONE")
}

// A process that waits for the lock while the store is compacted must end
// up on the new file, not on the old one the compaction unlinked (where
// its writes would vanish).
func TestOpenDuringCompactionGetsTheNewFile(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("spawns a child process")
	}
	s, path := openTemp(t)
	storeWithChunks(t, s, vectortest.NewTopics(3, 8, 2), 200)
	cmd := child.Command(context.Background(), "TestCompactWaiterChildHelper", []string{compactWaitEnv + "=" + path})
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() || sc.Text() != "WAITING" {
		t.Fatalf("child: %q", sc.Text())
	}
	time.Sleep(300 * time.Millisecond) // the child is blocked on the old file's lock
	if _, err := s.Compact(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	s.CreateSession(&Session{Question: "written after compaction"})
	s.Close()
	var out []string
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	cmd.Wait()
	if !strings.Contains(strings.Join(out, "\n"), "SESSION written after compaction") {
		t.Fatalf("the waiting process did not see the compacted store: %q", out)
	}
}
