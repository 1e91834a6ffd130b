package pipeline

import (
	"strings"

	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/search"
)

// The PRISMA 2020 flow of a run: how many records each route identified,
// how many were duplicates, screened, excluded and why, sought, assessed
// and included. Every count comes from what the run stored (its research
// units' identification counts, its candidate ledger, what it read,
// analysed and cited), never from the model, and the boxes add up by
// construction: each work lands in exactly one box of each stage.

// checkpointFlow holds the run's flowLedger.
const checkpointFlow = "flow"

// flowLedger is what the flow needs that the candidate ledger does not
// hold: the records each route returned, and every analysis made (the
// writer sees only those kept).
type flowLedger struct {
	Identified []report.RouteCount `json:"identified"`
	Analysed   []string            `json:"analysed"`
	// AbstractsAsked and AbstractsFound count the works known by title
	// only whose abstracts were looked up, and those found (gather_stream.go).
	AbstractsAsked int `json:"abstracts_asked,omitempty"`
	AbstractsFound int `json:"abstracts_found,omitempty"`
}

// runFlow counts the run's flow once its report cites the sources cited.
func (o *orchestrator) runFlow(cited []string) report.Flow {
	in := flowInput{read: map[string]bool{}, fullText: map[string]bool{}, analysed: map[string]bool{}, kept: map[string]bool{}, cited: map[string]bool{}}
	_, _ = o.loadCheckpoint(CheckpointCandidates, &in.candidates)
	if o.st.Ledger != nil {
		in.identified = o.st.Ledger.Identified
		for _, k := range o.st.Ledger.Analysed {
			in.analysed[k] = true
		}
	}
	if o.st.Found != nil {
		for _, r := range o.st.Found.Records {
			in.read[r.Key] = true
			in.fullText[r.Key] = o.readAs(r.Key) == report.ReadFullText
		}
	}
	for _, an := range o.st.Analyses {
		in.analysed[an.SourceKey], in.kept[an.SourceKey] = true, true
	}
	for _, k := range cited {
		in.cited[k] = true
	}
	return buildFlow(in)
}

// flowInput is what a flow is built from.
type flowInput struct {
	identified []report.RouteCount
	candidates []Candidate
	read       map[string]bool // works read (full text or abstract)
	fullText   map[string]bool // works read with their full text
	analysed   map[string]bool // every analysis made (kept or not)
	kept       map[string]bool // analyses kept for the writer
	cited      map[string]bool
}

// buildFlow counts the flow. A work's fate is decided once: its best
// state over every sub-question and round (read anywhere beats not read).
func buildFlow(in flowInput) report.Flow {
	var f report.Flow
	for _, rc := range report.MergeRoutes(in.identified) {
		if report.IsDatabaseRoute(rc.Route) {
			f.Databases = append(f.Databases, rc)
		} else {
			f.Other = append(f.Other, rc)
		}
		f.Identified += rc.Records
	}
	report.SortRoutes(f.Databases)
	report.SortRoutes(f.Other)

	// Every distinct work the run met, with the reason it was not read
	// (from its most relevant candidate entry) when it never was.
	works := map[string]bool{}
	sought := map[string]bool{}
	why := map[string]string{}
	best := map[string]float64{}
	for _, c := range in.candidates {
		works[c.Key] = true
		if c.Read {
			sought[c.Key] = true
			continue
		}
		if _, ok := why[c.Key]; !ok || c.Score > best[c.Key] {
			why[c.Key], best[c.Key] = exclusionReason(c), c.Score
		}
	}
	// Works read without a candidate entry (a reviewer's request found
	// them) were identified and sought all the same.
	var extra int
	for _, set := range []map[string]bool{in.read, in.analysed, in.cited} {
		for k := range set {
			if !works[k] {
				works[k] = true
				extra++
			}
			sought[k] = true
		}
	}
	if extra > 0 {
		f.Other = append(f.Other, report.RouteCount{Route: report.RouteReviewer, Records: extra})
		f.Identified += extra
	}
	f.Screened = len(works)
	if f.Identified < f.Screened { // units from before the flow was recorded
		f.Other = append(f.Other, report.RouteCount{Route: report.WhyNotRecorded, Records: f.Screened - f.Identified})
		f.Identified = f.Screened
	}
	f.Duplicates = f.Identified - f.Screened

	excluded := map[string]int{}
	for k := range works {
		if !sought[k] {
			excluded[why[k]]++
		}
	}
	f.ExcludedWhy = report.FlowReasons(excluded)
	f.Excluded = f.Screened - len(sought)
	f.Sought = len(sought)

	assessed := map[string]bool{}
	for k := range sought {
		if in.read[k] || in.analysed[k] || in.cited[k] {
			assessed[k] = true
		}
	}
	f.Assessed = len(assessed)
	f.NotRetrieved = f.Sought - f.Assessed
	left := map[string]int{}
	for k := range assessed {
		if in.fullText[k] {
			f.AssessedFullText++
		}
		switch {
		case in.cited[k]:
			f.Included++
		case in.kept[k]:
			left[report.WhyNotCited]++
		case in.analysed[k]:
			left[report.WhyLowConfidence]++
		default:
			left[report.WhyNotAnalysed]++
		}
	}
	f.AssessedAbstract = f.Assessed - f.AssessedFullText
	f.ReportsWhy = report.FlowReasons(left)
	f.Reports = f.Assessed - f.Included
	return f
}

// exclusionReason is why a candidate was not read, without its figures
// ("below the relevance floor (0.21 < 0.30)" counts with the others).
func exclusionReason(c Candidate) string {
	if strings.HasPrefix(c.Screen, "off topic:") {
		return "off topic (relevance screen)"
	}
	r := strings.TrimPrefix(c.Reason, "not read: ")
	if i := strings.Index(r, " ("); i > 0 {
		r = r[:i]
	}
	if r == "" {
		r = "not read"
	}
	return r
}

// identifiedBy counts records by the route that identified them: the
// source searched, citation chasing, or the knowledge base.
func identifiedBy(recs []search.Record, origins []string, round int) []report.RouteCount {
	n := map[string]int{}
	var order []string
	for i, r := range recs {
		route := r.Source
		switch o := origins[i]; {
		case o == originKnowledge:
			route = originKnowledge
		case strings.HasPrefix(o, "reference of"), strings.HasPrefix(o, "cites"):
			route = report.RouteChasing
		case strings.HasPrefix(o, "search: "):
			route = strings.TrimPrefix(o, "search: ")
		}
		if route == "" {
			route = "unknown source"
		}
		if n[route] == 0 {
			order = append(order, route)
		}
		n[route]++
	}
	out := make([]report.RouteCount, 0, len(order))
	for _, route := range order {
		out = append(out, report.RouteCount{Route: route, Round: round, Records: n[route]})
	}
	return out
}
