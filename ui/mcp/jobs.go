package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/textkit"
)

// Long jobs. A deep run takes minutes to an hour on a local GPU, and agent
// hosts give up on tool calls long before that. start_research starts a
// run that belongs to the server, not to the call or the client session:
// it goes on when the client disconnects, is claimed in the store like any
// run, and ends cancelled (resumable) only when the server stops.
// get_session shows its progress, subscribers of its report resource hear
// resources/updated when it ends, and cancel_session stops it.

// RunProgress is a live run as get_session shows it.
type RunProgress struct {
	Running        bool           `json:"running"`
	Stage          string         `json:"stage" jsonschema:"the pipeline stage now running: plan, research, read, index, analyse, retrieve, write, verify, review or finalise"`
	Round          int            `json:"round,omitempty" jsonschema:"the research round (1 and up)"`
	SourcesFound   int            `json:"sources_found"`
	DocumentsRead  int            `json:"documents_read"`
	ChunksIndexed  int            `json:"chunks_indexed"`
	Tokens         Usage          `json:"tokens"`
	ElapsedSeconds float64        `json:"elapsed_seconds"`
	LastEvent      string         `json:"last_event,omitempty" jsonschema:"the latest progress line"`
	Review         *PendingReview `json:"review,omitempty" jsonschema:"the reviewer's requests while they wait for a decision"`
}

// PendingReview is a review waiting for its decision.
type PendingReview struct {
	Round    int      `json:"round"`
	Summary  string   `json:"summary"`
	Requests []string `json:"requests"`
	// Plan is a plan review's sub-questions with their queries (round 0).
	Plan []string `json:"plan,omitempty"`
}

// job is one run started by start_research.
type job struct {
	run     *pipeline.Run
	started time.Time

	mu       sync.Mutex
	progress RunProgress
}

// observe keeps the job's progress from the run's events.
func (j *job) observe(ev pipeline.Event) {
	j.mu.Lock()
	defer j.mu.Unlock()
	p := &j.progress
	switch ev.Type {
	case pipeline.StageStarted:
		p.Stage = string(ev.Stage)
	case pipeline.RoundStarted:
		p.Round = ev.Count
	case pipeline.CandidatesRanked:
		p.SourcesFound = max(p.SourcesFound, ev.Count)
	case pipeline.DocumentRead:
		p.DocumentsRead++
	case pipeline.ChunksIndexed:
		p.ChunksIndexed += ev.Count
	case pipeline.UsageUpdated:
		if u := ev.Usage; u != nil {
			p.Tokens = Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, EmbeddingTokens: u.EmbeddingTokens, CostUSD: u.CostUSD}
		}
	case pipeline.ReviewRequested:
		if rv := ev.Review; rv != nil {
			pr := &PendingReview{Round: rv.Round, Summary: textkit.CleanLine(rv.Summary)}
			for _, q := range rv.Requests {
				pr.Requests = append(pr.Requests, textkit.CleanLine(fmt.Sprintf("[%s] %s: %s", q.Kind, q.Section, q.Text)))
			}
			if rv.Plan != nil {
				for _, sq := range rv.Plan.SubQuestions {
					pr.Plan = append(pr.Plan, textkit.CleanLine(fmt.Sprintf("%s (queries: %s)", sq.Question, strings.Join(sq.Queries.List(), "; "))))
				}
			}
			p.Review = pr
		}
	case pipeline.ReviewDecided, pipeline.RunFinished, pipeline.RunFailed, pipeline.RunCancelled, pipeline.RunSuspended:
		p.Review = nil
	}
	if line := strings.TrimSpace(ev.Summary()); line != "" && ev.Type != pipeline.TokenDelta {
		p.LastEvent = textkit.CleanLine(line)
	}
}

func (j *job) snapshot() RunProgress {
	j.mu.Lock()
	defer j.mu.Unlock()
	p := j.progress
	p.ElapsedSeconds = time.Since(j.started).Round(time.Second).Seconds()
	return p
}

