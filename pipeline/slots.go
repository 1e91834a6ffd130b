package pipeline

import (
	"context"
	"os"
	"strconv"
)

// The model backend serves a fixed number of chat requests at once (Ollama:
// OLLAMA_NUM_PARALLEL, 1 by default; a pool of hosts adds theirs up).
// Sending more only queues them inside the server, where they can't be
// cancelled or reordered and where their waiting looks like work. So chat
// calls take a slot here first; agents that hold one do their work at once.

// DefaultModelParallel is how many chat requests a backend serves at once
// when nothing says otherwise: OLLAMA_NUM_PARALLEL when the environment
// sets it (the person runs the server with it), else Ollama's default, 1.
func DefaultModelParallel() int {
	if n, err := strconv.Atoi(os.Getenv("OLLAMA_NUM_PARALLEL")); err == nil && n > 0 {
		return n
	}
	return 1
}

func (e *Engine) modelSlots() chan struct{} {
	e.slotsOnce.Do(func() {
		n := e.ModelParallel
		if n <= 0 {
			n = DefaultModelParallel()
		}
		e.slots = make(chan struct{}, n)
	})
	return e.slots
}

// acquireModel waits for a free model slot; release it when the call ends.
func (e *Engine) acquireModel(ctx context.Context) (release func(), err error) {
	slots := e.modelSlots()
	select {
	case slots <- struct{}{}:
		return func() { <-slots }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
