// Package report makes a report's text from what a run found, without
// running anything: the citation marks ([n] parsed, renumbered, checked,
// recited), the APA reference of a record, the PRISMA 2020 flow's counts
// and its drawing, Markdown made inert for text from outside, the report's
// "## " sections and their splicing, the studies table, the authors' own
// voice turned into the report's ("we found" → "Smith et al. found"),
// repeated sentences dropped, and the headings the code writes in each
// report language.
//
// It imports search (a record's metadata) and the leaves, never the
// orchestrator: pipeline calls it while it writes a report, and
// pipeline/history and pipeline/eval call it to show, export and score
// stored reports (layering_test.go at the root enforces it).
package report
