package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"go.etcd.io/bbolt"
)

// Session statuses. A session is "running" only while the process holding
// the lock works on it; MarkInterrupted turns leftovers from a crash into
// "interrupted" so the UI can offer to resume them.
const (
	StatusRunning        = "running"
	StatusAwaitingReview = "awaiting_review"
	StatusCompleted      = "completed"
	StatusFailed         = "failed"
	StatusCancelled      = "cancelled"
	StatusInterrupted    = "interrupted"
)

// Usage counts tokens spent by a session, for the cost line and budgets.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	EmbeddingTokens  int `json:"embedding_tokens"`
}

// Session is one research question and its outcome. It is stored as JSON so
// the file stays inspectable and fields can be added without a migration.
type Session struct {
	ID         string          `json:"id"`
	Question   string          `json:"question"`
	Title      string          `json:"title"`
	Status     string          `json:"status"`
	CreatedAt  time.Time       `json:"created_at"`
	UpdatedAt  time.Time       `json:"updated_at"`
	Model      string          `json:"model"`
	EmbedModel string          `json:"embed_model"`
	Backend    string          `json:"backend"`
	Options    json.RawMessage `json:"options"`
	Usage      Usage           `json:"usage"`
	CostUSD    float64         `json:"cost_usd"`
	// Report is the final Markdown. It lives in its own bucket so that
	// ListSessions never reads it; Session(id) fills it in.
	Report string `json:"report,omitempty"`
	Error  string `json:"error,omitempty"`
	// Stage is the last pipeline stage reached, for resume and the list view.
	Stage    string `json:"stage,omitempty"`
	Warnings int    `json:"warnings,omitempty"`
	// Steps counts the model calls made so far, so a step budget holds
	// across resumes.
	Steps         int             `json:"steps,omitempty"`
	PendingReview json.RawMessage `json:"pending_review,omitempty"`
	// Living is the session's living-review state (pipeline/update.go),
	// nil until it is followed or updated. It lives on the session so the
	// list shows it without reading checkpoints.
	Living *Living `json:"living,omitempty"`
	// Updating is set while an update runs on the session's finished
	// report: a process that dies mid-update leaves the session completed
	// (the report stands; the next update continues), not interrupted.
	Updating bool `json:"updating,omitempty"`
}

// Living is what a living review needs between its updates.
type Living struct {
	// Every is how often `update --due` updates the session; 0: it is not
	// followed.
	Every       time.Duration `json:"every,omitempty"`
	LastChecked time.Time     `json:"last_checked,omitempty"`
	LastNew     int           `json:"last_new"`         // new works the last check kept
	Checks      int           `json:"checks,omitempty"` // checks done
	// Unread is the version the last update wrote, until the person opens
	// it (0: none).
	Unread int `json:"unread,omitempty"`
}

// cutOff is the status of a running session whose process is gone:
// interrupted (resumable), or completed again when only an update of its
// finished report was running.
func cutOff(s Session) string {
	if s.Updating {
		return StatusCompleted
	}
	return StatusInterrupted
}

// CreateSession stores a new session. It assigns ID (from CreatedAt) when
// empty and sets CreatedAt/UpdatedAt when zero, writing them back into s. An
// existing ID is an error rather than a silent overwrite.
func (s *Store) CreateSession(sess *Session) error {
	now := time.Now().UTC()
	if sess.CreatedAt.IsZero() {
		sess.CreatedAt = now
	}
	if sess.UpdatedAt.IsZero() {
		sess.UpdatedAt = sess.CreatedAt
	}
	if sess.ID == "" {
		sess.ID = NewID(sess.CreatedAt)
	}
	meta, err := encodeSession(sess)
	if err != nil {
		return err
	}
	id := []byte(sess.ID)
	err = s.db.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketSessions)
		if b.Get(id) != nil {
			return fmt.Errorf("store: session %s already exists", sess.ID)
		}
		if err := b.Put(id, meta); err != nil {
			return err
		}
		return putReport(tx, id, sess.Report)
	})
	if err == nil {
		s.feed.publish(Change{Session: sess.ID, Updated: true})
	}
	return err
}

// Session returns the session with its Report, or ErrNotFound.
func (s *Store) Session(id string) (Session, error) {
	var sess Session
	err := s.db.View(func(tx *bbolt.Tx) error {
		var err error
		sess, err = getSession(tx, []byte(id), true)
		return err
	})
	return sess, err
}

// UpdateSession reads the session, lets fn modify it and writes it back in one
// transaction, so concurrent updaters (pipeline and UI) never lose each
// other's fields. UpdatedAt is set to now; the ID cannot be changed. If fn
// returns an error nothing is written and that error is returned.
func (s *Store) UpdateSession(id string, fn func(*Session) error) (Session, error) {
	var out Session
	err := s.db.Update(func(tx *bbolt.Tx) error {
		var err error
		out, err = updateSession(tx, id, fn)
		return err
	})
	if err == nil {
		s.feed.publish(Change{Session: id, Updated: true})
	}
	return out, err
}

