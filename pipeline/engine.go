package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"os"
	"strconv"

	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/textkit"
)

// Engine starts and resumes runs. One Engine serves a process; its fields
// are set once before the first Start.
type Engine struct {
	// Store is the data dir: this process's own store or the owner's,
	// reached over its socket (store.Conn); the engine does not care which.
	Store store.DB
	LLM   llm.Backend
	// Sources are the sources that can be searched, by name (arxiv, ...).
	Sources map[string]search.Source
	// SourcesOff are the known sources this process cannot search, each
	// with what it needs ("needs MP_API_KEY …"), so that a person who asks
	// for one is told why it is not searched instead of meeting silence.
	SourcesOff map[string]string
	// Fetcher reads full text; nil means runs use abstracts only.
	Fetcher *search.Fetcher
	// Workers bounds parallel searches inside a stage. 0 means 3.
	Workers int
	// ModelParallel is how many chat requests the backend serves at once
	// (engine.go); 0 means DefaultModelParallel().
	ModelParallel int
	// Now is the clock (tests pin it); nil means time.Now.
	Now func() time.Time
	// Observe, when set, sees every event of every run, in order, just
	// before the run's consumer does: a second consumer of the event
	// channel (tracing). It is called on the run's delivery goroutine and
	// must not block.
	Observe func(Event)

	indexMu sync.Mutex
	indexes map[string]store.RunIndex // per embedding model, shared by runs

	slotsOnce sync.Once
	slots     chan struct{}

	liveMu   sync.Mutex
	live     map[string]*liveRun // sessions with a run in this process
	controls context.CancelFunc  // stops following controls (controls.go)
}

// liveRun is a session this process runs: its claim in the store, and the
// run once launched (controls from other processes reach it).
type liveRun struct {
	release func()
	run     *Run
}

// ErrRunning is returned when a session already has a run, in this
// process or in another researchtui on the same data dir.
var ErrRunning = errors.New("that session is already running")

// ErrNoPendingReview is returned by Decide when nothing waits for a decision.
var ErrNoPendingReview = errors.New("no review is waiting for a decision")

// Run is one running research session. Read Events until it is closed, then
// Wait for the outcome.
type Run struct {
	id     string
	em     *emitter
	cancel context.CancelCauseFunc
	done   chan struct{}

	mu       sync.Mutex
	pending  *ReviewRequest
	decision chan Decision

	session store.Session
	err     error

	cut      *cutoff   // WriteNow and the deadline
	deadline time.Time // zero: none
}

// ID is the session ID.
func (r *Run) ID() string { return r.id }

// Events is the run's event channel; it is closed when the run ends.
func (r *Run) Events() <-chan Event { return r.em.out }

// Cancel stops the run because the person asked: what finished stays
// checkpointed, and a review waiting for its decision is dropped (the
// session ends cancelled, and a resume reviews again).
func (r *Run) Cancel() { r.cancel(errCancelledByPerson) }

// Suspend stops the run because the program is leaving (quit, a client
// gone): like Cancel, except that a review waiting for its decision stays
// waiting, so the session is awaiting review and a resume asks again.
func (r *Run) Suspend() { r.cancel(nil) }

// errCancelledByPerson is the cause of a run's end by Cancel.
var errCancelledByPerson = errors.New("cancelled")

// Done is closed when the run has ended and its session is saved.
func (r *Run) Done() <-chan struct{} { return r.done }

// Wait blocks until the run ends and returns its stored session and the
// error that ended it, if any (context.Canceled for a cancelled run).
func (r *Run) Wait() (store.Session, error) {
	<-r.done
	return r.session, r.err
}

// Pending is the review waiting for a decision, or nil.
func (r *Run) Pending() *ReviewRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pending
}

// Decide answers the pending review. The first decision wins; a decision
// when none is pending is ErrNoPendingReview.
func (r *Run) Decide(d Decision) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending == nil {
		return ErrNoPendingReview
	}
	select {
	case r.decision <- d:
		r.pending = nil
		return nil
	default:
		return ErrNoPendingReview
	}
}

func (e *Engine) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

func (e *Engine) workers() int {
	if e.Workers > 0 {
		return e.Workers
	}
	return 3
}

