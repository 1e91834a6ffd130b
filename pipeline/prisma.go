package pipeline

import (
	"fmt"
	"sort"
	"strings"

	"github.com/researchtui/researchtui/search"
)

// The PRISMA 2020 flow of a run: how many records each route identified,
// how many were duplicates, screened, excluded and why, sought, assessed
// and included. Every count comes from what the run stored (its research
// units' identification counts, its candidate ledger, what it read,
// analysed and cited), never from the model, and the boxes add up by
// construction: each work lands in exactly one box of each stage.

// RouteCount is how many records one route of identification returned in
// one round, before duplicates were removed.
type RouteCount struct {
	Route   string `json:"route"` // a source ("arxiv"), "citation chasing" or "knowledge base"
	Round   int    `json:"round"`
	Records int    `json:"records"`
}

// FlowReason is one reason for excluding records or reports, with its count.
type FlowReason struct {
	Reason string `json:"reason"`
	Count  int    `json:"count"`
}

// Flow is the PRISMA 2020 flow diagram's counts.
type Flow struct {
	// Identification: records per route and round (Databases: the
	// searched sources; Other: citation chasing, the knowledge base,
	// sources the reviewer's requests found).
	Databases  []RouteCount `json:"databases"`
	Other      []RouteCount `json:"other,omitempty"`
	Identified int          `json:"identified"`
	Duplicates int          `json:"duplicates_removed"`
	// Screening: distinct works ranked, those not read and why, those
	// sought for reading, those that could not be read.
	Screened     int          `json:"screened"`
	Excluded     int          `json:"excluded"`
	ExcludedWhy  []FlowReason `json:"excluded_reasons,omitempty"`
	Sought       int          `json:"sought"`
	NotRetrieved int          `json:"not_retrieved"`
	// Eligibility: works read (full text or abstract only), those left out
	// after reading and why, and those the report cites.
	Assessed         int          `json:"assessed"`
	AssessedFullText int          `json:"assessed_full_text"`
	AssessedAbstract int          `json:"assessed_abstract"`
	Reports          int          `json:"reports_excluded"`
	ReportsWhy       []FlowReason `json:"reports_excluded_reasons,omitempty"`
	Included         int          `json:"included"`
}

// Exclusion reasons after reading.
const (
	whyNotAnalysed   = "read, but no analysis was kept"
	whyLowConfidence = "analysed, with too little confidence to cite"
	whyNotCited      = "analysed, not cited by the report"
	whyNotRecorded   = "earlier runs (not counted by route)"
)

// routeChasing and routeReviewer name the identification routes that are
// not a search of a source.
const (
	routeChasing  = "citation chasing"
	routeReviewer = "reviewer's requests"
)

// checkpointFlow holds the run's flowLedger.
const checkpointFlow = "flow"

// flowLedger is what the flow needs that the candidate ledger does not
// hold: the records each route returned, and every analysis made (the
// writer sees only those kept).
type flowLedger struct {
	Identified []RouteCount `json:"identified"`
	Analysed   []string     `json:"analysed"`
	// AbstractsAsked and AbstractsFound count the works known by title
	// only whose abstracts were looked up, and those found (abstracts.go).
	AbstractsAsked int `json:"abstracts_asked,omitempty"`
	AbstractsFound int `json:"abstracts_found,omitempty"`
}

// runFlow counts the run's flow once its report cites the sources cited.
func (o *orchestrator) runFlow(cited []string) Flow {
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
			in.fullText[r.Key] = o.readAs(r.Key) == ReadFullText
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
	identified []RouteCount
	candidates []Candidate
	read       map[string]bool // works read (full text or abstract)
	fullText   map[string]bool // works read with their full text
	analysed   map[string]bool // every analysis made (kept or not)
	kept       map[string]bool // analyses kept for the writer
	cited      map[string]bool
}

