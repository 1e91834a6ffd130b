package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// The writes a client sends to the owner. The owner acknowledges after its
// commit, so "acknowledged means durable" holds on both sides; every write
// is safe to repeat after a broken connection (puts by key, events by seq).

// arg encodes a request's payload; the values sent are plain data, so a
// failure here is a bug worth a clear error, not a panic.
func arg(v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("store: encoding a request: %w", err)
	}
	return b, nil
}

// send is call with a payload.
func (c *Client) send(req request, payload any, out any) (bool, error) {
	a, err := arg(payload)
	if err != nil {
		return false, err
	}
	req.Arg = a
	return c.call(req, out)
}

// CreateSession is Store.CreateSession, done by the owner; the ID and times
// it assigns are written back into sess.
func (c *Client) CreateSession(sess *Session) error {
	var out Session
	if _, err := c.send(request{Op: "create_session"}, sess, &out); err != nil {
		return err
	}
	*sess = out
	return nil
}

// putSessionArg is a client's read-modify-write of a session (Store.putSession).
type putSessionArg struct {
	Session Session   `json:"session"`
	ReadAt  time.Time `json:"read_at"`
	Name    string    `json:"name,omitempty"`
	Data    []byte    `json:"data,omitempty"`
}

// staleRetries bounds how often an update is reapplied after losing a race.
// Between tries the client waits a random while that doubles up to
// staleBackoffMax: the owner writes without a round trip, so a client that
// retried at once could lose every race to an owner writing in a loop.
const (
	staleRetries    = 40
	staleBackoffMax = 64 * time.Millisecond
)

// staleBackoff is how long try i (from 0) waits before reading again.
func staleBackoff(i int) time.Duration {
	limit := time.Millisecond << min(i, 6)
	return time.Duration(rand.Int64N(int64(min(limit, staleBackoffMax)))) + 1
}

// UpdateSession is Store.UpdateSession across processes: the session is
// read, fn changes it here, and the owner writes it back only if nobody
// changed it meanwhile (else it is read again and fn applied again), so
// concurrent updaters never lose each other's fields.
func (c *Client) UpdateSession(id string, fn func(*Session) error) (Session, error) {
	return c.updateSession(id, "", nil, fn)
}

// CheckpointAndUpdate is Store.CheckpointAndUpdate across processes: the
// checkpoint and the session change commit together or not at all.
func (c *Client) CheckpointAndUpdate(id, name string, data []byte, fn func(*Session) error) (Session, error) {
	if name == "" {
		return Session{}, fmt.Errorf("store: empty checkpoint name")
	}
	if data == nil {
		data = []byte{}
	}
	return c.updateSession(id, name, data, fn)
}

func (c *Client) updateSession(id, name string, data []byte, fn func(*Session) error) (Session, error) {
	for i := range staleRetries {
		if i > 0 {
			time.Sleep(staleBackoff(i - 1))
		}
		cur, err := c.Session(id)
		if err != nil {
			return Session{}, err
		}
		readAt := cur.UpdatedAt
		if err := fn(&cur); err != nil {
			return Session{}, err
		}
		cur.ID = id
		var out Session
		_, err = c.send(request{Op: "put_session"}, putSessionArg{Session: cur, ReadAt: readAt, Name: name, Data: data}, &out)
		if errors.Is(err, errStale) {
			continue
		}
		return out, err
	}
	return Session{}, fmt.Errorf("store: session %s kept changing under this update; try again", id)
}

// PutCheckpoint is Store.PutCheckpoint, done by the owner.
func (c *Client) PutCheckpoint(sessionID, name string, data []byte) error {
	_, err := c.send(request{Op: "put_checkpoint", ID: sessionID, Name: name}, data, nil)
	return err
}

// AppendEvents is Store.AppendEvents, done by the owner (which passes the
// events on to every watcher).
func (c *Client) AppendEvents(sessionID string, evs []EventRecord) error {
	if len(evs) == 0 {
		return nil
	}
	_, err := c.send(request{Op: "append_events", ID: sessionID}, evs, nil)
	return err
}

// PutSource is Store.PutSource, done by the owner.
func (c *Client) PutSource(key string, data []byte) error {
	_, err := c.send(request{Op: "put_source", ID: key}, data, nil)
	return err
}

// PutDocument is Store.PutDocument, done by the owner.
func (c *Client) PutDocument(key string, text []byte) error {
	_, err := c.send(request{Op: "put_document", ID: key}, text, nil)
	return err
}

// Document is Store.Document, asked of the owner.
func (c *Client) Document(key string) ([]byte, bool, error) {
	var out []byte
	found, err := c.call(request{Op: "document", ID: key}, &out)
	return out, found, err
}

// PutChunks is Store.PutChunks, done by the owner.
func (c *Client) PutChunks(sourceKey string, chunks []Chunk) error {
	_, err := c.send(request{Op: "put_chunks", ID: sourceKey}, chunks, nil)
	return err
}

