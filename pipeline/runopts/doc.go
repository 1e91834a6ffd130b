// Package runopts is what a run is asked to do: the Options every face
// fills in and Normalize checks, the option table (RunOptions) from which
// the command line's flags, the TUI's form, the MCP tools' arguments and
// resume's refusals are derived, the depth table that says what each depth
// means in numbers, and the report's language as a person names it.
//
// It imports search (the sources' names) and the leaves, nothing of the
// orchestrator, so a face can check options before it opens anything.
package runopts
