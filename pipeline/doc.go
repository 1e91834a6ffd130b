// Package pipeline owns a research run: the stages of ARCHITECTURE.md §3
// (plan, research, read, index, analyse, retrieve, write, verify, review, finalise),
// the agents that do each one, the orchestrator that runs them as an explicit
// state machine, the typed event channel every consumer (TUI, headless, tests)
// reads, the human review gate and budgets.
//
// Two leaf packages under it hold what is not orchestration, and import
// nothing of it: pipeline/runopts, a run's options (the option table, the
// depth table, the report's language), and pipeline/report, the report's
// making from the analyses (citation marks, APA references, the PRISMA
// flow and its drawing, inert Markdown, sections, the studies table, the
// authors' voice, repeated sentences). The citation graph a run chases is
// search's.
//
// # Where each stage lives
//
// The orchestrator (orchestrator.go, stages) runs five entry functions in
// order; research, read, index and analyse run as one streaming step, the
// gather, so their work is in the files named after them and what joins
// them is in gather_stream.go. (Flow, in prisma.go, is the PRISMA
// diagram's counts, not this.)
//
//	stage      file          entry
//	plan       plan.go       stagePlan (a plan that echoes the planner's instructions: plan.go)
//	(gather)   gather.go     stageGather: research, read, index and analyse streaming as one (gather_stream.go), in rounds (rounds.go, reflect.go)
//	research   research.go   researchAll, rank (rank.go), the shortlist and the relevance screen that decides what is read (reading_plan.go, screening.go, screening_batch.go), the run's reading plan (reading_plan.go)
//	read       read.go       readLoop, readSource: fetch, PDF/HTML, chunk
//	index      index.go      indexLoop: embed and index the chunks
//	analyse    analyse.go    analyseLoop, analyse (short sources: analyse_batch.go)
//	retrieve   retrieve.go   stageRetrieve
//	write      write.go      write (started by stageWriteAndReview)
//	verify     verify.go     verifyDraft (verify_judge.go, verify_report.go)
//	review     review.go     stageWriteAndReview: write, verify, review, the human gate, revise (revise.go)
//	finalise   finalise.go   stageFinalise (repeated sentences dropped: report/repeats.go; Markdown made inert: report/markdown.go, textkit/mdinert)
//
// A follow-up question on a finished session runs followUpStages
// (followup.go) instead, and a living review's update updateStages
// (update.go): the session's searches again, only works it never met,
// a "What's new since" section. Both start from report.go.
//
// What only reads stored sessions (details, scores, the timeline, exports)
// is in pipeline/history, which imports this package; OpenTelemetry export
// is in pipeline/tracing.
//
// It depends on llm (models), search (sources and reading) and store
// (persistence); nothing here imports Bubble Tea.
package pipeline
