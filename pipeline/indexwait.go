package pipeline

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/researchtui/researchtui/store"
)

// indexPoll is how often a run waiting for its vector index looks at how
// far the load has got; indexProgressEvery how often it says so.
var (
	indexPoll          = 250 * time.Millisecond
	indexProgressEvery = 2 * time.Second
)

// indexAgent names the vector index in a run's events.
const indexAgent = "vector index"

// index returns the run's vector index (Engine.index). When the index
// cannot serve before its vectors are read back from the store (its file
// is missing, or damaged: found at open, or by the check that follows
// opening a file), the run waits for that, and the wait is shown: warning
// events say what is loaded and why while it lasts (every
// indexProgressEvery), and once more when it is done, so a headless run
// (run --json) and the TUI's run screen show it like other warnings. They
// are progress, not findings: the report's warnings leave them out.
func (o *orchestrator) index(ctx context.Context) (store.RunIndex, error) {
	model := o.opt.EmbedModel
	_, wasOpen := o.engine.Store.IndexStatus(model)
	var ix store.RunIndex
	var err error
	start := time.Now()
	o.watchIndex(ctx, model, func() { ix, err = o.engine.index(model) })
	if err != nil {
		return nil, err
	}
	loaded := !wasOpen
	if ix.Reloading() {
		// The check found the file damaged: searches wait for the reload.
		start, loaded = time.Now(), true
		o.watchIndex(ctx, model, func() { _ = ix.WaitLoaded(ctx) }) // its outcome is watched, not returned
	}
	if st := ix.Status(); loaded && st.Note != "" && st.Vectors > 0 && ctx.Err() == nil && o.indexDone.CompareAndSwap(false, true) {
		o.emit(Event{Type: Warning, Stage: StageIndex, Agent: indexAgent, Elapsed: time.Since(start),
			Message: fmt.Sprintf("vector index of %s: %s; %d vectors loaded in %s", model, st.Note, st.Vectors, time.Since(start).Round(100*time.Millisecond))})
	}
	return ix, nil
}

// watchIndex runs wait, and while it lasts says how far the index of model
// has got loading its vectors from the store. One watcher per run at a
// time: callers that wait together are shown once.
func (o *orchestrator) watchIndex(ctx context.Context, model string, wait func()) {
	if !o.indexWatch.CompareAndSwap(false, true) {
		wait()
		return
	}
	defer o.indexWatch.Store(false)
	done := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		tick := time.NewTicker(indexPoll)
		defer tick.Stop()
		var last time.Time
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			st, ok := o.engine.Store.IndexStatus(model)
			if !ok || st.Phase != "loading vectors from the store" || time.Since(last) < indexProgressEvery {
				continue
			}
			last = time.Now()
			msg := fmt.Sprintf("vector index of %s: %s: %s", model, indexWhy(st), st.Phase)
			if st.Total > 0 {
				msg += fmt.Sprintf(" %d%% (%d of %d chunks); searches wait for it", 100*st.Done/st.Total, st.Done, st.Total)
			}
			o.emit(Event{Type: Warning, Stage: StageIndex, Agent: indexAgent, Message: msg, Count: st.Done})
		}
	}()
	wait()
	close(done)
	<-watched
}

// indexWhy is why an index is loaded from the store.
func indexWhy(st store.IndexStatus) string {
	if st.Note != "" {
		return st.Note
	}
	return "rebuilding from the store"
}

// indexState is the orchestrator's bookkeeping for index.
type indexState struct {
	indexWatch atomic.Bool // a watchIndex is running
	indexDone  atomic.Bool // the load was reported
}
