// Package mcp serves researchtui to other agents over the Model
// Context Protocol (the official Go SDK): the tools research,
// search_knowledge, list_sessions, get_session, resume_session and
// follow_up, finished reports as resources
// (researchtui://sessions/{id}/report), and one prompt.
//
// It is a front-end like the TUI and headless `run`: it drives the same
// pipeline.Engine and reads the same store, and consumes a run's event
// channel through pipeline.Drive (progress notifications instead of
// printed lines, elicitation instead of a keypress for the review gate).
// Only the command line (ui/cli) imports it.
//
// Two rules shape the code. Bad input never becomes a protocol error or a
// crash: every tool validates what it is given and answers with an isError
// result a person can act on, and the server goes on serving. And on stdio
// the server owns stdout: nothing in this package prints; logs go to the
// slog.Logger it is given (stderr or the log file).
package mcp
