package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/store"
)

// orchestrator runs one session through the stages. It is an explicit state
// machine: each stage loads its checkpoint if a previous attempt finished
// it, otherwise does its work and checkpoints the result. Only the
// orchestrator decides that a run failed; agents degrade and warn.
type orchestrator struct {
	engine   *Engine
	run      *Run
	opt      runopts.Options
	plan     runopts.DepthPlan
	session  store.Session
	decision *Decision // a decision given to Resume for a pending review
	usage    UsageTotals
	started  time.Time
	meter    *meter

	fetchFailures failureTally
	deadHosts     search.HostSet // download hosts found unreachable in this run
	// searchFailed are the sources a search failed on in this process (an
	// error, not an empty answer), for the Method's words.
	searchFailed sync.Map
	cut          *cutoff // the deadline or "write now": stop starting new work

	warnMu   sync.Mutex // agents warn from many goroutines
	phaseMu  sync.Mutex
	phase    Stage // the stage a run that stops now stopped in (stageStart)
	warnings []string

	st       runState
	subqVecs [][]float32 // sub-question embeddings, when already computed

	// follow, when set, makes this run a follow-up question inside a
	// finished session (followup.go); its checkpoints are prefixed.
	follow *followUp
	// doneMsg, when set, is what the run's last event says instead of
	// "report ready" (an update that found nothing new).
	doneMsg string
	// outcome is the last event's Outcome when the run left the report
	// as it was (OutcomeNothingNew).
	outcome string
	// cutSaid holds the sources whose over-long metadata a warning has
	// named (research.go), so it is said once.
	cutSaid sync.Map
	// updated is an update's check so far, for the counts of the version
	// it writes (update.go).
	updated *UpdateCheck

	indexState // waiting for the vector index (index.go)

	analysisCost analysisCost // what analyses cost, to price the screen's savings
	verdicts     verdictBook  // the screen's verdict on every work it judged (screening.go)
	screenBlind  atomic.Bool  // the screen judged every one of many candidates on topic (screenFallback)
}

// unitName is a checkpoint's name in the store: a follow-up's stages live
// under their own prefix, while a source's read and analysis are the
// session's, whichever run did them.
func (o *orchestrator) unitName(name string) string {
	if o.follow == nil || strings.HasPrefix(name, "read/") || strings.HasPrefix(name, "analyse/") {
		return name
	}
	if o.follow.Update > 0 {
		return fmt.Sprintf("up%d/%s", o.follow.Update, name) // an update may write no version: its check numbers it
	}
	return fmt.Sprintf("fu%d/%s", o.follow.N, name)
}

// runState is everything the stages produce; each field is checkpointed.
type runState struct {
	Plan       *Plan
	PlanReview *PlanReview // what the person did with the plan (nil: not asked)
	Found      *foundSet
	Contexts   map[string][]ContextChunk // sub-question ID → retrieved chunks
	Analyses   []Analysis                // in citation order
	Rounds     []RoundSummary            // the research rounds
	Unread     []string                  // sources cut short on purpose, with why
	Ledger     *flowLedger               // what the PRISMA flow needs besides the candidates
	Drafts     []string
	// Verifications are the verifier's records, one per draft verified.
	Verifications []Verification
	Reviews       []ReviewRequest
	Decisions     []Decision
}

func (o *orchestrator) emit(ev Event) Event {
	o.analysisCost.observe(ev)
	return o.run.em.emit(ev)
}

func (o *orchestrator) warn(stage Stage, agent, format string, args ...any) {
	o.warnOutcome(stage, agent, "", format, args...)
}

// warnOutcome is warn with what the warning means for the report
// (Event.Outcome), for the code that branches on it.
func (o *orchestrator) warnOutcome(stage Stage, agent, outcome, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	o.warnMu.Lock()
	o.warnings = append(o.warnings, msg)
	o.warnMu.Unlock()
	o.emit(Event{Type: Warning, Stage: stage, Agent: agent, Message: msg, Outcome: outcome})
}

// warningList is a copy of the warnings so far.
func (o *orchestrator) warningList() []string {
	o.warnMu.Lock()
	defer o.warnMu.Unlock()
	return append([]string(nil), o.warnings...)
}

