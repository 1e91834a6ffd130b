package llm

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrAnswerBound is returned (wrapped) when a model's answer outgrows its
// size limit or stops producing text mid-stream: a server that streams
// forever, or hangs after its first words, must not hold memory or a run.
var ErrAnswerBound = errors.New("llm: the answer was cut off")

const (
	// answerSlack is how many times the most a model may write (its
	// num_predict, or else its whole context) an answer may reach in
	// bytes per token before it is cut: generous, since a token is 3–4
	// bytes of English and more of other scripts.
	answerSlack = 4 * 4
	// minAnswerBytes and maxAnswerBytes bound the limit whatever the
	// request says.
	minAnswerBytes = 64 << 10
	maxAnswerBytes = 16 << 20
	// fallbackAnswerTokens stands for the model's context when neither
	// num_predict nor num_ctx is known.
	fallbackAnswerTokens = 128 << 10
	// DefaultStallTimeout is how long a started answer may go without a
	// new token. The first token is not bounded by it: loading a model
	// and reading a long prompt take what they take (RequestTimeout).
	DefaultStallTimeout = 2 * time.Minute
)

// answerLimit is the most bytes of content and thinking one answer may
// stream: a few times what maxTokens (or else numCtx) allows.
func answerLimit(maxTokens, numCtx int) int {
	tokens := maxTokens
	if tokens <= 0 {
		tokens = numCtx
	}
	if tokens <= 0 {
		tokens = fallbackAnswerTokens
	}
	return min(max(tokens*answerSlack, minAnswerBytes), maxAnswerBytes)
}

// answerBound watches one streamed answer: its size against a limit, and
// the time since its last token against a stall timeout. It cancels the
// call's context with the reason when either is passed.
type answerBound struct {
	limit  int
	stall  time.Duration
	cancel context.CancelCauseFunc
	what   string // "ollama MODEL", for the message

	mu    sync.Mutex
	n     int
	timer *time.Timer
}

// boundAnswer derives the call's context from ctx and the bound on it;
// stop releases them.
func boundAnswer(ctx context.Context, what string, limit int, stall time.Duration) (context.Context, *answerBound, func()) {
	cctx, cancel := context.WithCancelCause(ctx)
	b := &answerBound{limit: limit, stall: stall, cancel: cancel, what: what}
	return cctx, b, func() {
		b.mu.Lock()
		if b.timer != nil {
			b.timer.Stop()
		}
		b.mu.Unlock()
		cancel(nil)
	}
}

// add counts one streamed piece. It returns the error that ends the call
// when the answer has outgrown its limit, and rearms the stall timer on
// every piece that carries text.
func (b *answerBound) add(content, thinking string) error {
	n := len(content) + len(thinking)
	if n == 0 {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n += n
	if b.n > b.limit {
		err := fmt.Errorf("%s: %w after %d KiB, more than a model of this request writes (limit %d KiB)", b.what, ErrAnswerBound, b.n>>10, b.limit>>10)
		b.cancel(err)
		return err
	}
	if b.stall <= 0 {
		return nil
	}
	if b.timer == nil {
		b.timer = time.AfterFunc(b.stall, func() {
			b.cancel(fmt.Errorf("%s: %w: no new token for %s", b.what, ErrAnswerBound, b.stall))
		})
	} else {
		b.timer.Reset(b.stall)
	}
	return nil
}
