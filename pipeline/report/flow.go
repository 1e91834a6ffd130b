package report

import (
	"fmt"
	"sort"
	"strings"
)

// The PRISMA 2020 flow's counts, and the sums that must hold between
// them (prisma.go counts them from a run's records).

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
	WhyNotAnalysed   = "read, but no analysis was kept"
	WhyLowConfidence = "analysed, with too little confidence to cite"
	WhyNotCited      = "analysed, not cited by the report"
	WhyNotRecorded   = "earlier runs (not counted by route)"
)

// RouteChasing and routeReviewer name the identification routes that are
// not a search of a source.
const (
	RouteChasing   = "citation chasing"
	RouteReviewer  = "reviewer's requests"
	RouteKnowledge = "knowledge base" // the person's own documents
)

// MergeRoutes sums the counts of each route and round (one per
// sub-question's search).
func MergeRoutes(rs []RouteCount) []RouteCount {
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

// IsDatabaseRoute: a searched source, not another way of finding works.
func IsDatabaseRoute(route string) bool {
	switch route {
	case RouteChasing, RouteReviewer, RouteKnowledge, WhyNotRecorded:
		return false
	}
	return true
}

// FlowReasons lists counts by reason, largest first.
func FlowReasons(m map[string]int) []FlowReason {
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

// SortRoutes orders routes by round, then by name.
func SortRoutes(rs []RouteCount) {
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
