package pipeline

import (
	"encoding/json"
	"sync"
	"time"
)

// deltaInterval is how often streamed text is coalesced into one TokenDelta
// per agent: ~30 frames a second is smooth to watch and cheap to draw.
const deltaInterval = 33 * time.Millisecond

// persistInterval bounds how long a lifecycle event may wait before it is
// committed; bbolt commits cost milliseconds, so they are batched.
const persistInterval = 100 * time.Millisecond

// maxPendingDelta caps the text kept per agent while a consumer is slow: the
// newest text wins, the oldest is dropped, an agent never blocks.
const maxPendingDelta = 64 << 10

// emitter is the run's event spine. Agents call emit and delta from any
// goroutine and never block: lifecycle events go to an unbounded queue that a
// pump delivers in order on out, and to a batch that is persisted; token
// deltas are merged per agent and flushed on a tick, and are held back (still
// merging) while the consumer is behind.
type emitter struct {
	sessionID string
	now       func() time.Time
	persist   func(evs []Event) error // may be nil
	flushMu   sync.Mutex              // one persist at a time, in order

	mu           sync.Mutex
	seq          int64
	queue        []Event
	unsaved      []Event
	deltas       map[string]*Event
	order        []string // agents with pending deltas, in arrival order
	closing      bool
	wake         chan struct{}
	out          chan Event
	done         chan struct{}
	onPersistErr func(error)
	// observe sees each event just before it is delivered (Engine.Observe).
	observe func(Event)
	// live: persist also receives the streamed text and usage ticks, in
	// order with the rest, for watchers in other processes (the store
	// passes them on without keeping them). Set before the first event.
	live bool
}

// observe, when not nil, sees each event just before it is delivered.
func newEmitter(sessionID string, lastSeq int64, now func() time.Time, persist func([]Event) error, observe ...func(Event)) *emitter {
	e := &emitter{
		sessionID: sessionID,
		now:       now,
		persist:   persist,
		seq:       lastSeq,
		deltas:    map[string]*Event{},
		wake:      make(chan struct{}, 1),
		out:       make(chan Event, 64),
		done:      make(chan struct{}),
	}
	if len(observe) > 0 {
		e.observe = observe[0]
	}
	go e.pump()
	go e.persister()
	return e
}

// sendLive makes persist receive the live events too (the live field).
func (e *emitter) sendLive() {
	e.mu.Lock()
	e.live = true
	e.mu.Unlock()
}

// emit records a lifecycle (or usage) event. It never blocks.
func (e *emitter) emit(ev Event) Event {
	ev = ev.detached()
	e.mu.Lock()
	if e.closing {
		e.mu.Unlock()
		return ev
	}
	if ev.Type.lifecycle() {
		e.flushDeltasLocked() // text streamed before an event is shown before it
	}
	ev = e.stampLocked(ev)
	e.queue = append(e.queue, ev)
	if ev.Type.lifecycle() || e.live {
		e.unsaved = append(e.unsaved, ev)
	}
	e.mu.Unlock()
	e.poke()
	return ev
}

// delta adds streamed text for an agent; it is delivered coalesced.
func (e *emitter) delta(stage Stage, agent, text, thinking string) {
	if text == "" && thinking == "" {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closing {
		return
	}
	d, ok := e.deltas[agent]
	if !ok {
		d = &Event{Type: TokenDelta, Stage: stage, Agent: agent}
		e.deltas[agent] = d
		e.order = append(e.order, agent)
	}
	d.Text = capTail(d.Text+text, maxPendingDelta)
	d.Thinking = capTail(d.Thinking+thinking, maxPendingDelta)
}

func capTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

func (e *emitter) stampLocked(ev Event) Event {
	e.seq++
	ev.Seq = e.seq
	ev.SessionID = e.sessionID
	if ev.Time.IsZero() {
		ev.Time = e.now()
	}
	return ev
}

func (e *emitter) flushDeltasLocked() {
	for _, agent := range e.order {
		d := e.stampLocked(*e.deltas[agent])
		e.queue = append(e.queue, d)
		if e.live {
			e.unsaved = append(e.unsaved, d)
		}
		delete(e.deltas, agent)
	}
	e.order = e.order[:0]
}

func (e *emitter) poke() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// flush persists every lifecycle event emitted so far (with the live
// ones, when live). The orchestrator
// calls it at checkpoints so the event log never lags a stage's output.
func (e *emitter) flush() {
	e.flushMu.Lock()
	defer e.flushMu.Unlock()
	e.mu.Lock()
	batch := e.unsaved
	e.unsaved = nil
	e.mu.Unlock()
	if len(batch) == 0 || e.persist == nil {
		return
	}
	if err := e.persist(batch); err != nil && e.onPersistErr != nil {
		e.onPersistErr(err)
	}
}

// close delivers what is queued, persists it, and closes the channel.
func (e *emitter) close() {
	e.mu.Lock()
	if e.closing {
		e.mu.Unlock()
		<-e.done
		return
	}
	e.flushDeltasLocked()
	e.closing = true
	e.mu.Unlock()
	e.flush()
	e.poke()
	<-e.done
}

// pump delivers queued events in order. Token deltas are released on a
// tick, and only while the consumer keeps up (a short queue).
func (e *emitter) pump() {
	defer close(e.done)
	defer close(e.out)
	tick := time.NewTicker(deltaInterval)
	defer tick.Stop()
	for {
		select {
		case <-e.wake:
		case <-tick.C:
			e.mu.Lock()
			if len(e.queue) < cap(e.out) {
				e.flushDeltasLocked()
			}
			e.mu.Unlock()
		}
		for {
			e.mu.Lock()
			if len(e.queue) == 0 {
				closing := e.closing
				e.mu.Unlock()
				if closing {
					return
				}
				break
			}
			ev := e.queue[0]
			e.queue = e.queue[1:]
			e.mu.Unlock()
			if e.observe != nil {
				e.observe(ev)
			}
			e.out <- ev
		}
	}
}

// persister commits lifecycle events in batches, independently of how fast
// the consumer reads them.
func (e *emitter) persister() {
	tick := time.NewTicker(persistInterval)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			e.flush()
		case <-e.done:
			e.flush()
			return
		}
	}
}

// encodeEvents turns events into their persisted form.
func encodeEvents(evs []Event) ([][]byte, error) {
	out := make([][]byte, 0, len(evs))
	for _, ev := range evs {
		b, err := json.Marshal(ev)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}
