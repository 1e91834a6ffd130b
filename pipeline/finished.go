package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/researchtui/researchtui/store"
)

// What follow-ups and updates share: a finished session to grow, claimed
// and started with the follow-up it works on, and what it already holds.

// finishedSession is a finished session with its versions and options
// (adjusted and normalised), or why it cannot grow a version now.
func (e *Engine) finishedSession(id string, adjust func(*Options)) (store.Session, []Version, Options, error) {
	var opt Options
	sess, err := e.Store.Session(id)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return sess, nil, opt, fmt.Errorf("%w: no session %q (see `researchtui sessions list`)", ErrBadInput, id)
		}
		return sess, nil, opt, err
	}
	switch sess.Status {
	case store.StatusCompleted:
	case store.StatusAwaitingReview:
		return sess, nil, opt, fmt.Errorf("%w: session %s waits for a review decision; decide it first (`researchtui resume %s`)", ErrBadInput, id, id)
	case store.StatusRunning:
		return sess, nil, opt, fmt.Errorf("%w: session %s is running; wait until it has finished", ErrBadInput, id)
	default:
		return sess, nil, opt, fmt.Errorf("%w: session %s is %s; resume it first (`researchtui resume %s`)", ErrBadInput, id, sess.Status, id)
	}
	versions, err := LoadVersions(e.Store, id)
	if err != nil {
		return sess, nil, opt, err
	}
	if len(versions) == 0 {
		return sess, nil, opt, fmt.Errorf("%w: %w", ErrBadInput, ErrNotFinished)
	}
	if err := json.Unmarshal(sess.Options, &opt); err != nil {
		return sess, nil, opt, fmt.Errorf("session %s has unreadable options: %w", id, err)
	}
	if adjust != nil {
		adjust(&opt)
	}
	if err := opt.Normalize(); err != nil {
		return sess, nil, opt, err
	}
	return sess, versions, opt, nil
}

// startFollowUp claims the session, records the follow-up (or update) it
// works on and starts it.
func (e *Engine) startFollowUp(ctx context.Context, sess store.Session, opt Options, fu followUp) (*Run, error) {
	id := sess.ID
	if err := e.claim(id); err != nil {
		return nil, err
	}
	raw, _ := json.Marshal(fu)
	lastSeq, err := e.Store.LastSeq(id)
	if err == nil {
		sess, err = e.Store.CheckpointAndUpdate(id, checkpointFollowUp, raw, func(s *store.Session) error {
			s.Status = store.StatusRunning
			s.Updating = fu.Update > 0
			s.Error = ""
			return nil
		})
	}
	if err != nil {
		e.release(id)
		return nil, err
	}
	return e.launchFollowUp(ctx, sess, opt, fu, lastSeq)
}

// loadFinished loads what a finished session holds: its report, last
// version and plan, and (into o.st) its sources and analyses in the order
// of the report's numbers.
func (o *orchestrator) loadFinished() (parent Report, prev Version, plan Plan, err error) {
	versions, err := LoadVersions(o.engine.Store, o.session.ID)
	if err != nil {
		return parent, prev, plan, err
	}
	if len(versions) == 0 {
		return parent, prev, plan, ErrNotFinished
	}
	prev = versions[len(versions)-1]
	if parent, err = LoadReport(o.engine.Store, o.session.ID); err != nil {
		return parent, prev, plan, err
	}
	var found foundSet
	if _, err := o.loadRaw("research", &found); err != nil {
		return parent, prev, plan, err
	}
	o.st.Found = &found
	for _, src := range parent.Sources {
		var an Analysis
		if ok, _ := o.loadRaw("analyse/"+src.Key, &an); ok {
			an.SourceKey = src.Key
			o.st.Analyses = append(o.st.Analyses, an)
		} else {
			rec, _ := o.loadSource(src.Key)
			o.st.Analyses = append(o.st.Analyses, degradedAnalysis(rec, nil))
		}
	}
	_, err = o.loadRaw("plan", &plan)
	return parent, prev, plan, err
}

// loadRaw reads a checkpoint of the session itself, not of the follow-up.
func (o *orchestrator) loadRaw(name string, v any) (bool, error) {
	raw, ok, err := o.engine.Store.Checkpoint(o.session.ID, name)
	if err != nil || !ok {
		return false, err
	}
	return true, json.Unmarshal(raw, v)
}
