package pipeline

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// An agent streaming far faster than anyone reads must never block, and
// every lifecycle event must still arrive, in order, after it.
func TestEmitterNeverBlocksAgentsAndKeepsLifecycleOrder(t *testing.T) {
	var mu sync.Mutex
	var persisted []Event
	e := newEmitter("s1", 10, time.Now, func(evs []Event) error {
		mu.Lock()
		defer mu.Unlock()
		persisted = append(persisted, evs...)
		return nil
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 60000; i++ {
			e.delta(StageWrite, "writer", "tok ", "")
			if i%6000 == 0 {
				e.emit(Event{Type: Warning, Message: "w" + string(rune('0'+i/6000))})
			}
		}
	}()
	// 60,000 deltas are far more than any buffer holds; the generous wait
	// only tells a blocked producer from a slow machine under -race.
	select {
	case <-done: // nobody has read a single event yet
	case <-time.After(2 * time.Minute):
		t.Fatal("a producer blocked on a consumer that does not read")
	}
	e.emit(Event{Type: RunFinished})
	go e.close()
	var got []Event
	var lastSeq int64 = 10
	text := 0
	for ev := range e.out {
		if ev.Seq <= lastSeq {
			t.Fatalf("seq %d after %d", ev.Seq, lastSeq)
		}
		lastSeq = ev.Seq
		if ev.Type == TokenDelta {
			text += len(ev.Text)
			continue
		}
		got = append(got, ev)
	}
	if len(got) != 11 || got[10].Type != RunFinished {
		t.Fatalf("%d lifecycle events delivered, last %v", len(got), got[len(got)-1].Type)
	}
	for i := 0; i < 10; i++ {
		if got[i].Message != "w"+string(rune('0'+i)) {
			t.Errorf("event %d is %q", i, got[i].Message)
		}
	}
	if text == 0 || text > 60000*4 {
		t.Errorf("%d bytes of streamed text delivered", text)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(persisted) != 11 {
		t.Errorf("%d events persisted, want the 11 lifecycle ones", len(persisted))
	}
	for _, ev := range persisted {
		if ev.Type == TokenDelta || strings.TrimSpace(ev.SessionID) != "s1" {
			t.Errorf("persisted %+v", ev)
		}
	}
}
