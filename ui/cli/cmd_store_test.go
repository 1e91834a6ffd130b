package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/researchtui/researchtui/llm/ollamafake"
	"github.com/researchtui/researchtui/store"
)

func TestStoreStatsAndCompact(t *testing.T) {
	t.Parallel()
	c, _ := modelCLI(t, ollamafake.Options{})
	dir := libraryFolder(t, c.dir, 40, 400)
	if out, stderr, code, _ := c.run("corpus", "add", dir); code != 0 {
		t.Fatalf("corpus add: %d\n%s\n%s", code, out, stderr)
	}
	// Drop half the library: its chunks go, their embeddings stay until a
	// compaction prunes them.
	for i := 0; i < 20; i++ {
		os.Remove(filepath.Join(dir, "paper00"+twoDigits(i)+".md"))
	}
	c.run("corpus", "add", dir)
	before := storeStats(t, c)

	out, stderr, code, _ := c.run("store", "stats")
	if code != 0 {
		t.Fatalf("store stats: %d\n%s", code, stderr)
	}
	for _, want := range []string{"sessions    0", "sources     40", "chunks      40", "nomic-embed-text", "× 768-d", "used by no chunk", "vector indexes", "searched exactly"} {
		if !strings.Contains(out, want) {
			t.Errorf("store stats lacks %q:\n%s", want, out)
		}
	}

	unused := before.Embeddings[0].Unused
	out, stderr, code, _ = c.run("store", "compact")
	if code != 0 || unused == 0 || !strings.Contains(out, commas(unused)+" unused embeddings pruned") {
		t.Fatalf("store compact (%d unused before): exit %d\n%s\n%s", unused, code, out, stderr)
	}
	after := storeStats(t, c)
	if after.Chunks != before.Chunks || after.Embeddings[0].Unused != 0 || after.Embeddings[0].Count != before.Embeddings[0].Count-unused || after.FileBytes > before.FileBytes {
		t.Fatalf("before %+v\nafter %+v", before, after)
	}
	if len(after.Indexes) != 1 || after.Indexes[0].Vectors != after.Chunks || !after.Indexes[0].Fresh {
		t.Fatalf("index after compaction: %+v", after.Indexes)
	}
	out, _, code, _ = c.run("search", "--json", "anisotropic gap node quasiparticle")
	if code != 0 || strings.Count(out, "\n") == 0 {
		t.Fatalf("search after compaction: exit %d\n%s", code, out)
	}
}

func twoDigits(i int) string { return string([]byte{byte('0' + i/10), byte('0' + i%10)}) }

// While another process holds the store, both commands say so and exit 4.
func TestStoreCommandsRefuseWhileHeld(t *testing.T) {
	t.Parallel()
	c := newCLI(t, "http://127.0.0.1:1", nil)
	held, err := store.Open(filepath.Join(c.dir, "data", "researchtui.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	for _, args := range [][]string{{"store", "stats"}, {"store", "compact"}} {
		_, stderr, code, _ := c.run(args...)
		if code != exitLocked || !strings.Contains(stderr, "another researchtui is using") {
			t.Errorf("%v: exit %d, %q", args, code, stderr)
		}
	}
}

// Listing sessions never opens a vector index: a damaged index file is
// left exactly as it is (opening it would rebuild it).
func TestSessionsListLeavesTheIndexAlone(t *testing.T) {
	t.Parallel()
	c, _ := modelCLI(t, ollamafake.Options{})
	dir := libraryFolder(t, c.dir, 5, 300)
	c.run("corpus", "add", dir)
	st := storeStats(t, c)
	if len(st.Indexes) != 1 {
		t.Fatalf("no index file: %+v", st)
	}
	file := st.Indexes[0].File
	raw, _ := os.ReadFile(file)
	raw[100] ^= 0xff // in the header, so stats (which reads headers only) sees it too
	os.WriteFile(file, raw, 0o600)
	if _, stderr, code, _ := c.run("sessions", "list"); code != 0 {
		t.Fatalf("sessions list: %d %s", code, stderr)
	}
	if now, _ := os.ReadFile(file); !bytes.Equal(now, raw) {
		t.Fatal("sessions list touched the vector index file")
	}
	var s store.Stats
	out, _, _, _ := c.run("store", "stats", "--json")
	json.Unmarshal([]byte(out), &s)
	if s.Indexes[0].Problem == "" {
		t.Fatalf("the damage is not reported: %+v", s.Indexes[0])
	}
}

// store stats suggests a compaction only when it would give back a tenth
// of the file: right after one, bbolt's few free pages are not worth it.
func TestStoreStatsSuggestsCompactionWhenItPays(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file, free int64
		suggest    bool
	}{
		{file: 176 << 20, free: 24 << 10},
		{file: 186 << 20, free: 11 << 20},
		{file: 186 << 20, free: 40 << 20, suggest: true},
	} {
		var b bytes.Buffer
		printStats(&b, store.Stats{Path: "/data/researchtui.db", FileBytes: tc.file, FreeBytes: tc.free})
		if got := strings.Contains(b.String(), "store compact"); got != tc.suggest {
			t.Errorf("%d bytes free of %d: suggests compaction %v, want %v\n%s", tc.free, tc.file, got, tc.suggest, b.String())
		}
		if !strings.Contains(b.String(), humanBytes(tc.free)+" of it free") {
			t.Errorf("free space not shown:\n%s", b.String())
		}
	}
}