// CheckpointAndUpdate stores a checkpoint and updates its session in one
// transaction: a stage's output and the usage that paid for it are saved
// together or not at all, at the cost of one commit instead of two.
func (s *Store) CheckpointAndUpdate(id, name string, data []byte, fn func(*Session) error) (Session, error) {
	if name == "" {
		return Session{}, fmt.Errorf("store: empty checkpoint name")
	}
	if data == nil {
		data = []byte{}
	}
	var out Session
	err := s.db.Update(func(tx *bbolt.Tx) error {
		b, err := tx.Bucket(bucketCheckpoints).CreateBucketIfNotExists([]byte(id))
		if err != nil {
			return err
		}
		if err := b.Put([]byte(name), data); err != nil {
			return err
		}
		out, err = updateSession(tx, id, fn)
		return err
	})
	if err == nil {
		s.feed.publish(Change{Session: id, Updated: true})
	}
	return out, err
}

func updateSession(tx *bbolt.Tx, id string, fn func(*Session) error) (Session, error) {
	var out Session
	err := func() error {
		key := []byte(id)
		sess, err := getSession(tx, key, true)
		if err != nil {
			return err
		}
		if err := fn(&sess); err != nil {
			return err
		}
		sess.ID = id
		sess.UpdatedAt = time.Now().UTC()
		meta, err := encodeSession(&sess)
		if err != nil {
			return err
		}
		if err := tx.Bucket(bucketSessions).Put(key, meta); err != nil {
			return err
		}
		if err := putReport(tx, key, sess.Report); err != nil {
			return err
		}
		out = sess
		return nil
	}()
	return out, err
}

// ListSessions returns every session newest first (by CreatedAt, then ID),
// without Report: the list view needs titles and statuses, and reports can be
// tens of kilobytes each.
func (s *Store) ListSessions() ([]Session, error) {
	var out []Session
	err := s.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketSessions)
		c := b.Cursor()
		// Keys are time-ordered IDs, so walking backwards is already (almost
		// always) newest first and the sort below has little to do.
		for k, v := c.Last(); k != nil; k, v = c.Prev() {
			sess, err := decodeSession(v)
			if err != nil {
				return fmt.Errorf("store: session %s: %w", k, err)
			}
			out = append(out, sess)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool { return newerSession(out[i], out[j]) })
	return out, nil
}

// SessionPage is one page of the session list: the newest Limit sessions
// of a status ("" for any) and how many there are in all.
type SessionPage struct {
	Sessions []Session `json:"sessions"`
	Total    int       `json:"total"`
}

// ListSessionPage returns the newest limit sessions with the given status
// ("" for any), newest first as ListSessions orders them, and the count of
// all that match. Each session is decoded and let go, so a caller asking
// for twenty holds twenty however many thousands are stored (an MCP client
// polling list_sessions used to make the server hold them all).
func (s *Store) ListSessionPage(status string, limit int) (SessionPage, error) {
	page := SessionPage{Sessions: []Session{}}
	err := s.db.View(func(tx *bbolt.Tx) error {
		c := tx.Bucket(bucketSessions).Cursor()
		for k, v := c.Last(); k != nil; k, v = c.Prev() {
			sess, err := decodeSession(v)
			if err != nil {
				return fmt.Errorf("store: session %s: %w", k, err)
			}
			if status != "" && sess.Status != status {
				continue
			}
			page.Total++
			page.Sessions = keepNewest(page.Sessions, sess, limit)
		}
		return nil
	})
	return page, err
}

// SessionStamp is what says whether a session changed: its ID, status and
// last update.
type SessionStamp struct {
	ID        string    `json:"id"`
	Status    string    `json:"status"`
	UpdatedAt time.Time `json:"updated_at"`
}

// SessionStamps lists every session's stamp, newest ID first, decoding
// only those three fields: a caller that keeps per-session results (a
// knowledge search's read-by) learns what changed without holding every
// session.
func (s *Store) SessionStamps() ([]SessionStamp, error) {
	var out []SessionStamp
	err := s.db.View(func(tx *bbolt.Tx) error {
		c := tx.Bucket(bucketSessions).Cursor()
		for k, v := c.Last(); k != nil; k, v = c.Prev() {
			var st SessionStamp
			if err := json.Unmarshal(v, &st); err != nil {
				return fmt.Errorf("store: session %s: %w", k, err)
			}
			out = append(out, st)
		}
		return nil
	})
	return out, err
}

// keepNewest inserts sess into kept (newest first, at most limit long),
// dropping the oldest when full.
func keepNewest(kept []Session, sess Session, limit int) []Session {
	if limit <= 0 {
		return kept
	}
	i := sort.Search(len(kept), func(i int) bool { return newerSession(sess, kept[i]) })
	if i == limit {
		return kept
	}
	if len(kept) < limit {
		kept = append(kept, Session{})
	}
	copy(kept[i+1:], kept[i:len(kept)-1])
	kept[i] = sess
	return kept
}

// newerSession is the list's order: later CreatedAt first, then larger ID.
func newerSession(a, b Session) bool {
	if !a.CreatedAt.Equal(b.CreatedAt) {
		return a.CreatedAt.After(b.CreatedAt)
	}
	return a.ID > b.ID
}

