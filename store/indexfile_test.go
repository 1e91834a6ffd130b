package store

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func sameHits(t *testing.T, what string, got, want []Hit) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d hits, want %d\n got %v\nwant %v", what, len(got), len(want), got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s: hit %d = %+v, want %+v", what, i, got[i], want[i])
		}
	}
}

func saveTo(t *testing.T, ix *Index, path, model string) int64 {
	t.Helper()
	size, err := writeIndexFile(path, model, 7, ix.snapshot())
	if err != nil {
		t.Fatal(err)
	}
	return size
}

// A saved index opens to the same answers, without tombstones, and keeps
// working (adds, removals, another save) after it is opened.
func TestIndexFileRoundTrip(t *testing.T) {
	const dim = 40
	g := newTopics(2, dim, 12)
	d := g.data(3000)
	qs := g.queries(50)
	for _, opt := range []IndexOptions{{SwitchAt: -1}, {SwitchAt: 1, Seed: 5}} {
		t.Run(fmt.Sprintf("graph=%v", opt.SwitchAt > 0), func(t *testing.T) {
			ix := NewIndexWith(dim, opt)
			defer ix.Close()
			fill(t, ix, d)
			for i := 0; i < 300; i++ {
				ix.Remove(d.ids[i*3])
			}
			waitIdle(t, ix)
			path := filepath.Join(t.TempDir(), "m.idx")
			saveTo(t, ix, path, "model:v1")
			back, h, err := loadIndexFile(path, "model:v1", opt)
			if err != nil {
				t.Fatal(err)
			}
			defer back.Close()
			if h.gen != 7 || back.Len() != 2700 || back.Dim() != dim || back.Status().Tombstones != 0 {
				t.Fatalf("reopened: gen %d, %+v", h.gen, back.Status())
			}
			if opt.SwitchAt > 0 && back.Status().Linked != 2700 {
				t.Fatalf("graph not reopened whole: %+v", back.Status())
			}
			for i, q := range qs {
				want, _ := ix.Search(q, 10)
				got, err := back.Search(q, 10)
				if err != nil {
					t.Fatal(err)
				}
				sameHits(t, fmt.Sprintf("query %d", i), got, want)
			}
			// The mapped index takes changes and saves again.
			more := g.data(3200)
			for i := 3000; i < 3200; i++ {
				if err := back.Add("more-"+more.ids[i], more.vecs[i]); err != nil {
					t.Fatal(err)
				}
			}
			back.Add(d.ids[1], d.vecs[2]) // replace
			back.Remove(d.ids[4])
			waitIdle(t, back)
			hits, _ := back.Search(more.vecs[3100], 1)
			if len(hits) == 0 || hits[0].ID != "more-"+more.ids[3100] {
				t.Fatalf("vector added after opening not found: %v", hits)
			}
			path2 := filepath.Join(t.TempDir(), "m2.idx")
			saveTo(t, back, path2, "model:v1")
			again, _, err := loadIndexFile(path2, "model:v1", opt)
			if err != nil {
				t.Fatal(err)
			}
			defer again.Close()
			if again.Len() != back.Len() {
				t.Fatalf("Len %d after second save, want %d", again.Len(), back.Len())
			}
			for i, q := range qs {
				want, _ := back.Search(q, 10)
				got, _ := again.Search(q, 10)
				sameHits(t, fmt.Sprintf("second save, query %d", i), got, want)
			}
		})
	}
}

// Every kind of damage is detected: at open, before anything is used, or
// (the vectors) by the check that follows it.
func TestIndexFileDamageDetected(t *testing.T) {
	const dim = 16
	d := newClustered(3, dim, 4).data(500)
	ix := graphIndex(dim)
	defer ix.Close()
	fill(t, ix, d)
	dir := t.TempDir()
	path := filepath.Join(dir, "good.idx")
	saveTo(t, ix, path, "m")
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := parseHeader(good)
	if err != nil {
		t.Fatal(err)
	}
	damage := map[string][]byte{
		"truncated":       good[:len(good)/2],
		"header only":     good[:headerSize],
		"short":           good[:100],
		"empty":           {},
		"not an index":    []byte(strings.Repeat("research notes\n", 400)),
		"header bit":      flip(good, 30),
		"model name byte": flip(good, 81),
	}
	for i, s := range h.sections {
		if s.len > 0 {
			damage[fmt.Sprintf("section %d", i)] = flip(good, int(s.off+s.len/2))
		}
	}
	for name, data := range damage {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".idx")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		ix, _, err := loadIndexFile(p, "m", IndexOptions{})
		if name == "section 0" {
			// The vectors are verified after opening, by the check.
			if err != nil {
				t.Fatalf("%s: open: %v", name, err)
			}
			err = ix.checkFile(nil)
		}
		if ix != nil {
			ix.Close()
		}
		if !errors.Is(err, errCorrupt) {
			t.Errorf("%s: err = %v, want errCorrupt", name, err)
		}
	}
	if _, _, err := loadIndexFile(path, "another-model", IndexOptions{}); !errors.Is(err, errCorrupt) {
		t.Errorf("file of another model: err = %v", err)
	}
	if _, _, err := loadIndexFile(filepath.Join(dir, "none.idx"), "m", IndexOptions{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v", err)
	}
}