// execute runs the session to its end and returns the stored session.
func (o *orchestrator) execute(ctx context.Context) (store.Session, error) {
	o.meter = &meter{model: o.opt.Model, usage: o.usage, steps: o.session.Steps, maxSteps: o.plan.MaxSteps, budget: o.opt.BudgetTokens}
	started := Event{Type: RunStarted, Message: o.opt.Question}
	if o.follow != nil {
		started.Count = o.follow.N // a follow-up's version: a new run on the session, not a resume
		if o.follow.Update > 0 {
			started.Update = o.follow.Update
			started.Message = fmt.Sprintf("update %d: searching again for work since %s", o.follow.Update, o.follow.Since.Format("2 January 2006"))
		}
	}
	o.emit(started)
	if o.engine.Fetcher != nil {
		// Start the PDF reader while the planner thinks: the first start
		// compiles pdfium (seconds of CPU), later ones load it from the
		// cache; either way the first PDF downloaded should not wait.
		go func() { _, _ = search.StartPDFReader() }() // a failure shows at the first PDF read
	}
	var err error
	switch {
	case o.follow != nil && o.follow.Update > 0:
		err = o.updateStages(ctx)
	case o.follow != nil:
		err = o.followUpStages(ctx)
	default:
		err = o.stages(ctx)
	}
	return o.conclude(ctx, err)
}

func (o *orchestrator) stages(ctx context.Context) error {
	if err := o.stagePlan(ctx); err != nil {
		return err
	}
	if err := o.stageGather(ctx); err != nil {
		return err
	}
	if err := o.stageRetrieve(ctx); err != nil {
		return err
	}
	if err := o.stageWriteAndReview(ctx); err != nil {
		return err
	}
	return o.stageFinalise(ctx)
}

// errSuspended ends a run that stopped while waiting for a review decision.
var errSuspended = errors.New("waiting for a review decision")

// ErrInterrupted is the cause a server gives the runs it stops when it
// stops itself (a signal, not a person's cancel): their sessions end
// interrupted, as a run whose process died does, and resume continues
// them.
var ErrInterrupted = errors.New("the server running it stopped")

// conclude records how the run ended, in the store and as the last event.
func (o *orchestrator) conclude(ctx context.Context, runErr error) (store.Session, error) {
	tot := o.meter.totals()
	status, evType, msg := store.StatusCompleted, RunFinished, "report ready"
	outcome := ""
	switch {
	case runErr == nil:
		if o.doneMsg != "" {
			msg = o.doneMsg
		}
		outcome = o.outcome
	case errors.Is(runErr, errSuspended):
		status, evType, msg = store.StatusAwaitingReview, RunSuspended, "waiting for a review decision; resume the session to decide"
	case ctx.Err() != nil && errors.Is(context.Cause(ctx), ErrInterrupted):
		status, evType, msg = store.StatusInterrupted, RunCancelled, "interrupted: the server running it stopped; finished stages are kept and resuming the session continues from them"
	case ctx.Err() != nil:
		status, evType, msg = store.StatusCancelled, RunCancelled, "finished stages are kept; resuming the session continues from them"
	default:
		status, evType, msg = store.StatusFailed, RunFailed, runErr.Error()
	}
	if o.follow != nil && o.follow.Update > 0 && (status == store.StatusCancelled || status == store.StatusInterrupted || status == store.StatusFailed) {
		// An update that stops leaves the report as it was: the session
		// stays completed, and the next update continues this one.
		why := "cancelled"
		if status == store.StatusFailed {
			why = "failed: " + msg
		}
		status, msg = store.StatusCompleted, fmt.Sprintf("update stopped (%s); `researchtui update %s` or u on the report continues it", why, o.session.ID)
		outcome = OutcomeUpdateStopped
	}
	sess, err := o.engine.Store.UpdateSession(o.session.ID, func(s *store.Session) error {
		s.Status = status
		s.Updating = false
		s.Usage = storeUsage(tot)
		s.CostUSD = tot.CostUSD
		s.Steps = o.meter.stepsTaken()
		s.Warnings += len(o.warningList())
		if status == store.StatusFailed {
			s.Error = msg
		}
		if stage := o.stoppedIn(); status != store.StatusCompleted && stage != "" {
			// where it stopped ("failed (at research)"), not the last stage it finished
			s.Stage = string(stage)
		}
		if status != store.StatusAwaitingReview {
			s.PendingReview = nil
		}
		return nil
	})
	o.emit(Event{Type: evType, Status: status, Message: msg, Outcome: outcome, Usage: &tot, Elapsed: time.Since(o.started)})
	o.run.em.flush()
	if err != nil {
		return sess, err
	}
	if evType == RunCancelled {
		return sess, context.Canceled
	}
	if errors.Is(runErr, errSuspended) {
		return sess, nil
	}
	return sess, runErr
}