// StartOutput is start_research's result.
type StartOutput struct {
	SessionID string `json:"session_id" jsonschema:"the new session's ID: poll get_session with it, subscribe to researchtui://sessions/{id}/report, or cancel_session it"`
	Status    string `json:"status"`
	ReportURI string `json:"report_uri" jsonschema:"the resource the report will be at; subscribers get notifications/resources/updated when the run ends"`
	Message   string `json:"message"`
}

// CancelInput names the session to cancel.
type CancelInput struct {
	ID string `json:"id" jsonschema:"the ID of a running session"`
}

// CancelOutput is cancel_session's result.
type CancelOutput struct {
	SessionID string `json:"session_id"`
	Status    string `json:"status" jsonschema:"the session's status after the cancellation (cancelled, or what it reached first)"`
	Message   string `json:"message"`
}

func (s *Server) addJobTools() {
	mcp.AddTool(s.srv, &mcp.Tool{
		Name:        "start_research",
		Title:       "Start researching a question (returns at once)",
		InputSchema: researchSchema(),
		Description: "Starts the same run as research but returns its session ID at once; the run goes on in researchtui (also when this client disconnects). " +
			"Follow it with get_session (stage, counts, tokens, elapsed time, a review waiting), subscribe to its report resource to be told when it ends, " +
			"or stop it with cancel_session. Use it when a call that takes minutes to an hour would time out. " +
			"review ask leaves the reviewer's requests waiting for a person (shown by get_session, decided in the researchtui TUI), never asked of this client.",
	}, s.startResearch)
	mcp.AddTool(s.srv, &mcp.Tool{
		Name:        "cancel_session",
		Title:       "Cancel a running session",
		Description: "Cancels a running session, here or in another researchtui on the same data; what it finished is kept and resume_session continues it.",
	}, s.cancelSession)
}

func (s *Server) startResearch(ctx context.Context, _ *mcp.CallToolRequest, in ResearchInput) (*mcp.CallToolResult, StartOutput, error) {
	var zero StartOutput
	opt, review, warnings, err := s.researchOptions(ctx, in)
	if err != nil {
		return nil, zero, err
	}
	release, err := s.takeRunSlot()
	if err != nil {
		return nil, zero, err
	}
	runCtx, stop := context.WithCancel(s.base) // the server's, not the call's
	r, err := s.cfg.Engine.Start(runCtx, opt)
	if err != nil {
		stop()
		release()
		return nil, zero, errors.New(badInputMessage(err))
	}
	j := &job{run: r, started: time.Now(), progress: RunProgress{Running: true, Stage: string(pipeline.StagePlan)}}
	s.jobsMu.Lock()
	s.jobs[r.ID()] = j
	s.jobsMu.Unlock()
	s.runs.Add(1)
	go func() {
		defer s.runs.Done()
		defer release()
		defer stop()
		_, _, _ = pipeline.Drive(runCtx, r, j.observe, decideForJob(review))
		s.jobsMu.Lock()
		delete(s.jobs, r.ID())
		s.jobsMu.Unlock()
		s.reportUpdated(r.ID())
	}()
	msg := fmt.Sprintf("session %s started; get_session {id: %q} shows its progress, cancel_session stops it", r.ID(), r.ID())
	if len(warnings) > 0 {
		msg += " (" + strings.Join(warnings, "; ") + ")"
	}
	out := StartOutput{SessionID: r.ID(), Status: store.StatusRunning, ReportURI: reportURI(r.ID()), Message: msg}
	return textResult(msg), out, nil
}

