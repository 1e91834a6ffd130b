// Package history is the read side of a research run: what a stored
// session holds and how it is shown. It reads sessions from the store, never
// runs one: the details `sessions show --json` and the MCP server's
// get_session return (detail.go), a finished run's scores and its timeline
// of stages and agents drawn as a waterfall (timeline.go,
// timeline_draw.go), which sessions read a source (ReadBy), a report at an
// earlier version (ReportVersion), and the exports: Markdown, JSON,
// BibTeX (export.go) and HTML (export_html.go).
//
// It imports pipeline for the types a run stores (Report, Event,
// Candidate, ...) and its loaders (LoadReport, LoadEvents, LoadVersions,
// LoadCandidates); pipeline never imports it.
package history
