package ui

// Settings are what the TUI remembers between sessions: the theme chosen
// with t and the last choice of the new-research form. The command line
// (ui/cli) writes them to the config file; empty parts are left as they are.
type Settings struct {
	Theme string
	Form  *FormChoice // nil: unchanged
}

// FormChoice is the new-research form's model, depth and sources (no
// sources: the planner picks them by the question's topic).
type FormChoice struct {
	Model string
	Depth string
	Kind  string // the report's kind (pipeline.KindStandard, ...)
	// ReviewPlan is pipeline.ReviewAsk to review the plan before searching.
	ReviewPlan string
	Language   string // the report's language as typed ("" English)
	Sources    []string
}
