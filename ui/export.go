package ui

import (
	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/history"
)

// exportReport is the one place the UI calls the pipeline's exporter, so a
// change of its signature touches one line.
func exportReport(rep pipeline.Report, format string) ([]byte, error) {
	return history.ExportReport(rep, format)
}