func flip(b []byte, at int) []byte {
	c := append([]byte(nil), b...)
	c[at] ^= 0x5a
	return c
}

// storeWithChunks fills a store with n chunks over n/8 sources, each with
// an embedding for model "m".
func storeWithChunks(t testing.TB, s *Store, g *topicGen, n int) map[string][]float32 {
	t.Helper()
	vecs := map[string][]float32{}
	emb := map[string][]float32{}
	var batch []SourceBatch
	for src := 0; src*8 < n; src++ {
		key := fmt.Sprintf("doi:10.1/%04d", src)
		var chunks []Chunk
		for j := 0; j < 8 && src*8+j < n; j++ {
			text := fmt.Sprintf("chunk %d of source %d", j, src)
			v := g.next()
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
	waitIdle(t, ix)
	ref, err := s.BuildIndex("m")
	if err != nil {
		t.Fatal(err)
	}
	if ix.Len() != ref.Len() {
		t.Fatalf("index holds %d vectors, the store %d (%+v)", ix.Len(), ref.Len(), ix.Status())
	}
	if r := recall(t, ix, ref, qs, 10); r < minRecall {
		t.Fatalf("recall against the store = %.3f", r)
	}
}

// The store's index is saved at Close, opened from its file next time,
// catches up with chunks written without it, and is rebuilt when its file
// is damaged or missing.
func TestStoreIndexPersistsAndCatchesUp(t *testing.T) {
	s, path := openTemp(t)
	s.IndexOptions = IndexOptions{SwitchAt: 200, Seed: 9}
	g := newTopics(6, 32, 10)
	storeWithChunks(t, s, g, 1200)
	qs := g.queries(40)
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
	raw.PutEmbeddings("m", map[string][]float32{HashText("rewritten"): g.next()})
	if err := raw.PutChunks("doi:10.1/0004", nil); err != nil {
		t.Fatal(err)
	}
	raw.db.Close() // without the store's Close: nothing saved
	s, ix = reopen()
	sameAsStore(t, s, ix, qs, 0.97)
	for _, id := range []string{ChunkID("doi:10.1/0004", 0), ChunkID("doi:10.1/0003", 1), ChunkID("doi:10.1/0003", 5)} {
		ix.mu.RLock()
		_, held := ix.pos[id]
		ix.mu.RUnlock()
		if held {
			t.Errorf("%s is still in the index", id)
		}
	}
	s.Close()

	// A damaged file is rebuilt from the store, and so is a missing one.
	data, _ := os.ReadFile(file)
	os.WriteFile(file, flip(data, len(data)-100), 0o600)
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

func storeWithChunksAt(t testing.TB, s *Store, g *topicGen, prefix string, n int) int {
	t.Helper()
	emb := map[string][]float32{}
	var batch []SourceBatch
	for src := 0; src*8 < n; src++ {
		key := fmt.Sprintf("%s%04d", prefix, src)
		var chunks []Chunk
		for j := 0; j < 8; j++ {
			text := fmt.Sprintf("%s chunk %d of %d", prefix, j, src)
			chunks = append(chunks, Chunk{Seq: j, Text: text})
			emb[HashText(text)] = g.next()
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
	s, path := openTemp(t)
	storeWithChunks(t, s, newTopics(1, 8, 3), 100)
	s.Close()
	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := ro.Index("m")
	if err != nil || ix.Len() != 100 {
		t.Fatalf("read-only index: %v %v", ix, err)
	}
	waitIdle(t, ix)
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
	path := os.Getenv(indexKillEnv)
	if path == "" {
		t.Skip("helper for TestKilledIndexWriterLeavesUsableStore")
	}
	s, err := Open(path, Options{})
	if err != nil {
		fmt.Println("ERR", err)
		return
	}
	s.IndexOptions = IndexOptions{SwitchAt: 1, Seed: 1}
	ix, err := s.Index("m")
	if err != nil {
		fmt.Println("ERR", err)
		return
	}
	ix.Wait(context.Background())
	g := newTopics(77, 96, 8)
	for i := 0; ; i++ {
		key := fmt.Sprintf("child:%06d", i)
		text := "child chunk " + key
		v := g.next()
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
		if err := s.saveIndex(ix); err != nil {
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
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	s, path := openTemp(t)
	g := newTopics(7, 96, 8)
	n := 12000
	if raceOn {
		n = 3000
	}
	storeWithChunks(t, s, g, n)
	s.Close()
	file := s.IndexPath("m")
	qs := g.queries(30)
	// Even attempts start without an index file, so the kill hits the
	// first save and the next open must rebuild; odd ones kill a later
	// save, and the previous file must catch up.
	var rebuilt, caughtUp int
	for attempt := 0; attempt < 8 && (rebuilt == 0 || caughtUp == 0); attempt++ {
		fresh := attempt%2 == 0
		if fresh {
			os.Remove(file)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestIndexKillChildHelper$")
		cmd.Env = append(os.Environ(), indexKillEnv+"="+path)
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
