package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/textkit"
)

// Config is what the server needs from ui/cli: the engine (with its store),
// the run options the config file and environment give, and a backend
// check.
type Config struct {
	// Engine runs research, searches the knowledge base and, through its
	// Store, reads sessions: the data dir's own store or the one another
	// researchtui owns (store.Conn); every tool works either way.
	Engine *pipeline.Engine
	// Defaults are the run options before a tool call's own (model,
	// embedding model, depth, sources, budgets), as `run` would use them.
	Defaults runopts.Options
	// Check, when set, makes sure the model backend answers and has the
	// models, so a research call fails at once with the fix rather than
	// minutes in.
	Check func(ctx context.Context, models ...string) error
	// CheckCollections, when set, refuses library collections that do not
	// exist (a run limited to one would search nothing).
	CheckCollections func(names []string) error
	// Version is researchtui's version, reported to clients.
	Version string
	// Logger receives the server's own log lines; nil discards them. It
	// must not write to stdout when serving stdio.
	Logger *slog.Logger
	// MaxRuns caps the research runs this server drives at once (research,
	// start_research, follow_up, resume_session); 0 means DefaultMaxRuns.
	MaxRuns int
}

// DefaultMaxRuns is how many runs a server drives at once unless told:
// one GPU serves one request at a time, so more runs only queue on the
// model, while each holds memory (200 accepted at once held 418 MB).
const DefaultMaxRuns = 4

// Server is researchtui's MCP server. One Server may serve many client
// sessions (stdio serves one, HTTP any number).
type Server struct {
	cfg Config
	st  store.Reader
	srv *mcp.Server
	log *slog.Logger

	// runs counts tool calls that drive a run, so shutdown can wait for
	// their sessions to be saved (cancelled runs checkpoint on the way out).
	runs sync.WaitGroup
	// base ends every run when the server shuts down: a client that went
	// away (stdin closed) or Ctrl-C. Its runs end cancelled and resumable
	// instead of working on for nobody.
	base      context.Context
	cancelAll context.CancelCauseFunc

	// jobs are the runs start_research started, by session ID, while they
	// run (jobs.go).
	jobsMu sync.Mutex
	jobs   map[string]*job

	// slots holds a token per run being driven (MaxRuns of them).
	slots chan struct{}
}

// New builds the server with every tool, the report resources and the
// prompt registered.
func New(cfg Config) *Server {
	if cfg.Engine == nil || cfg.Engine.Store == nil {
		panic("mcp: Config.Engine with a Store is required")
	}
	st := cfg.Engine.Store
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.MaxRuns <= 0 {
		cfg.MaxRuns = DefaultMaxRuns
	}
	s := &Server{cfg: cfg, st: st, log: log, jobs: map[string]*job{}, slots: make(chan struct{}, cfg.MaxRuns)}
	s.base, s.cancelAll = context.WithCancelCause(context.Background())
	s.srv = mcp.NewServer(&mcp.Implementation{Name: "researchtui", Title: "researchtui", Version: cfg.Version}, &mcp.ServerOptions{
		Instructions:       instructions,
		Logger:             log,
		SubscribeHandler:   s.subscribe,
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	s.addResearchTools()
	s.addUpdateTools()
	s.addJobTools()
	s.addLibraryTools()
	s.addResources()
	s.addPrompts()
	s.srv.AddReceivingMiddleware(guardWire) // last added runs first
	return s
}

const instructions = `researchtui is a local research assistant: it searches scholarly sources (arXiv, OpenAlex, PubMed, Semantic Scholar, Crossref, the web, a local corpus), reads the papers, and writes a cited Markdown report whose references come from real source metadata.
Use "research" for a new question (it takes minutes; progress is reported), or "start_research" to get the session ID at once and follow the run with "get_session" or a subscription to its report (cancel it with "cancel_session"), "search_knowledge" to find passages in everything researched before (fast, use it first), "list_sessions"/"get_session" to read past sessions, "follow_up" to ask a finished session a further question, and "resume_session" to continue an interrupted one. Finished reports are also resources at researchtui://sessions/{id}/report.`

// MCP is the underlying SDK server (for transports and tests).
func (s *Server) MCP() *mcp.Server { return s.srv }

// Wait blocks until every run a tool call started has ended and its
// session is saved.
func (s *Server) Wait() { s.runs.Wait() }

// Shutdown stops the runs in progress (they end interrupted, resumable)
// and waits until their sessions are saved.
func (s *Server) Shutdown() {
	s.cancelAll(pipeline.ErrInterrupted)
	s.Wait()
}

// runContext is the context a run lives in: the tool call's, ended also
// by Shutdown. stop releases it.
func (s *Server) runContext(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	unhook := context.AfterFunc(s.base, func() { cancel(context.Cause(s.base)) })
	return ctx, func() { unhook(); cancel(nil) }
}

// ServeStdio serves one client over stdin/stdout (ServeIO).
func (s *Server) ServeStdio(ctx context.Context) error {
	return s.ServeIO(ctx, os.Stdin, os.Stdout, os.Stderr)
}

// ServeIO serves one client over newline-delimited JSON-RPC until the
// client closes the connection or ctx ends. A line that is not a JSON-RPC
// message gets an error answer and serving goes on (stdio_frames.go).
// When the client leaves, the calls it was waiting for end (the SDK
// cancels them: their runs end cancelled, resumable) while the runs it
// started with start_research go on until they end, as the README says;
// when ctx ends (a signal) every run still going is interrupted, and
// resume continues it. Either way the sessions are saved before it
// returns.
func (s *Server) ServeIO(ctx context.Context, in io.Reader, out, log io.Writer) error {
	err := s.srv.Run(ctx, filteredTransport(in, out))
	if ctx.Err() == nil {
		if n := s.startedRuns(); n > 0 {
			fmt.Fprintf(log, "researchtui mcp: the client left; %s it started go on until they end (a signal interrupts them, and resume continues them)\n", textkit.Plural(n, "run", "runs"))
			done := make(chan struct{})
			go func() { s.Wait(); close(done) }()
			select {
			case <-done:
			case <-ctx.Done():
			}
		}
	}
	s.Shutdown()
	if err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) || strings.Contains(err.Error(), "server is closing")) {
		return nil
	}
	return err
}