// DeleteSession removes the session, its report, events and checkpoints.
// Sources, documents, chunks and embeddings stay: they are shared knowledge
// that other sessions may cite. The session's own data is removed even when
// the session record is already gone; ErrNotFound is returned in that case.
func (s *Store) DeleteSession(id string) error {
	key := []byte(id)
	found := false
	err := s.db.Update(func(tx *bbolt.Tx) error {
		sb := tx.Bucket(bucketSessions)
		found = sb.Get(key) != nil
		if err := sb.Delete(key); err != nil {
			return err
		}
		if err := tx.Bucket(bucketReports).Delete(key); err != nil {
			return err
		}
		for _, name := range [][]byte{bucketEvents, bucketCheckpoints} {
			parent := tx.Bucket(name)
			if parent.Bucket(key) == nil {
				continue
			}
			if err := parent.DeleteBucket(key); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil && !found {
		return ErrNotFound
	}
	if err == nil {
		s.feed.publish(Change{Session: id, Updated: true})
	}
	return err
}

// MarkInterrupted turns every "running" session into "interrupted" and
// returns how many it changed. Only the process holding the lock may call it,
// at startup: any session still running then was left by a process that
// crashed or was killed.
func (s *Store) MarkInterrupted() (int, error) {
	n := 0
	err := s.db.Update(func(tx *bbolt.Tx) error {
		n = 0
		b := tx.Bucket(bucketSessions)
		// Collect first: bbolt forbids modifying a bucket during ForEach.
		var changed []Session
		err := b.ForEach(func(k, v []byte) error {
			sess, err := decodeSession(v)
			if err != nil {
				return fmt.Errorf("store: session %s: %w", k, err)
			}
			if sess.Status == StatusRunning && !s.feed.claimed(sess.ID) {
				changed = append(changed, sess)
			}
			return nil
		})
		if err != nil {
			return err
		}
		now := time.Now().UTC()
		for i := range changed {
			changed[i].Status = cutOff(changed[i])
			changed[i].Updating = false
			changed[i].UpdatedAt = now
			meta, err := encodeSession(&changed[i])
			if err != nil {
				return err
			}
			if err := b.Put([]byte(changed[i].ID), meta); err != nil {
				return err
			}
		}
		n = len(changed)
		return nil
	})
	return n, err
}

// putSession writes a session a client read, changed and sent back
// (Client.UpdateSession), with a checkpoint when name is set, in one
// transaction. It refuses when the stored record changed since the client
// read it (UpdatedAt differs): the client reads again and reapplies its
// change, so concurrent updaters never lose each other's fields.
func (s *Store) putSession(sess Session, readAt time.Time, name string, data []byte) (Session, error) {
	var out Session
	err := s.db.Update(func(tx *bbolt.Tx) error {
		if name != "" {
			b, err := tx.Bucket(bucketCheckpoints).CreateBucketIfNotExists([]byte(sess.ID))
			if err != nil {
				return err
			}
			if data == nil {
				data = []byte{}
			}
			if err := b.Put([]byte(name), data); err != nil {
				return err
			}
		}
		var err error
		out, err = updateSession(tx, sess.ID, func(cur *Session) error {
			if !cur.UpdatedAt.Equal(readAt) {
				return errStale
			}
			*cur = sess
			return nil
		})
		return err
	})
	if err == nil {
		s.feed.publish(Change{Session: sess.ID, Updated: true})
	}
	return out, err
}

// errStale says a client's read-modify-write lost a race; it retries.
var errStale = errors.New("store: the session changed meanwhile")

// encodeSession marshals s without its Report.
func encodeSession(s *Session) ([]byte, error) {
	c := *s
	c.Report = ""
	data, err := json.Marshal(&c)
	if err != nil {
		return nil, fmt.Errorf("store: encode session: %w", err)
	}
	return data, nil
}

// decodeSession unmarshals a stored session. It copies out of the mmap (json
// does) and maps a stored JSON null back to a nil RawMessage so round trips
// compare equal.
func decodeSession(v []byte) (Session, error) {
	var sess Session
	if err := json.Unmarshal(v, &sess); err != nil {
		return Session{}, err
	}
	if string(sess.Options) == "null" {
		sess.Options = nil
	}
	if string(sess.PendingReview) == "null" {
		sess.PendingReview = nil
	}
	return sess, nil
}

// getSession loads one session, optionally with its report.
func getSession(tx *bbolt.Tx, key []byte, withReport bool) (Session, error) {
	v := tx.Bucket(bucketSessions).Get(key)
	if v == nil {
		return Session{}, fmt.Errorf("session %s: %w", key, ErrNotFound)
	}
	sess, err := decodeSession(v)
	if err != nil {
		return Session{}, fmt.Errorf("store: session %s: %w", key, err)
	}
	if withReport {
		sess.Report = string(tx.Bucket(bucketReports).Get(key))
	}
	return sess, nil
}

// putReport stores the report, or deletes it when empty.
func putReport(tx *bbolt.Tx, key []byte, report string) error {
	b := tx.Bucket(bucketReports)
	if report == "" {
		return b.Delete(key)
	}
	return b.Put(key, []byte(report))
}