// buildFlow counts the flow. A work's fate is decided once: its best
// state over every sub-question and round (read anywhere beats not read).
func buildFlow(in flowInput) Flow {
	var f Flow
	for _, rc := range mergeRoutes(in.identified) {
		if isDatabaseRoute(rc.Route) {
			f.Databases = append(f.Databases, rc)
		} else {
			f.Other = append(f.Other, rc)
		}
		f.Identified += rc.Records
	}
	sortRoutes(f.Databases)
	sortRoutes(f.Other)

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
		f.Other = append(f.Other, RouteCount{Route: routeReviewer, Records: extra})
		f.Identified += extra
	}
	f.Screened = len(works)
	if f.Identified < f.Screened { // units from before the flow was recorded
		f.Other = append(f.Other, RouteCount{Route: whyNotRecorded, Records: f.Screened - f.Identified})
		f.Identified = f.Screened
	}
	f.Duplicates = f.Identified - f.Screened

	excluded := map[string]int{}
	for k := range works {
		if !sought[k] {
			excluded[why[k]]++
		}
	}
	f.ExcludedWhy = reasons(excluded)
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
			left[whyNotCited]++
		case in.analysed[k]:
			left[whyLowConfidence]++
		default:
			left[whyNotAnalysed]++
		}
	}
	f.AssessedAbstract = f.Assessed - f.AssessedFullText
	f.ReportsWhy = reasons(left)
	f.Reports = f.Assessed - f.Included
	return f
}

// mergeRoutes sums the counts of each route and round (one per
// sub-question's search).
func mergeRoutes(rs []RouteCount) []RouteCount {
	type at struct {
		route string
		round int
	}
	n := map[at]int{}
	var out []RouteCount
	for _, r := range rs {
		k := at{r.Route, r.Round}
		if _, ok := n[k]; !ok {
			out = append(out, RouteCount{Route: r.Route, Round: r.Round})
		}
		n[k] += r.Records
	}
	for i := range out {
		out[i].Records = n[at{out[i].Route, out[i].Round}]
	}
	return out
}

// isDatabaseRoute: a searched source, not another way of finding works.
func isDatabaseRoute(route string) bool {
	switch route {
	case routeChasing, routeReviewer, originKnowledge, whyNotRecorded:
		return false
	}
	return true
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

// reasons lists counts by reason, largest first.
func reasons(m map[string]int) []FlowReason {
	out := make([]FlowReason, 0, len(m))
	for r, n := range m {
		out = append(out, FlowReason{r, n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Reason < out[j].Reason
	})
	return out
}

func sortRoutes(rs []RouteCount) {
	sort.SliceStable(rs, func(i, j int) bool {
		if rs[i].Round != rs[j].Round {
			return rs[i].Round < rs[j].Round
		}
		return rs[i].Route < rs[j].Route
	})
}

// Check says which of the flow's sums do not hold (nil: they all do).
func (f Flow) Check() error {
	var bad []string
	sum := func(rs []RouteCount) (n int) {
		for _, r := range rs {
			n += r.Records
		}
		return n
	}
	add := func(rs []FlowReason) (n int) {
		for _, r := range rs {
			n += r.Count
		}
		return n
	}
	if sum(f.Databases)+sum(f.Other) != f.Identified {
		bad = append(bad, "routes ≠ identified")
	}
	if f.Identified != f.Duplicates+f.Screened {
		bad = append(bad, "identified ≠ duplicates + screened")
	}
	if f.Screened != f.Excluded+f.Sought || add(f.ExcludedWhy) != f.Excluded {
		bad = append(bad, "screened ≠ excluded + sought")
	}
	if f.Sought != f.NotRetrieved+f.Assessed {
		bad = append(bad, "sought ≠ not retrieved + assessed")
	}
	if f.Assessed != f.AssessedFullText+f.AssessedAbstract {
		bad = append(bad, "assessed ≠ full text + abstract")
	}
	if f.Assessed != f.Reports+f.Included || add(f.ReportsWhy) != f.Reports {
		bad = append(bad, "assessed ≠ excluded reports + included")
	}
	if len(bad) > 0 {
		return fmt.Errorf("the flow does not add up: %s", strings.Join(bad, "; "))
	}
	return nil
}

// identifiedBy counts records by the route that identified them: the
// source searched, citation chasing, or the knowledge base.
func identifiedBy(recs []search.Record, origins []string, round int) []RouteCount {
	n := map[string]int{}
	var order []string
	for i, r := range recs {
		route := r.Source
		switch o := origins[i]; {
		case o == originKnowledge:
			route = originKnowledge
		case strings.HasPrefix(o, "reference of"), strings.HasPrefix(o, "cites"):
			route = routeChasing
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
	out := make([]RouteCount, 0, len(order))
	for _, route := range order {
		out = append(out, RouteCount{Route: route, Round: round, Records: n[route]})
	}
	return out
}
