package store

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/researchtui/researchtui/testkit/child"
	"go.etcd.io/bbolt"
)

func openTemp(t testing.TB) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sub", "dir", "research.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

func TestOpenCloseReopenKeepsData(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
	if s.Path() != path {
		t.Fatalf("Path = %q, want %q", s.Path(), path)
	}
	sess := &Session{Question: "why?", Status: StatusCompleted, Report: "# Answer"}
	if err := s.CreateSession(sess); err != nil {
		t.Fatal(err)
	}
	if err := s.PutSource("doi:1", []byte(`{"t":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	got, err := s2.Session(sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Question != "why?" || got.Report != "# Answer" {
		t.Fatalf("reopened session = %+v", got)
	}
	if v, ok, err := s2.Source("doi:1"); err != nil || !ok || string(v) != `{"t":1}` {
		t.Fatalf("Source = %q %v %v", v, ok, err)
	}
}

func readVersion(t *testing.T, path string) string {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v string
	db.View(func(tx *bbolt.Tx) error {
		v = string(tx.Bucket(bucketMeta).Get(keySchemaVersion))
		return nil
	})
	return v
}

func setVersion(t *testing.T, path, v string) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(keySchemaVersion, []byte(v))
	}); err != nil {
		t.Fatal(err)
	}
}

func TestMigrationsIdempotent(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
	if err := s.PutDocument("k", []byte("text")); err != nil {
		t.Fatal(err)
	}
	s.Close()
	want := fmt.Sprint(SchemaVersion())
	for i := 0; i < 3; i++ {
		s, err := Open(path, Options{})
		if err != nil {
			t.Fatalf("reopen %d: %v", i, err)
		}
		s.Close()
		if v := readVersion(t, path); v != want {
			t.Fatalf("schema_version = %q, want %q", v, want)
		}
	}
	// Re-running every migration over existing buckets must keep the data.
	setVersion(t, path, "0")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v, ok, _ := s.Document("k"); !ok || string(v) != "text" {
		t.Fatalf("document lost after re-migration: %q %v", v, ok)
	}
	s.Close()
	if v := readVersion(t, path); v != want {
		t.Fatalf("schema_version = %q, want %q", v, want)
	}
	// A file from a newer build is refused, not downgraded.
	setVersion(t, path, "999")
	if _, err := Open(path, Options{}); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("Open newer schema: err = %v", err)
	}
}

const lockChildEnv = "STORE_TEST_LOCK_CHILD_PATH"

// TestLockChildHelper is the child half of TestSecondProcessGetsErrLocked: it
// only runs when re-executed with lockChildEnv set, because flock excludes
// other processes, not other handles in this one.
func TestLockChildHelper(t *testing.T) {
	t.Parallel()
	path := child.Var(t, lockChildEnv, "TestSecondProcessGetsErrLocked")
	for _, ro := range []bool{false, true} {
		start := time.Now()
		s, err := Open(path, Options{ReadOnly: ro})
		elapsed := time.Since(start)
		if s != nil {
			s.Close()
		}
		fmt.Printf("RESULT ro=%v locked=%v elapsed_ms=%d msg=%v\n", ro, errors.Is(err, ErrLocked), elapsed.Milliseconds(), err)
	}
}

func TestSecondProcessGetsErrLocked(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("spawns a child process")
	}
	_, path := openTemp(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := child.Command(ctx, "TestLockChildHelper", []string{lockChildEnv + "=" + path}, "-test.v")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	total := time.Since(start)
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var results int
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(line, "RESULT ") {
			continue
		}
		results++
		t.Log(line)
		var ro, locked bool
		var ms int64
		if _, err := fmt.Sscanf(line, "RESULT ro=%t locked=%t elapsed_ms=%d", &ro, &locked, &ms); err != nil {
			t.Fatalf("parse %q: %v", line, err)
		}
		if !locked {
			t.Errorf("child open (ro=%v) did not fail with ErrLocked: %s", ro, line)
		}
		if ms >= 2000 {
			t.Errorf("child open (ro=%v) took %d ms, want < 2000", ro, ms)
		}
		if !strings.Contains(line, "another researchtui is using "+path) {
			t.Errorf("message lacks path: %s", line)
		}
	}
	if results != 2 {
		t.Fatalf("child printed %d results:\n%s", results, out)
	}
	t.Logf("child process total %v", total)
}

func TestReadOnlyOpen(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
	if err := s.PutSource("a", []byte("1")); err != nil {
		t.Fatal(err)
	}
	s.Close()
	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if v, ok, err := ro.Source("a"); err != nil || !ok || string(v) != "1" {
		t.Fatalf("Source = %q %v %v", v, ok, err)
	}
	if err := ro.PutSource("b", []byte("2")); err == nil {
		t.Fatal("write to read-only store succeeded")
	}
}

func TestNewIDSortable(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	prev := ""
	for i := 0; i < 1000; i++ {
		id := NewID(base.Add(time.Duration(i) * time.Millisecond))
		if len(id) != 18 {
			t.Fatalf("len(%q) = %d", id, len(id))
		}
		if id <= prev {
			t.Fatalf("%q not after %q", id, prev)
		}
		prev = id
	}
	if a, b := NewID(base), NewID(base); a == b {
		t.Fatal("IDs in the same millisecond collided")
	}
}

func TestIDTime(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC)
	got, ok := IDTime(NewID(base))
	if !ok || !got.Equal(base) {
		t.Fatalf("IDTime = %v, %v; want %v", got, ok, base)
	}
	for _, id := range []string{"s4", "", "zzzzzzzzzzzz123456", "019b7c1e2f3aABCDEF"} {
		if _, ok := IDTime(id); ok {
			t.Errorf("IDTime(%q) ok for an ID NewID cannot make", id)
		}
	}
}

const crashChildEnv = "STORE_TEST_CRASH_CHILD_PATH"

// TestCrashChildHelper is the child half of TestKilledWriterLosesNothingAcked:
// it appends event batches forever, printing ACK after each returns, until
// the parent kills it.
func TestCrashChildHelper(t *testing.T) {
	t.Parallel()
	path := child.Var(t, crashChildEnv, "TestKilledWriterLosesNothingAcked")
	s, err := Open(path, Options{})
	if err != nil {
		fmt.Println("ERR", err)
		return
	}
	for seq := int64(1); ; seq += 10 {
		var evs []EventRecord
		for i := int64(0); i < 10; i++ {
			evs = append(evs, EventRecord{Seq: seq + i, Data: []byte(fmt.Sprint(seq + i))})
		}
		if err := s.AppendEvents("crash", evs); err != nil {
			fmt.Println("ERR", err)
			return
		}
		fmt.Printf("ACK %d\n", seq+9)
	}
}

func TestKilledWriterLosesNothingAcked(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("spawns a child process")
	}
	s, path := openTemp(t)
	s.Close()
	cmd := child.Command(context.Background(), "TestCrashChildHelper", []string{crashChildEnv + "=" + path})
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var acked int64
	watchdog := time.AfterFunc(10*time.Second, func() { cmd.Process.Kill() })
	defer watchdog.Stop()
	sc := bufio.NewScanner(stdout)
	for acked < 200 && sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "ERR") {
			t.Fatal(line)
		}
		fmt.Sscanf(line, "ACK %d", &acked)
	}
	cmd.Process.Kill() // SIGKILL: no Close, no deferred cleanup
	cmd.Wait()
	if acked == 0 {
		t.Fatal("child acknowledged nothing")
	}
	s2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	last, err := s2.LastSeq("crash")
	if err != nil || last < acked {
		t.Fatalf("LastSeq after kill = %d (%v), but %d were acknowledged", last, err, acked)
	}
	evs, _ := s2.Events("crash")
	for i, ev := range evs {
		if ev.Seq != int64(i+1) {
			t.Fatalf("gap at %d: seq %d", i, ev.Seq)
		}
	}
	t.Logf("acknowledged %d, found %d after SIGKILL", acked, last)
}

func BenchmarkListSessions500(b *testing.B) {
	s, _ := openTemp(b)
	base := time.Now().Add(-500 * time.Hour)
	report := make([]byte, 40<<10) // a realistic 40 KB report, kept off the list path
	for i := range report {
		report[i] = 'a' + byte(i%26)
	}
	for i := 0; i < 500; i++ {
		sess := &Session{
			Question:  fmt.Sprintf("What is the effect of intervention %d on outcome?", i),
			Title:     fmt.Sprintf("Session %d", i),
			Status:    StatusCompleted,
			CreatedAt: base.Add(time.Duration(i) * time.Hour),
			Model:     "qwen3:8b", EmbedModel: "nomic-embed-text", Backend: "ollama",
			Options: []byte(`{"depth":2,"max_sources":20}`),
			Usage:   Usage{PromptTokens: 12000, CompletionTokens: 3000},
			Report:  string(report),
			Stage:   "write",
		}
		if err := s.CreateSession(sess); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		list, err := s.ListSessions()
		if err != nil || len(list) != 500 {
			b.Fatalf("%d %v", len(list), err)
		}
	}
}
