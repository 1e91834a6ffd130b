// Package pipeline owns a research run: its options, the stages of DESIGN §5
// (plan, research, read, index, retrieve, analyse, write, review, finalise),
// the agents that do each one, the orchestrator that runs them as an explicit
// state machine, the typed event channel every consumer (TUI, headless, tests)
// reads, the human review gate, budgets, and the citation and reference code
// that makes sure every [n] in a report points at a source that was read.
//
// It depends on llm (models), search (sources and reading) and store
// (persistence); nothing here imports Bubble Tea.
package pipeline