// decideForJob answers a background run's review by policy. With "ask"
// the review waits for a person: get_session shows it, and it is decided
// where researchtui's other faces decide a run of another process (the
// TUI on the same data dir), or left by cancel_session for resume_session
// with review approve or reject. It is not put to the starting client by
// elicitation: that client may be gone, and go-sdk v1.8.0 closes a session
// only after its pending server-to-client requests have returned, so an
// elicitation to a departed client would hold both the session and the
// run.
func decideForJob(review string) func(context.Context, *pipeline.ReviewRequest) (pipeline.Decision, error) {
	return func(ctx context.Context, rv *pipeline.ReviewRequest) (pipeline.Decision, error) {
		// A plan review is asked for on purpose (review_plan ask): it
		// waits for a person whatever review says.
		if d, ok := pipeline.PolicyDecision(review); ok && rv.Plan == nil {
			return d, nil
		}
		<-ctx.Done() // decided elsewhere, or the run ended
		return pipeline.Decision{}, context.Cause(ctx)
	}
}

// liveJob is the job of session id started here, or nil.
func (s *Server) liveJob(id string) *job {
	s.jobsMu.Lock()
	defer s.jobsMu.Unlock()
	return s.jobs[id]
}

// reportUpdated tells the subscribers of a session's report that it
// changed (the run ended: a report, or a status without one).
func (s *Server) reportUpdated(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: reportURI(id)}); err != nil {
		s.log.Warn("notifying report subscribers", "session", id, "err", err)
	}
}

func (s *Server) cancelSession(ctx context.Context, _ *mcp.CallToolRequest, in CancelInput) (*mcp.CallToolResult, CancelOutput, error) {
	var zero CancelOutput
	sess, err := s.session(in.ID)
	if err != nil {
		return nil, zero, err
	}
	j := s.liveJob(sess.ID)
	if j != nil {
		select {
		case <-j.run.Done(): // ended, and not yet taken off the live jobs
			j = nil
		default:
		}
	}
	if j != nil {
		j.run.Cancel()
		<-j.run.Done()
	} else {
		if sess.Status != store.StatusRunning {
			return nil, zero, fmt.Errorf("session %s is %s, not running; nothing to cancel", sess.ID, strings.ReplaceAll(sess.Status, "_", " "))
		}
		if err := s.cancelElsewhere(ctx, sess.ID); err != nil {
			return nil, zero, err
		}
	}
	after, err := s.st.Session(sess.ID)
	if err != nil {
		return nil, zero, err
	}
	out := CancelOutput{SessionID: sess.ID, Status: after.Status}
	out.Message = fmt.Sprintf("session %s is %s; resume_session {id: %q} continues it", sess.ID, strings.ReplaceAll(after.Status, "_", " "), sess.ID)
	if after.Status == store.StatusCompleted {
		out.Message = fmt.Sprintf("session %s completed before it could be cancelled", sess.ID)
	}
	return textResult(out.Message), out, nil
}

// cancelElsewhere cancels a run another researchtui runs (or this one, by
// research or resume_session) and waits, within reason, until it ended.
func (s *Server) cancelElsewhere(ctx context.Context, id string) error {
	w, err := s.cfg.Engine.Watch(ctx, id)
	if err != nil {
		return fmt.Errorf("session %s is not running in any researchtui (%v); nothing to cancel", id, err)
	}
	defer w.Stop()
	w.Cancel()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-w.Events():
			if !ok {
				return nil
			}
		}
	}
}

// progressText is a live run's progress as lines of text.
func progressText(p RunProgress) string {
	var b strings.Builder
	fmt.Fprintf(&b, "running for %.0fs: stage %s", p.ElapsedSeconds, p.Stage)
	if p.Round > 0 {
		fmt.Fprintf(&b, ", round %d", p.Round)
	}
	fmt.Fprintf(&b, "; %d sources found, %d read, %d chunks indexed; %d prompt + %d completion tokens\n",
		p.SourcesFound, p.DocumentsRead, p.ChunksIndexed, p.Tokens.PromptTokens, p.Tokens.CompletionTokens)
	if p.LastEvent != "" {
		fmt.Fprintf(&b, "latest: %s\n", p.LastEvent)
	}
	if p.Review != nil {
		fmt.Fprintf(&b, "review waiting (round %d): %s\n", p.Review.Round, p.Review.Summary)
		for i, q := range p.Review.Requests {
			fmt.Fprintf(&b, "  %d. %s\n", i+1, q)
		}
	}
	return b.String()
}