// Chunks is Store.Chunks, asked of the owner.
func (c *Client) Chunks(sourceKey string) ([]Chunk, error) {
	var out []Chunk
	_, err := c.call(request{Op: "chunks", ID: sourceKey}, &out)
	return out, err
}

// chunkPage is one page of AllChunks over the socket.
type chunkPage struct {
	Chunks []Chunk `json:"chunks"`
	Next   string  `json:"next,omitempty"` // "" at the end
}

// AllChunks is Store.AllChunks a page at a time: fn runs here, between
// requests, so it may call the client again.
func (c *Client) AllChunks(fn func(Chunk) error) error {
	after := ""
	for {
		var page chunkPage
		if _, err := c.call(request{Op: "chunk_page", ID: after}, &page); err != nil {
			return err
		}
		for _, ch := range page.Chunks {
			if err := fn(ch); err != nil {
				return err
			}
		}
		if page.Next == "" {
			return nil
		}
		after = page.Next
	}
}

// PutEmbeddings is Store.PutEmbeddings, done by the owner.
func (c *Client) PutEmbeddings(model string, items map[string][]float32) error {
	_, err := c.send(request{Op: "put_embeddings", Name: model}, items, nil)
	return err
}

// Embedding is Store.Embedding, asked of the owner.
func (c *Client) Embedding(model, hash string) ([]float32, bool, error) {
	var out []float32
	found, err := c.call(request{Op: "embedding", Name: model, ID: hash}, &out)
	return out, found, err
}

// MissingEmbeddings is Store.MissingEmbeddings, asked of the owner.
func (c *Client) MissingEmbeddings(model string, hashes []string) ([]string, error) {
	var out []string
	_, err := c.send(request{Op: "missing_embeddings", Name: model}, hashes, &out)
	return out, err
}

// indexState is what a remote index's status calls answer.
type indexState struct {
	Status    IndexStatus `json:"status"`
	Open      bool        `json:"open"`
	Reloading bool        `json:"reloading,omitempty"`
}

// IndexStatus is Store.IndexStatus, asked of the owner.
func (c *Client) IndexStatus(model string) (IndexStatus, bool) {
	var out indexState
	if _, err := c.call(request{Op: "index_status", Name: model}, &out); err != nil {
		return IndexStatus{}, false
	}
	return out.Status, out.Open
}

// Vectors is the owner's vector index for model, opened there if it is
// not yet; the client sends vectors and queries, never maps the file.
func (c *Client) Vectors(model string) (RunIndex, error) {
	if _, err := c.call(request{Op: "index_open", Name: model}, nil); err != nil {
		return nil, err
	}
	return remoteIndex{c: c, model: model}, nil
}

// remoteIndex is the owner's index of one model, over the socket.
type remoteIndex struct {
	c     *Client
	model string
}

func (r remoteIndex) Add(id string, vec []float32) error {
	_, err := r.c.call(request{Op: "index_add", Name: r.model, ID: id, Vec: vec}, nil)
	return err
}

func (r remoteIndex) Search(q []float32, k int) ([]Hit, error) {
	var out []Hit
	_, err := r.c.call(request{Op: "index_search", Name: r.model, Vec: q, K: k}, &out)
	return out, err
}

func (r remoteIndex) state() indexState {
	var out indexState
	_, _ = r.c.call(request{Op: "index_status", Name: r.model}, &out)
	return out
}

func (r remoteIndex) Len() int            { return r.state().Status.Vectors }
func (r remoteIndex) Status() IndexStatus { return r.state().Status }
func (r remoteIndex) Reloading() bool     { return r.state().Reloading }

// WaitLoaded polls the owner: a request that blocked there would hold this
// client's connection, which the run's other calls share.
func (r remoteIndex) WaitLoaded(ctx context.Context) error {
	for r.Reloading() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	return nil
}

// Claim is Store.Claim for this client's process: the owner ties the claim
// to this connection, so if this process dies its sessions become
// interrupted at once. A claim is renewed when the client reconnects.
func (c *Client) Claim(id string) (release func(), err error) { return c.claim(id, 0) }

// claimRenewed claims a session this process was running when its owner
// went away: the new owner marked it interrupted at its open, and the
// renewed claim turns it back to running.
func (c *Client) claimRenewed(id string) (func(), error) { return c.claim(id, 1) }

func (c *Client) claim(id string, renew int) (func(), error) {
	if _, err := c.call(request{Op: "claim", ID: id, K: renew}, nil); err != nil {
		return nil, err
	}
	c.claimMu.Lock()
	c.claims[id] = true
	c.claimMu.Unlock()
	return func() {
		c.claimMu.Lock()
		delete(c.claims, id)
		c.claimMu.Unlock()
		_, _ = c.call(request{Op: "release", ID: id}, nil)
	}, nil
}

// SendControl is Store.SendControl, through the owner.
func (c *Client) SendControl(id string, ctl Control) error {
	_, err := c.send(request{Op: "control", ID: id}, ctl, nil)
	return err
}