// startedRuns counts the start_research runs still going.
func (s *Server) startedRuns() int {
	s.jobsMu.Lock()
	defer s.jobsMu.Unlock()
	return len(s.jobs)
}

func (s *Server) addPrompts() {
	s.srv.AddPrompt(&mcp.Prompt{
		Name:        "research",
		Title:       "Research a question with cited sources",
		Description: "Asks the assistant to research a question with researchtui and answer from the cited report.",
		Arguments: []*mcp.PromptArgument{{
			Name:        "question",
			Description: "the research question, e.g. \"which methods detect CRISPR off-target edits?\"",
			Required:    true,
		}},
	}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		q := strings.TrimSpace(req.Params.Arguments["question"])
		if q == "" {
			return nil, fmt.Errorf("the prompt needs a question")
		}
		return &mcp.GetPromptResult{
			Description: "Research with researchtui",
			Messages: []*mcp.PromptMessage{{
				Role: "user",
				Content: &mcp.TextContent{Text: "First call search_knowledge to see what researchtui already knows about the question below; " +
					"if that does not answer it, call research. Answer from the report, keep its [n] citations, and list the references.\n\nQuestion: " + q},
			}},
		}, nil
	})
}

// badInputMessage strips the "bad input: " prefix the pipeline puts on
// errors meant for the command line's exit code; a tool result does not
// need it.
func badInputMessage(err error) string {
	return strings.TrimPrefix(err.Error(), runopts.ErrBadInput.Error()+": ")
}

// waitedRun holds what a call that waits for its run needs: a run slot,
// a place among the runs shutdown waits for, and a context the server's
// end cancels. done gives them back, in that order's reverse.
func (s *Server) waitedRun(ctx context.Context) (_ context.Context, done func(), err error) {
	release, err := s.takeRunSlot()
	if err != nil {
		return ctx, nil, err
	}
	s.runs.Add(1)
	ctx, stop := s.runContext(ctx)
	return ctx, func() {
		stop()
		s.runs.Done()
		release()
	}, nil
}

// takeRunSlot reserves one of the server's run slots, or says that all are
// taken: a client that starts runs in a loop gets an error naming the cap
// instead of a machine full of runs. release gives the slot back.
func (s *Server) takeRunSlot() (release func(), err error) {
	select {
	case s.slots <- struct{}{}:
		var once sync.Once
		return func() { once.Do(func() { <-s.slots }) }, nil
	default:
		return nil, fmt.Errorf("researchtui is already driving %d research runs, its cap (mcp --max-runs); wait for one to end, or stop one with cancel_session", cap(s.slots))
	}
}
