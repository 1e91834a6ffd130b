package llm

import (
	"context"
	"fmt"

	"github.com/ollama/ollama/api"
)

// PullProgress is one step of a model download, as Ollama reports it.
type PullProgress struct {
	Status    string
	Completed int64 // bytes of the current layer
	Total     int64 // 0 while the step has no size
}

// Puller is a backend that can download models (Ollama can; an
// OpenAI-compatible server cannot).
type Puller interface {
	Pull(ctx context.Context, model string, progress func(PullProgress)) error
}

var _ Puller = (*Ollama)(nil)

// Pull downloads a model, reporting progress. It has no overall timeout:
// models are gigabytes; cancel ctx to stop. The model's cached /api/show
// answer is dropped so its capabilities are read afresh.
func (o *Ollama) Pull(ctx context.Context, model string, progress func(PullProgress)) error {
	err := o.client.Pull(ctx, &api.PullRequest{Model: model}, func(p api.ProgressResponse) error {
		if progress != nil {
			progress(PullProgress{Status: p.Status, Completed: p.Completed, Total: p.Total})
		}
		return nil
	})
	o.mu.Lock()
	delete(o.shows, model)
	o.mu.Unlock()
	if err != nil {
		return fmt.Errorf("pulling %s: %w", model, o.mapErr(ctx, nil, model, err))
	}
	return nil
}

// Pull downloads the model on every host of the pool, so any of them can
// serve it.
func (p *Pool) Pull(ctx context.Context, model string, progress func(PullProgress)) error {
	for _, h := range p.hosts {
		pl, ok := h.b.(Puller)
		if !ok {
			return fmt.Errorf("the backend at %s cannot download models", h.b.Host())
		}
		if err := pl.Pull(ctx, model, progress); err != nil {
			return err
		}
	}
	return nil
}
