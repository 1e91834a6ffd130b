package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
)

// maxSearchK bounds one vector search asked over the socket.
const maxSearchK = 1000

// maxSessionPage bounds one page of sessions asked over the socket.
const maxSessionPage = 10000

// do answers one request of the client who (its connection and pid).
func (srv *shareServer) do(req request, who claim) response {
	st := srv.st
	var (
		v     any
		found = true
		err   error
	)
	// decode reads the request's payload into dst.
	decode := func(dst any) bool {
		if err = json.Unmarshal(req.Arg, dst); err != nil {
			err = fmt.Errorf("bad request: %w", err)
			return false
		}
		return true
	}
	switch req.Op {
	case "list_sessions":
		v, err = st.ListSessions()
	case "list_session_page":
		v, err = st.ListSessionPage(req.Name, min(req.K, maxSessionPage))
	case "session_stamps":
		v, err = st.SessionStamps()
	case "session":
		v, err = st.Session(req.ID)
	case "checkpoint":
		var b []byte
		b, found, err = st.Checkpoint(req.ID, req.Name)
		v = b
	case "checkpoint_names":
		v, err = st.CheckpointNames(req.ID)
	case "events":
		v, err = st.Events(req.ID)
	case "last_seq":
		v, err = st.LastSeq(req.ID)
	case "delete_session":
		err = st.DeleteSession(req.ID)
	case "chunk":
		v, found, err = st.Chunk(req.ID)
	case "source":
		var b []byte
		b, found, err = st.Source(req.ID)
		v = b

	case "create_session":
		var sess Session
		if decode(&sess) {
			err = st.CreateSession(&sess)
			v = sess
		}
	case "put_session":
		var a putSessionArg
		if decode(&a) {
			v, err = st.putSession(a.Session, a.ReadAt, a.Name, a.Data)
		}
	case "put_checkpoint":
		var b []byte
		if decode(&b) {
			err = st.PutCheckpoint(req.ID, req.Name, b)
		}
	case "append_events":
		var evs []EventRecord
		if decode(&evs) {
			err = st.AppendEvents(req.ID, evs)
		}
	case "put_source":
		var b []byte
		if decode(&b) {
			err = st.PutSource(req.ID, b)
		}
	case "put_document":
		var b []byte
		if decode(&b) {
			err = st.PutDocument(req.ID, b)
		}
	case "document":
		var b []byte
		b, found, err = st.Document(req.ID)
		v = b
	case "put_chunks":
		var cs []Chunk
		if decode(&cs) {
			err = st.PutChunks(req.ID, cs)
		}
	case "chunks":
		v, err = st.Chunks(req.ID)
	case "chunk_page":
		var page []Chunk
		var next []byte
		page, next, err = st.chunkPage([]byte(req.ID))
		v = chunkPage{Chunks: page, Next: string(next)}
	case "put_embeddings":
		var items map[string][]float32
		if decode(&items) {
			err = st.PutEmbeddings(req.Name, items)
		}
	case "embedding":
		v, found, err = st.Embedding(req.Name, req.ID)
	case "missing_embeddings":
		var hashes []string
		if decode(&hashes) {
			v, err = st.MissingEmbeddings(req.Name, hashes)
		}

	case "index_open":
		_, err = st.Index(req.Name)
	case "index_status":
		s := indexState{}
		s.Status, s.Open = st.IndexStatus(req.Name)
		if ix := st.openedIndex(req.Name); ix != nil {
			s.Reloading = ix.Reloading()
		}
		v = s
	case "index_add":
		var ix *Index
		if ix, err = st.Index(req.Name); err == nil {
			err = ix.Add(req.ID, req.Vec)
		}
	case "index_search":
		var ix *Index
		if req.K <= 0 || req.K > maxSearchK {
			err = errors.New("store: k out of range")
		} else if ix, err = st.Index(req.Name); err == nil {
			v, err = ix.Search(req.Vec, req.K)
		}

	case "claim":
		err = st.feed.take(req.ID, who)
		if err == nil && req.K == 1 { // a claim renewed after a change of owner
			_, err = st.UpdateSession(req.ID, func(s *Session) error {
				if s.Status == StatusInterrupted {
					s.Status = StatusRunning
				}
				return nil
			})
		}
	case "release":
		st.feed.drop(req.ID, who)
	case "control":
		var c Control
		if decode(&c) {
			err = st.SendControl(req.ID, c)
		}
	default:
		return response{Err: fmt.Sprintf("unknown operation %q (the owner speaks store protocol %d)", req.Op, ProtocolVersion)}
	}
	if err != nil {
		return errResponse(err)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return response{Err: err.Error()}
	}
	return response{OK: true, Found: found, Data: raw}
}

// errResponse carries an error with a code the client maps back to the
// sentinel, so errors.Is works on either side of the socket.
func errResponse(err error) response {
	r := response{Err: err.Error()}
	switch {
	case errors.Is(err, ErrNotFound):
		r.Code = "not_found"
	case errors.Is(err, errStale):
		r.Code = "stale"
	case errors.Is(err, ErrClaimed):
		r.Code = "claimed"
		var ce *ClaimedError
		if errors.As(err, &ce) {
			r.Data, _ = json.Marshal(ce.PID)
		}
	case errors.Is(err, ErrNotRunning):
		r.Code = "not_running"
	}
	return r
}

// streamChanges sends the change feed down a watching connection until the
// client or the owner hangs up.
func (srv *shareServer) streamChanges(c net.Conn, enc *json.Encoder) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The client sends nothing more; a read returning means it hung up.
	go func() {
		var b [1]byte
		_, _ = c.Read(b[:])
		cancel()
	}()
	ch, _ := srv.st.Watch(ctx)
	for change := range ch {
		if enc.Encode(change) != nil {
			return
		}
	}
}
