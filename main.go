// Command researchtui is a local-first research assistant for the terminal:
// a team of agents plans a question, searches scholarly sources, reads and
// indexes the papers, writes a cited report and has it reviewed.
//
// main is thin: it makes the context that Ctrl-C and SIGTERM cancel, runs
// the command line (ui/cli) and exits with its exit code.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/researchtui/researchtui/ui/cli"
)

func main() {
	// A closed pipe (`researchtui run … | head`) must not kill the process
	// mid-write with its session left as it was: the write fails instead,
	// and cli stops a run whose output is gone as an interrupt would.
	signal.Ignore(syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}
