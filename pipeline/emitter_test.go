package pipeline

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/researchtui/researchtui/llm"
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

// TestEventsAreValues (issue 49): what an emitter hands on and persists is
// what was emitted, whatever the emitter does afterwards with the source,
// plan, requests or prompt it pointed at. revise.go once set a source's
// state after emitting it while the persister encoded it: a race that
// -race caught on a loaded machine. Run with -race: the writes below race
// with the persister and the reader unless the emitter keeps copies.
func TestEventsAreValues(t *testing.T) {
	var mu sync.Mutex
	var persisted []Event
	e := newEmitter("s1", 0, time.Now, func(evs []Event) error {
		mu.Lock()
		defer mu.Unlock()
		for _, ev := range evs {
			if _, err := json.Marshal(ev); err != nil {
				t.Error(err)
			}
		}
		persisted = append(persisted, evs...)
		return nil
	})
	ref := &SourceRef{Key: "k", Title: "T", State: StateQueued}
	plan := &Plan{Title: "P", SubQuestions: []SubQuestion{{ID: "q1", Question: "Q?", Slots: []string{"methods"}}}}
	review := &ReviewRequest{Round: 1, Requests: []RevisionRequest{{ID: "r1", Text: "fix"}}, Plan: plan}
	temp := 0.1
	call := &Call{Operation: "chat", Temperature: &temp, Prompt: []llm.Message{{Role: "user", Content: "hi"}}}
	const n = 200
	go func() {
		for i := range n {
			e.emit(Event{Type: SourceProgress, Source: ref, Review: review, Call: call, Count: i})
			ref.State = StateAnalysed // what the emitter's caller does next
			plan.SubQuestions[0].Slots[0] = "changed"
			review.Requests[0].Text = "changed"
			call.Prompt[0].Content = "changed"
			*call.Temperature = 0.9
			ref.State = StateQueued
			plan.SubQuestions[0].Slots[0] = "methods"
			review.Requests[0].Text = "fix"
			call.Prompt[0].Content = "hi"
			*call.Temperature = 0.1
		}
	}()
	for i := 0; i < n; i++ {
		ev := <-e.out
		if ev.Source.State != StateQueued || ev.Review.Plan.SubQuestions[0].Slots[0] != "methods" ||
			ev.Review.Requests[0].Text != "fix" || ev.Call.Prompt[0].Content != "hi" || *ev.Call.Temperature != 0.1 {
			t.Fatalf("event %d changed after it was emitted: %+v %+v", i, *ev.Source, *ev.Review)
		}
	}
}
