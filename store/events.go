package store

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"go.etcd.io/bbolt"
)

// EventRecord is one persisted pipeline event. Data is the caller's encoding
// (JSON in practice); the store only keeps it ordered by Seq.
type EventRecord struct {
	Seq  int64
	Data []byte
	// Transient records (streamed text, usage ticks) are passed on to
	// watchers (Watch) and never stored.
	Transient bool `json:",omitempty"`
}

// seqKey encodes a sequence number big-endian so bbolt's byte order is
// numeric order.
func seqKey(seq int64) []byte {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], uint64(seq))
	return k[:]
}

// AppendEvents stores a batch of events for a session in one transaction (one
// fsync per batch, never per event). Seq must be positive; re-appending an
// existing Seq replaces it, which makes replaying a batch after an uncertain
// failure harmless. The batch is durable when this returns nil.
func (s *Store) AppendEvents(sessionID string, evs []EventRecord) error {
	if len(evs) == 0 {
		return nil
	}
	keep := make([]EventRecord, 0, len(evs))
	for _, ev := range evs {
		if ev.Seq <= 0 {
			return fmt.Errorf("store: event seq %d must be positive", ev.Seq)
		}
		if !ev.Transient {
			keep = append(keep, ev)
		}
	}
	if len(keep) == 0 { // nothing to commit: no transaction, no fsync
		s.feed.publish(Change{Session: sessionID, Events: evs})
		return nil
	}
	err := s.db.Update(func(tx *bbolt.Tx) error {
		b, err := tx.Bucket(bucketEvents).CreateBucketIfNotExists([]byte(sessionID))
		if err != nil {
			return err
		}
		// Events arrive in order, so pack pages fully instead of half-empty.
		b.FillPercent = 0.9
		for _, ev := range keep {
			data := ev.Data
			if data == nil {
				data = []byte{}
			}
			if err := b.Put(seqKey(ev.Seq), data); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		s.feed.publish(Change{Session: sessionID, Events: evs})
	}
	return err
}

// Events returns a session's events in Seq order (empty if it has none). The
// Data slices are copies, safe to keep.
func (s *Store) Events(sessionID string) ([]EventRecord, error) {
	var out []EventRecord
	err := s.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketEvents).Bucket([]byte(sessionID))
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			if len(k) != 8 {
				return fmt.Errorf("store: bad event key %x in session %s", k, sessionID)
			}
			out = append(out, EventRecord{
				Seq:  int64(binary.BigEndian.Uint64(k)),
				Data: bytes.Clone(v),
			})
			return nil
		})
	})
	return out, err
}

// LastSeq returns the highest stored Seq for a session, or 0 if none, so a
// resumed session continues numbering where the log ends.
func (s *Store) LastSeq(sessionID string) (int64, error) {
	var last int64
	err := s.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketEvents).Bucket([]byte(sessionID))
		if b == nil {
			return nil
		}
		k, _ := b.Cursor().Last()
		if k != nil {
			last = int64(binary.BigEndian.Uint64(k))
		}
		return nil
	})
	return last, err
}

// PutCheckpoint stores a named checkpoint for a session, replacing any
// previous one. Names are free-form bytes and may contain '/', which is how a
// stage keeps per-unit progress ("analyse/doi:10.1/x"); they are plain keys in
// the session's checkpoint bucket, not a hierarchy.
func (s *Store) PutCheckpoint(sessionID, name string, data []byte) error {
	if name == "" {
		return fmt.Errorf("store: empty checkpoint name")
	}
	if data == nil {
		data = []byte{}
	}
	return s.db.Update(func(tx *bbolt.Tx) error {
		b, err := tx.Bucket(bucketCheckpoints).CreateBucketIfNotExists([]byte(sessionID))
		if err != nil {
			return err
		}
		return b.Put([]byte(name), data)
	})
}

// Checkpoint returns a copy of a checkpoint and whether it exists.
func (s *Store) Checkpoint(sessionID, name string) ([]byte, bool, error) {
	var out []byte
	found := false
	err := s.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketCheckpoints).Bucket([]byte(sessionID))
		if b == nil {
			return nil
		}
		if v := b.Get([]byte(name)); v != nil {
			out, found = bytes.Clone(v), true
		}
		return nil
	})
	return out, found, err
}

// CheckpointNames lists a session's checkpoint names in byte order, so all
// units of one stage ("analyse/...") are adjacent.
func (s *Store) CheckpointNames(sessionID string) ([]string, error) {
	var out []string
	err := s.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketCheckpoints).Bucket([]byte(sessionID))
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, _ []byte) error {
			out = append(out, string(k))
			return nil
		})
	})
	return out, err
}