// checkpoint saves a stage's (or a unit's) output together with the run's
// usage so far, in one transaction, so a resume neither repeats the work nor
// loses its cost.
func (o *orchestrator) checkpoint(name string, v any) error {
	name = o.unitName(name)
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tot := o.meter.totals()
	steps := o.meter.stepsTaken()
	_, err = o.engine.Store.CheckpointAndUpdate(o.session.ID, name, raw, func(s *store.Session) error {
		s.Usage = storeUsage(tot)
		s.CostUSD = tot.CostUSD
		s.Steps = steps
		return nil
	})
	if err != nil {
		return fmt.Errorf("saving checkpoint %s: %w", name, err)
	}
	return nil
}

// saveProgress stores usage and the stage just finished, and persists the
// events so far, so the event log never lags a finished stage.
func (o *orchestrator) saveProgress(stage Stage) error {
	tot := o.meter.totals()
	steps := o.meter.stepsTaken()
	_, err := o.engine.Store.UpdateSession(o.session.ID, func(s *store.Session) error {
		s.Usage = storeUsage(tot)
		s.CostUSD = tot.CostUSD
		s.Steps = steps
		if stage != "" {
			s.Stage = string(stage)
		}
		return nil
	})
	o.run.em.flush()
	return err
}

func storeUsage(t UsageTotals) store.Usage {
	return store.Usage{PromptTokens: t.PromptTokens, CompletionTokens: t.CompletionTokens, EmbeddingTokens: t.EmbeddingTokens}
}

// loadCheckpoint reads a checkpoint into v; ok is false when there is none.
func (o *orchestrator) loadCheckpoint(name string, v any) (bool, error) {
	raw, ok, err := o.engine.Store.Checkpoint(o.session.ID, o.unitName(name))
	if err != nil || !ok {
		return false, err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		// A damaged checkpoint is redone, not trusted.
		o.warn("", "", "checkpoint %s was unreadable and is redone: %v", name, err)
		return false, nil
	}
	return true, nil
}

// stageStart says a stage began. The stages that run beside the search
// (read, index, analyse) are part of research for where a run stopped.
func (o *orchestrator) stageStart(s Stage, msg string) time.Time {
	o.emit(Event{Type: StageStarted, Stage: s, Message: msg})
	if s != StageRead && s != StageIndex && s != StageAnalyse {
		o.phaseMu.Lock()
		o.phase = s
		o.phaseMu.Unlock()
		// Recorded now, not only when the stage ends: a process killed
		// while writing left the session "interrupted (at retrieve)".
		if _, err := o.engine.Store.UpdateSession(o.session.ID, func(ss *store.Session) error {
			ss.Stage = string(s)
			return nil
		}); err != nil {
			o.warn(s, "", "recording the stage: %v", err)
		}
	}
	return time.Now()
}

// stoppedIn is the stage a run that ends now stopped in.
func (o *orchestrator) stoppedIn() Stage {
	o.phaseMu.Lock()
	defer o.phaseMu.Unlock()
	return o.phase
}

func (o *orchestrator) stageDone(s Stage, start time.Time, msg string) error {
	o.emit(Event{Type: StageFinished, Stage: s, Message: msg, Elapsed: time.Since(start)})
	return o.saveProgress(s)
}

// RestoredFromCheckpoint is the message of a stage's start when a resumed
// run restores it instead of running it: a screen that shows the stage's
// earlier run keeps its times.
const RestoredFromCheckpoint = "restored from checkpoint"

// stageSkipped reports a stage restored from its checkpoint.
func (o *orchestrator) stageSkipped(s Stage, msg string) {
	o.emit(Event{Type: StageStarted, Stage: s, Message: RestoredFromCheckpoint})
	o.emit(Event{Type: StageFinished, Stage: s, Message: msg})
}

// budgetWarn tells the person once that optional work is being skipped.
func (o *orchestrator) budgetWarn(stage Stage, err error) {
	if errors.Is(err, errBudget) && o.meter.firstBudgetWarning() {
		o.warn(stage, "", "%v: skipping optional work and writing the report with what was found", err)
	}
}
