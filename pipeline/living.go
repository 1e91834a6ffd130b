package pipeline

import (
	"errors"
	"fmt"
	"time"

	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/store"
)

// A living review's schedule: which finished sessions are followed, which
// are due for an update, and which have a version the person has not read.

// Follow marks a finished session to be updated every so often by
// `update --due` (every 0: no longer).
func Follow(st store.DB, id string, every time.Duration) (store.Session, error) {
	switch {
	case every < 0:
		return store.Session{}, fmt.Errorf("%w: the interval must be positive", runopts.ErrBadInput)
	case every > 0 && every < time.Hour:
		return store.Session{}, fmt.Errorf("%w: update at most hourly (the interval is %s): the literature does not change faster, and the APIs would rate-limit you", runopts.ErrBadInput, every)
	}
	sess, err := st.Session(id)
	if errors.Is(err, store.ErrNotFound) {
		return sess, fmt.Errorf("%w: no session %q (see `researchtui sessions list`)", runopts.ErrBadInput, id)
	} else if err != nil {
		return sess, err
	}
	if every > 0 {
		if vs, err := LoadVersions(st, id); err != nil || len(vs) == 0 || sess.Status == store.StatusFailed {
			return sess, fmt.Errorf("%w: session %s has no finished report to keep up to date", runopts.ErrBadInput, id)
		}
	}
	return st.UpdateSession(id, func(s *store.Session) error {
		if s.Living == nil {
			s.Living = &store.Living{}
		}
		s.Living.Every = every
		return nil
	})
}

// Due lists the followed sessions whose time has come at now, oldest check
// first: those never checked count from their last version.
func Due(st store.Reader, now time.Time) ([]store.Session, error) {
	all, err := st.ListSessions()
	if err != nil {
		return nil, err
	}
	var due []store.Session
	for _, s := range all {
		if s.Living == nil || s.Living.Every <= 0 {
			continue
		}
		if s.Status != store.StatusCompleted {
			// An update killed on the way (a reboot) leaves the session
			// interrupted: it is still due, and the update continues it.
			if fu, err := pendingFollowUp(st, s.ID); err != nil || fu == nil || fu.Update == 0 {
				continue
			}
		}
		if !now.Before(LastChecked(st, s).Add(s.Living.Every)) {
			due = append(due, s)
		}
	}
	return due, nil
}

// LastChecked is when the session's literature was last looked at: its
// last update check, or its last version.
func LastChecked(st store.Reader, s store.Session) time.Time {
	if s.Living != nil && !s.Living.LastChecked.IsZero() {
		return s.Living.LastChecked
	}
	if vs, err := LoadVersions(st, s.ID); err == nil && len(vs) > 0 {
		return vs[len(vs)-1].CreatedAt
	}
	return s.UpdatedAt
}

// MarkRead records that the person opened the version an update wrote
// (no write when there is none unread).
func MarkRead(st store.DB, id string) error {
	sess, err := st.Session(id)
	if err != nil || sess.Living == nil || sess.Living.Unread == 0 {
		return err
	}
	_, err = st.UpdateSession(id, func(s *store.Session) error {
		if s.Living != nil { // read again: another process may have changed it
			s.Living.Unread = 0
		}
		return nil
	})
	return err
}
