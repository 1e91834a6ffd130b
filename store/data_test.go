package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"
)

func TestSessionsCRUDAndOrder(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var ids []string
	for i := 0; i < 5; i++ {
		sess := &Session{
			Question:  fmt.Sprintf("q%d", i),
			Status:    StatusRunning,
			CreatedAt: base.Add(time.Duration(i) * time.Minute),
			Options:   json.RawMessage(`{"depth":2}`),
			Report:    fmt.Sprintf("report %d", i),
		}
		if err := s.CreateSession(sess); err != nil {
			t.Fatal(err)
		}
		if sess.ID == "" || sess.UpdatedAt.IsZero() {
			t.Fatalf("CreateSession did not fill ID/UpdatedAt: %+v", sess)
		}
		ids = append(ids, sess.ID)
	}
	dup := &Session{ID: ids[0]}
	if err := s.CreateSession(dup); err == nil {
		t.Fatal("duplicate ID accepted")
	}

	got, err := s.Session(ids[2])
	if err != nil {
		t.Fatal(err)
	}
	if got.Question != "q2" || got.Report != "report 2" || string(got.Options) != `{"depth":2}` {
		t.Fatalf("Session = %+v", got)
	}
	if _, err := s.Session("nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing session err = %v", err)
	}

	list, err := s.ListSessions()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 5 {
		t.Fatalf("len(list) = %d", len(list))
	}
	for i, sess := range list {
		if want := ids[4-i]; sess.ID != want {
			t.Fatalf("list[%d] = %s, want %s (newest first)", i, sess.ID, want)
		}
		if sess.Report != "" {
			t.Fatalf("ListSessions returned a report for %s", sess.ID)
		}
	}

	before := got.UpdatedAt
	upd, err := s.UpdateSession(ids[2], func(x *Session) error {
		x.Status = StatusCompleted
		x.Usage.PromptTokens += 10
		x.Report = "final"
		x.ID = "hijack"
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if upd.ID != ids[2] || upd.Status != StatusCompleted || upd.UpdatedAt.Before(before) {
		t.Fatalf("UpdateSession = %+v", upd)
	}
	got, _ = s.Session(ids[2])
	if got.Status != StatusCompleted || got.Usage.PromptTokens != 10 || got.Report != "final" {
		t.Fatalf("after update = %+v", got)
	}
	boom := errors.New("boom")
	if _, err := s.UpdateSession(ids[2], func(x *Session) error { x.Title = "x"; return boom }); !errors.Is(err, boom) {
		t.Fatalf("fn error not returned: %v", err)
	}
	if got, _ := s.Session(ids[2]); got.Title != "" {
		t.Fatal("failed update was written")
	}
	if _, err := s.UpdateSession("nope", func(*Session) error { return nil }); !errors.Is(err, ErrNotFound) {
		t.Fatalf("update missing err = %v", err)
	}
}

func TestSessionJSONRoundTrip(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	in := Session{
		ID: NewID(time.Now()), Question: "q", Title: "t", Status: StatusAwaitingReview,
		CreatedAt: time.Now().UTC().Truncate(time.Millisecond), Model: "m", EmbedModel: "e", Backend: "ollama",
		Usage: Usage{1, 2, 3}, CostUSD: 0.5, Report: "r", Error: "err", Stage: "plan", Warnings: 2,
		PendingReview: json.RawMessage(`{"x":1}`),
	}
	in.UpdatedAt = in.CreatedAt
	if err := s.CreateSession(&in); err != nil {
		t.Fatal(err)
	}
	out, err := s.Session(in.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip:\n in %+v\nout %+v", in, out)
	}
}

func TestDeleteSessionKeepsSharedData(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	sess := &Session{Question: "q", Report: "r"}
	if err := s.CreateSession(sess); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendEvents(sess.ID, []EventRecord{{Seq: 1, Data: []byte("e")}}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutCheckpoint(sess.ID, "plan", []byte("p")); err != nil {
		t.Fatal(err)
	}
	if err := s.PutSource("src", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if err := s.PutChunks("src", []Chunk{{Seq: 0, Text: "hello"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutEmbeddings("m", map[string][]float32{HashText("hello"): {1, 0}}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSession(sess.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Session(sess.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("session still there: %v", err)
	}
	if evs, _ := s.Events(sess.ID); len(evs) != 0 {
		t.Fatalf("events kept: %v", evs)
	}
	if names, _ := s.CheckpointNames(sess.ID); len(names) != 0 {
		t.Fatalf("checkpoints kept: %v", names)
	}
	if _, ok, _ := s.Source("src"); !ok {
		t.Fatal("source deleted")
	}
	if cs, _ := s.Chunks("src"); len(cs) != 1 {
		t.Fatalf("chunks = %v", cs)
	}
	if _, ok, _ := s.Embedding("m", HashText("hello")); !ok {
		t.Fatal("embedding deleted")
	}
	if err := s.DeleteSession(sess.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second delete err = %v", err)
	}
}

func TestMarkInterrupted(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	statuses := []string{StatusRunning, StatusCompleted, StatusRunning, StatusAwaitingReview, StatusFailed}
	var ids []string
	for _, st := range statuses {
		sess := &Session{Status: st, Report: "keep"}
		if err := s.CreateSession(sess); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, sess.ID)
	}
	n, err := s.MarkInterrupted()
	if err != nil || n != 2 {
		t.Fatalf("MarkInterrupted = %d, %v; want 2", n, err)
	}
	for i, id := range ids {
		got, _ := s.Session(id)
		want := statuses[i]
		if want == StatusRunning {
			want = StatusInterrupted
		}
		if got.Status != want || got.Report != "keep" {
			t.Fatalf("session %d: status %q report %q, want %q", i, got.Status, got.Report, want)
		}
	}
	if n, _ := s.MarkInterrupted(); n != 0 {
		t.Fatalf("second MarkInterrupted changed %d", n)
	}
}

func TestEventsInOrderAcrossBatches(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	if last, err := s.LastSeq("s1"); err != nil || last != 0 {
		t.Fatalf("LastSeq empty = %d, %v", last, err)
	}
	var seq int64
	for batch := 0; batch < 10; batch++ {
		var evs []EventRecord
		for i := 0; i < 30; i++ {
			seq++
			evs = append(evs, EventRecord{Seq: seq, Data: []byte(fmt.Sprintf("e%d", seq))})
		}
		if err := s.AppendEvents("s1", evs); err != nil {
			t.Fatal(err)
		}
	}
	// 256 and 257 would sort wrongly with little-endian or decimal keys.
	evs, err := s.Events("s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 300 {
		t.Fatalf("len = %d", len(evs))
	}
	for i, ev := range evs {
		if ev.Seq != int64(i+1) || string(ev.Data) != fmt.Sprintf("e%d", i+1) {
			t.Fatalf("evs[%d] = %d %q", i, ev.Seq, ev.Data)
		}
	}
	if last, _ := s.LastSeq("s1"); last != 300 {
		t.Fatalf("LastSeq = %d", last)
	}
	if evs, _ := s.Events("other"); len(evs) != 0 {
		t.Fatal("events leaked between sessions")
	}
	if err := s.AppendEvents("s1", []EventRecord{{Seq: 0}}); err == nil {
		t.Fatal("seq 0 accepted")
	}
}

func TestCheckpoints(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	if _, ok, err := s.Checkpoint("s", "plan"); ok || err != nil {
		t.Fatalf("missing checkpoint: %v %v", ok, err)
	}
	names := []string{"plan", "analyse/doi:10.1/x", "analyse/arxiv:2401.1", "search"}
	for i, n := range names {
		if err := s.PutCheckpoint("s", n, []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutCheckpoint("s", "plan", []byte("v2")); err != nil {
		t.Fatal(err)
	}
	if v, ok, _ := s.Checkpoint("s", "plan"); !ok || string(v) != "v2" {
		t.Fatalf("plan = %q %v", v, ok)
	}
	if v, ok, _ := s.Checkpoint("s", "analyse/doi:10.1/x"); !ok || string(v) != "1" {
		t.Fatalf("slash name = %q %v", v, ok)
	}
	got, _ := s.CheckpointNames("s")
	want := []string{"analyse/arxiv:2401.1", "analyse/doi:10.1/x", "plan", "search"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("names = %v, want %v", got, want)
	}
}

func TestSourcesDocumentsChunks(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	for _, k := range []string{"b", "a", "a#1"} {
		if err := s.PutSource(k, []byte(`{"k":"`+k+`"}`)); err != nil {
			t.Fatal(err)
		}
	}
	if keys, _ := s.SourceKeys(); !reflect.DeepEqual(keys, []string{"a", "a#1", "b"}) {
		t.Fatalf("SourceKeys = %v", keys)
	}
	if _, ok, _ := s.Document("a"); ok {
		t.Fatal("document should be missing")
	}
	if err := s.PutDocument("a", []byte("full text")); err != nil {
		t.Fatal(err)
	}
	if v, ok, _ := s.Document("a"); !ok || string(v) != "full text" {
		t.Fatalf("Document = %q", v)
	}

	var chunks []Chunk
	for i := 0; i < 300; i++ {
		chunks = append(chunks, Chunk{Seq: i, Text: fmt.Sprintf("t%d", i), Page: i / 10, Start: i * 5, End: i*5 + 4})
	}
	if err := s.PutChunks("a", chunks); err != nil {
		t.Fatal(err)
	}
	if err := s.PutChunks("a#1", []Chunk{{Seq: 0, Text: "other"}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Chunks("a")
	if err != nil || len(got) != 300 {
		t.Fatalf("Chunks = %d, %v", len(got), err)
	}
	for i, c := range got {
		if c.Seq != i || c.ID != ChunkID("a", i) || c.SourceKey != "a" || c.Hash != HashText(c.Text) || c.Page != i/10 {
			t.Fatalf("chunk %d = %+v", i, c)
		}
	}
	if c, ok, _ := s.Chunk("a#000007"); !ok || c.Text != "t7" {
		t.Fatalf("Chunk = %+v %v", c, ok)
	}
	// Replacing drops chunks beyond the new set.
	if err := s.PutChunks("a", chunks[:2]); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Chunks("a"); len(got) != 2 {
		t.Fatalf("after replace len = %d", len(got))
	}
	if _, ok, _ := s.Chunk("a#000007"); ok {
		t.Fatal("stale chunk survived replace")
	}
	var all []string
	if err := s.AllChunks(func(c Chunk) error { all = append(all, c.ID); return nil }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(all, []string{"a#000000", "a#000001", "a#1#000000"}) {
		t.Fatalf("AllChunks = %v", all)
	}
}

func TestAllChunksPagesAndAllowsWrites(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	n := allChunksPage*2 + 7
	var chunks []Chunk
	for i := 0; i < n; i++ {
		chunks = append(chunks, Chunk{Seq: i, Text: fmt.Sprint(i)})
	}
	if err := s.PutChunks("src", chunks); err != nil {
		t.Fatal(err)
	}
	count := 0
	err := s.AllChunks(func(c Chunk) error {
		if c.ID != ChunkID("src", count) {
			return fmt.Errorf("chunk %d is %s", count, c.ID)
		}
		count++
		// Writing from the callback must not deadlock.
		if count == 1 {
			return s.PutSource("seen", []byte("1"))
		}
		return nil
	})
	if err != nil || count != n {
		t.Fatalf("AllChunks visited %d of %d: %v", count, n, err)
	}
	stop := errors.New("stop")
	if err := s.AllChunks(func(Chunk) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("stop err = %v", err)
	}
}

func TestEmbeddingsRoundTrip(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	items := map[string][]float32{
		"h1": {0.5, -1.25, 3e-8},
		"h2": {1, 2, 3},
	}
	if err := s.PutEmbeddings("nomic", items); err != nil {
		t.Fatal(err)
	}
	for h, want := range items {
		got, ok, err := s.Embedding("nomic", h)
		if err != nil || !ok || !reflect.DeepEqual(got, want) {
			t.Fatalf("Embedding(%s) = %v %v %v", h, got, ok, err)
		}
	}
	if _, ok, _ := s.Embedding("other-model", "h1"); ok {
		t.Fatal("embedding leaked across models")
	}
	missing, err := s.MissingEmbeddings("nomic", []string{"h3", "h1", "h4", "h3", "h2"})
	if err != nil || !reflect.DeepEqual(missing, []string{"h3", "h4"}) {
		t.Fatalf("Missing = %v %v", missing, err)
	}
	missing, _ = s.MissingEmbeddings("never", []string{"h1"})
	if !reflect.DeepEqual(missing, []string{"h1"}) {
		t.Fatalf("Missing unknown model = %v", missing)
	}
}

func TestBuildIndex(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	texts := []string{"alpha", "beta", "gamma", "delta"}
	var chunks []Chunk
	for i, tx := range texts {
		chunks = append(chunks, Chunk{Seq: i, Text: tx})
	}
	if err := s.PutChunks("src", chunks); err != nil {
		t.Fatal(err)
	}
	if err := s.PutEmbeddings("m", map[string][]float32{
		HashText("alpha"): {1, 0, 0},
		HashText("beta"):  {0, 1, 0},
		HashText("gamma"): {0, 0, 2},
		// delta has no embedding: skipped.
	}); err != nil {
		t.Fatal(err)
	}
	// A vector of another dimension under the same model is skipped, not mixed.
	if err := s.PutEmbeddings("m", map[string][]float32{HashText("delta"): {1, 1}}); err != nil {
		t.Fatal(err)
	}
	idx, err := s.BuildIndex("m")
	if err != nil {
		t.Fatal(err)
	}
	if idx.Len() != 3 || idx.Dim() != 3 {
		t.Fatalf("Len %d Dim %d", idx.Len(), idx.Dim())
	}
	hits, err := idx.Search([]float32{0, 0, 1}, 1)
	if err != nil || len(hits) != 1 || hits[0].ID != ChunkID("src", 2) {
		t.Fatalf("hits = %v %v", hits, err)
	}
	empty, err := s.BuildIndex("unknown")
	if err != nil || empty.Len() != 0 {
		t.Fatalf("unknown model index = %d %v", empty.Len(), err)
	}
}
