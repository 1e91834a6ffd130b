package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/researchtui/researchtui/ui/mcp"
)

// mcpCommand is `researchtui mcp [--http ADDR]`: researchtui as a Model
// Context Protocol server for other agents (Claude Desktop, Cursor, Crush,
// VS Code). On stdio, stdout carries protocol messages only: one stray
// print breaks every client, so the server's logs go to stderr.
func mcpCommand() *cobra.Command {
	var addr, token, tokenFile string
	var maxRuns int
	var httpOpt mcp.HTTPOptions
	cmd := &cobra.Command{
		Use:   "mcp [--http ADDR]",
		Short: "Serve researchtui to other agents over the Model Context Protocol (stdio, or Streamable HTTP at /mcp)",
		Long: `Serves researchtui over the Model Context Protocol: the tools research, start_research (returns
at once; the run goes on), cancel_session, search_knowledge, list_sessions, get_session,
resume_session, follow_up and update_session, and every finished report as the resource
researchtui://sessions/{id}/report. At most --max-runs runs are driven at once; more are refused
with an error naming the cap.

With no flags it speaks MCP on stdin/stdout, which is what desktop clients launch. With --http it
serves Streamable HTTP at http://ADDR/mcp; an address other than loopback needs a bearer token,
and requests from web pages of other origins are refused. The token comes from --token-file (a file
only you can read, mode 0600), RESEARCHTUI_MCP_TOKEN or --token (which other users see in ps).
Sessions idle for --session-idle end (clients initialize again), and at most --max-sessions are kept.`,
		Example: `  researchtui mcp
  researchtui mcp --http 127.0.0.1:8765
  RESEARCHTUI_MCP_TOKEN=secret researchtui mcp --http 0.0.0.0:8765
  researchtui mcp --http 0.0.0.0:8765 --token-file ~/.config/researchtui/mcp-token`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			token, err := mcpToken(cmd, token, tokenFile)
			if err != nil {
				return err
			}
			if addr != "" {
				if _, _, err := net.SplitHostPort(addr); err != nil {
					return fmt.Errorf("%w: --http wants HOST:PORT, e.g. 127.0.0.1:8765 (%v)", errUsage, err)
				}
				if !mcp.IsLoopback(addr) && token == "" {
					return fmt.Errorf("%w: --http %s is reachable from other machines; set a bearer token with --token or RESEARCHTUI_MCP_TOKEN (or listen on 127.0.0.1)", errUsage, addr)
				}
			}
			cfg, err := loadConfig()
			if err != nil {
				return err
			}
			logger := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))
			srv, closeAll, err := newMCPServer(cfg, logger, maxRuns)
			if err != nil {
				return err
			}
			defer closeAll()
			if addr == "" {
				return srv.ServeStdio(cmd.Context())
			}
			httpOpt.Token = token
			return serveMCPHTTP(cmd.Context(), srv, addr, httpOpt, cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&addr, "http", "", "serve Streamable HTTP at http://ADDR/mcp instead of stdio (e.g. 127.0.0.1:8765)")
	cmd.Flags().StringVar(&token, "token", "", "bearer token HTTP clients must send (visible in ps: prefer --token-file or RESEARCHTUI_MCP_TOKEN; required off loopback)")
	cmd.Flags().StringVar(&tokenFile, "token-file", "", "read the bearer token from this file (mode 0600)")
	cmd.Flags().DurationVar(&httpOpt.SessionIdle, "session-idle", mcp.DefaultSessionIdle, "end an HTTP session after this long without a request")
	cmd.Flags().IntVar(&maxRuns, "max-runs", mcp.DefaultMaxRuns, "research runs driven at once (research, start_research, follow_up, resume_session, update_session); more are refused naming the cap")
	cmd.Flags().IntVar(&httpOpt.MaxSessions, "max-sessions", mcp.DefaultMaxSessions, "HTTP sessions kept at once (a new one ends the longest idle)")
	return cmd
}

// newMCPServer builds the server on the data dir's store, owned by this
// process or reached through the researchtui that owns it: every tool works
// either way (store/README.md).
func newMCPServer(cfg *Config, logger *slog.Logger, maxRuns int) (*mcp.Server, func(), error) {
	a, err := openApp(cfg)
	if err != nil {
		return nil, nil, err
	}
	if owner := a.store.Owner(); owner != os.Getpid() {
		logger.Info("another researchtui owns the data dir; working through it", "owner_pid", owner)
	}
	return mcp.New(mcp.Config{
		Engine:   a.engine,
		Defaults: cfg.defaultOptions(),
		Check: func(ctx context.Context, models ...string) error {
			return checkBackend(ctx, a.backend, models...)
		},
		CheckCollections: func(names []string) error { return checkCollections(cfg, names) },
		Version:          version,
		Logger:           logger,
		MaxRuns:          maxRuns,
	}), a.Close, nil
}

// serveMCPHTTP serves until ctx ends (Ctrl-C), then lets runs save.
func serveMCPHTTP(ctx context.Context, srv *mcp.Server, addr string, opt mcp.HTTPOptions, logw io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%w: listening on %s: %v", errUsage, addr, err)
	}
	// The timeouts bound a request's headers and body and an idle
	// keep-alive connection (117 of them once ran a 128-descriptor server
	// out of descriptors); a call's response may stream for as long as it
	// lasts, each write bounded on its own (mcp.Server.Handler).
	hs := &http.Server{
		Handler:           srv.Handler(opt),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       90 * time.Second,
	}
	fmt.Fprintf(logw, "researchtui MCP server at http://%s/mcp (Ctrl-C stops it)\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if hs.Shutdown(sctx) != nil {
		_ = hs.Close() // open event streams: cut them, which cancels their calls
	}
	// Cancelled runs checkpoint on the way out; wait for that, but not
	// forever (a call the SDK keeps alive must not hang Ctrl-C).
	saved := make(chan struct{})
	go func() { srv.Shutdown(); close(saved) }()
	select {
	case <-saved:
	case <-time.After(15 * time.Second):
		fmt.Fprintln(logw, "researchtui: runs still in progress at exit; `researchtui resume ID` continues them")
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