// Start checks the options (unless Normalize already did), stores a new session and starts the run in the
// background. Errors wrapping ErrBadInput are the caller's to fix.
func (e *Engine) Start(ctx context.Context, opt runopts.Options) (*Run, error) {
	if !opt.IsNormalized() { // the CLI and MCP normalise first, to refuse bad input before opening anything
		if err := opt.Normalize(); err != nil {
			return nil, err
		}
	}
	if off := e.SourcesNotSearched(opt.Sources); !opt.AutoSources && len(opt.Sources) > 0 && len(off) == len(opt.Sources) {
		// Every source named is off: planning would lead to a search of
		// nothing and a failed run.
		return nil, fmt.Errorf("%w: no source to search: %s (see `researchtui doctor`; name others with --sources or the form's Sources row)", runopts.ErrBadInput, strings.Join(off, "; "))
	}
	if e.LLM != nil && opt.Backend == "" {
		opt.Backend = e.LLM.Name()
	}
	raw, err := json.Marshal(opt)
	if err != nil {
		return nil, err
	}
	sess := &store.Session{
		Question:   opt.Question,
		Title:      shortTitle(opt.Question),
		Status:     store.StatusRunning,
		CreatedAt:  e.now(),
		Model:      opt.Model,
		EmbedModel: opt.EmbedModel,
		Backend:    opt.Backend,
		Options:    raw,
	}
	if err := e.Store.CreateSession(sess); err != nil {
		return nil, fmt.Errorf("saving the new session: %w", err)
	}
	if err := e.claim(sess.ID); err != nil {
		return nil, err
	}
	return e.launch(ctx, *sess, opt, nil, 0)
}

// Resume continues an interrupted, cancelled, failed or awaiting-review
// session from its last checkpoint. A non-nil decision answers a pending
// review at once.
func (e *Engine) Resume(ctx context.Context, id string, decision *Decision) (*Run, error) {
	sess, err := e.Store.Session(id)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("%w: no session %q (see `researchtui sessions list`)", runopts.ErrBadInput, id)
		}
		return nil, err
	}
	fu, err := e.pendingFollowUp(id)
	if err != nil {
		return nil, err
	}
	if sess.Status == store.StatusCompleted && fu == nil {
		return nil, fmt.Errorf("%w: session %s is already completed (ask it a follow-up with `researchtui ask %s QUESTION`)", runopts.ErrBadInput, id, id)
	}
	var opt runopts.Options
	if err := json.Unmarshal(sess.Options, &opt); err != nil {
		return nil, fmt.Errorf("session %s has unreadable options: %w", id, err)
	}
	if err := opt.Normalize(); err != nil {
		return nil, err
	}
	if fu != nil {
		opt.Question = fu.Question
	}
	if err := e.claim(id); err != nil {
		return nil, err
	}
	lastSeq, err := e.Store.LastSeq(id)
	if err == nil {
		sess, err = e.Store.UpdateSession(id, func(s *store.Session) error {
			s.Status = store.StatusRunning
			s.Updating = fu != nil && fu.Update > 0
			s.Error = ""
			return nil
		})
	}
	if err != nil {
		e.release(id)
		return nil, err
	}
	return e.launchWith(ctx, sess, opt, decision, lastSeq, fu)
}

func (e *Engine) launch(parent context.Context, sess store.Session, opt runopts.Options, decision *Decision, lastSeq int64) (*Run, error) {
	return e.launchWith(parent, sess, opt, decision, lastSeq, nil)
}

// launchWith starts a run; fu, when set, makes it a follow-up (followup.go).
func (e *Engine) launchWith(parent context.Context, sess store.Session, opt runopts.Options, decision *Decision, lastSeq int64, fu *followUp) (*Run, error) {
	ctx, cancel := context.WithCancelCause(parent)
	r := &Run{
		id:       sess.ID,
		cancel:   cancel,
		done:     make(chan struct{}),
		decision: make(chan Decision, 1),
		cut:      newCutoff(),
	}
	r.em = newEmitter(sess.ID, lastSeq, e.now, func(evs []Event) error {
		return e.persistEvents(sess.ID, evs)
	}, e.Observe)
	r.em.sendLive() // streamed text reaches watchers in other processes
	o := &orchestrator{
		engine:   e,
		run:      r,
		opt:      opt,
		plan:     opt.DepthPlan(),
		session:  sess,
		decision: decision,
		usage:    usageFromStore(sess.Usage),
		started:  time.Now(),
	}
	if opt.MaxSteps > 0 {
		o.plan.MaxSteps = opt.MaxSteps
	}
	if fu != nil {
		o.follow = fu
		o.plan.SubQuestions = min(o.plan.SubQuestions, 2)
	}
	o.cut = r.cut
	if opt.Deadline > 0 {
		r.deadline = o.started.Add(opt.Deadline)
		t := time.AfterFunc(opt.Deadline, func() { r.cut.cut("skipped at the deadline") })
		defer func() { go func() { <-r.done; t.Stop() }() }()
	}
	e.attach(r)
	go func() {
		defer cancel(nil)
		s, err := o.execute(ctx)
		r.session, r.err = s, err
		r.em.close()
		e.release(sess.ID) // before Done: whoever waited may resume at once
		close(r.done)
	}()
	return r, nil
}

