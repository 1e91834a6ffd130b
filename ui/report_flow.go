package ui

import (
	"strings"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/report"
)

// flowIndent is the columns of the pane a fenced block's lines cannot use
// in the report's Markdown style: the document's margins on both sides and
// the block's indent (measured: wider lines wrap).
const flowIndent = 6

// fitFlowDiagram is the report's Markdown with its PRISMA flow diagram
// redrawn for a pane width columns wide: the Markdown's own diagram is 72
// columns, wider than the report pane beside the sources pane, and a
// wrapped box diagram falls apart. Without a stored flow the text stays.
func fitFlowDiagram(rep pipeline.Report, width int) string {
	md := rep.Markdown
	if rep.Flow == nil || width-flowIndent >= report.FlowWidth {
		return md
	}
	open := "```" + report.FlowFence + "\n"
	i := strings.Index(md, open)
	if i < 0 {
		return md
	}
	body := i + len(open)
	j := strings.Index(md[body:], "\n```")
	if j < 0 {
		return md
	}
	return md[:body] + rep.Flow.DiagramFor(width-flowIndent) + md[body+j+1:]
}

// sanitizeFlow is a copy of a stored flow with its route and reason names
// cleaned, as the diagram drawn from it reaches the screen.
func sanitizeFlow(f *report.Flow) *report.Flow {
	if f == nil {
		return nil
	}
	c := *f
	route := func(r *report.RouteCount) { r.Route = sanitizeLine(r.Route) }
	reason := func(r *report.FlowReason) { r.Reason = sanitizeLine(r.Reason) }
	c.Databases, c.Other = cleaned(f.Databases, route), cleaned(f.Other, route)
	c.ExcludedWhy, c.ReportsWhy = cleaned(f.ExcludedWhy, reason), cleaned(f.ReportsWhy, reason)
	return &c
}

// cleaned is a copy of rs with clean applied to each element, leaving the
// stored slice as it was.
func cleaned[T any](rs []T, clean func(*T)) []T {
	out := make([]T, len(rs))
	for i, r := range rs {
		clean(&r)
		out[i] = r
	}
	return out
}