func (e *Engine) persistEvents(id string, evs []Event) error {
	raw, err := encodeEvents(evs)
	if err != nil {
		return err
	}
	recs := make([]store.EventRecord, len(evs))
	for i := range evs {
		recs[i] = store.EventRecord{Seq: evs[i].Seq, Data: raw[i], Transient: !evs[i].Type.lifecycle()}
	}
	return e.Store.AppendEvents(id, recs)
}

// claim marks a session as running in this process and claims it in the
// store, so no other researchtui on the data dir runs it at the same time
// and their controls (a review decision, a cancel) reach this one.
func (e *Engine) claim(id string) error {
	e.liveMu.Lock()
	defer e.liveMu.Unlock()
	if e.live == nil {
		e.live = map[string]*liveRun{}
	}
	if e.live[id] != nil {
		return fmt.Errorf("%w: %s", ErrRunning, id)
	}
	release, err := e.Store.Claim(id)
	if err != nil {
		var ce *store.ClaimedError
		if errors.As(err, &ce) {
			return fmt.Errorf("%w in another researchtui (pid %d): %s; watch it there or in the TUI, or wait for it to finish", ErrRunning, ce.PID, id)
		}
		return err
	}
	e.live[id] = &liveRun{release: release}
	if len(e.live) == 1 {
		e.followControls()
	}
	return nil
}

// attach makes a launched run reachable by controls.
func (e *Engine) attach(r *Run) {
	e.liveMu.Lock()
	defer e.liveMu.Unlock()
	if l := e.live[r.id]; l != nil {
		l.run = r
	}
}

func (e *Engine) release(id string) {
	e.liveMu.Lock()
	defer e.liveMu.Unlock()
	l := e.live[id]
	if l == nil {
		return
	}
	delete(e.live, id)
	l.release()
	if len(e.live) == 0 && e.controls != nil {
		e.controls()
		e.controls = nil
	}
}

// index returns the shared vector index for an embedding model: the
// store's persisted one, opened (mapped from its file, or rebuilt from the
// stored embeddings) the first time a run or search asks for it.
func (e *Engine) index(model string) (store.RunIndex, error) {
	e.indexMu.Lock()
	defer e.indexMu.Unlock()
	if e.indexes == nil {
		e.indexes = map[string]store.RunIndex{}
	}
	if ix, ok := e.indexes[model]; ok {
		return ix, nil
	}
	ix, err := e.Store.Vectors(model)
	if err != nil {
		return nil, err
	}
	e.indexes[model] = ix
	return ix, nil
}

// Events reads a session's persisted event log (its trace).
func (e *Engine) Events(id string) ([]Event, error) { return LoadEvents(e.Store, id) }

// shortTitle is a session's title made of a question or a planner's
// title: at most 80 runes, cut after a whole word.
func shortTitle(q string) string { return textkit.ClipWords(q, 80) }

func usageFromStore(u store.Usage) UsageTotals {
	return UsageTotals{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, EmbeddingTokens: u.EmbeddingTokens}
}

// PullProgress is one step of a model download.
type PullProgress = llm.PullProgress

// PullModel downloads a model through the backend (Ollama's pull), reporting
// progress; backends that cannot download models say so.
func (e *Engine) PullModel(ctx context.Context, model string, progress func(PullProgress)) error {
	p, ok := e.LLM.(llm.Puller)
	if !ok || e.LLM == nil {
		return fmt.Errorf("this model backend cannot download models; install %s on the server", model)
	}
	return p.Pull(ctx, model, progress)
}

// SourcesNotSearched says, for each requested source this process cannot
// search, why: "web: no engine: set …"; empty when all can be searched.
func (e *Engine) SourcesNotSearched(requested []string) []string {
	var out []string
	for _, name := range requested {
		name = strings.ToLower(strings.TrimSpace(name))
		if _, ok := e.Sources[name]; ok || name == "" {
			continue
		}
		why := e.SourcesOff[name]
		if why == "" {
			why = "not set up in this researchtui"
		}
		out = append(out, name+": "+why)
	}
	return out
}

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
